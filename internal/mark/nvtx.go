package mark

import (
	"fmt"

	"github.com/ringo-ccl/ringo/internal/cuda/nvtx"
	"github.com/ringo-ccl/ringo/reduce"
	"github.com/ringo-ccl/ringo/ring"
)

// nvtxNames marks a communicator's collectives as NVTX ranges (package
// nvtx; a no-op without the cuda tag): one range per call, from its entry
// to its end on the host path and to its enqueue on the GPU path (the
// kernels show beside it in Nsight), named for the call in NCCL's type
// names ("allreduce float sum"), in the category "rank N", with the call's
// bytes (count × datatype size) as payload. Names are registered once per
// communicator and kind of call.
type nvtxNames struct {
	category uint32 // rank+1: category 0 is "none"
	names    map[nvtxKey]nvtx.Message
}

type nvtxKey struct {
	coll ring.Collective
	dt   reduce.DataType
	op   reduce.OpKind
}

// nvtxColors are the collectives' colors (ARGB), by ring.Collective.
var nvtxColors = [...]uint32{0xff76b900, 0xff1f77b4, 0xffff7f0e, 0xff9467bd, 0xffd62728}

// newNVTX returns rank's range namer, or nil when no range is recorded.
func newNVTX(rank int) *nvtxNames {
	if !nvtx.Enabled() {
		return nil
	}
	n := &nvtxNames{category: uint32(rank) + 1, names: map[nvtxKey]nvtx.Message{}}
	nvtx.NameCategory(n.category, fmt.Sprintf("rank %d", rank))
	return n
}

// start starts the range of a call; end ends it. n may be nil.
func (n *nvtxNames) start(coll ring.Collective, dt reduce.DataType, op reduce.Op, count int64) nvtx.Range {
	if n == nil {
		return 0
	}
	k := nvtxKey{coll: coll, dt: dt}
	if coll.Reduces() {
		k.op = op.Kind()
	}
	m, ok := n.names[k]
	if !ok {
		name := coll.String() + " " + dt.String()
		if coll.Reduces() {
			name += " " + k.op.String()
		}
		m = nvtx.Register(name)
		n.names[k] = m
	}
	return nvtx.Start(m, nvtxColors[coll], n.category, uint64(count)*uint64(dt.Size()))
}

// end ends a range start returned. n may be nil.
func (n *nvtxNames) end(r nvtx.Range) {
	if n != nil {
		nvtx.End(r)
	}
}
