package host

import (
	"fmt"
	"math/rand/v2"
	"testing"
	"time"

	"github.com/stretchr/testify/require"

	"github.com/ringo-ccl/ringo/internal/mem"
	"github.com/ringo-ccl/ringo/ring"
	"github.com/ringo-ccl/ringo/ring/ringtest"
	"github.com/ringo-ccl/ringo/transport"
)

// runP2P runs every rank's point-to-point plan of one group at once and
// checks every received element against its sender's, and that nothing
// else of the outputs changed. With segs, each rank's messages sit in
// buffers of their own (Job.InSegs, OutSegs).
func runP2P(t *testing.T, name string, w *world, plans []*ring.Plan, seq int, segs bool) {
	t.Helper()
	n := w.n
	const untouched = -7
	ins, outs := make([][]int32, n), make([][]int32, n)
	jobs := make([]Job, n)
	for r, p := range plans {
		ins[r] = make([]int32, p.P2P.InputLen())
		for i := range ins[r] {
			ins[r][i] = int32(seq<<24 | r<<16 | i)
		}
		outs[r] = make([]int32, p.P2P.OutputLen())
		for i := range outs[r] {
			outs[r][i] = untouched
		}
		jobs[r] = Job{Plan: p, In: mem.Bytes(ins[r]), Out: mem.Bytes(outs[r])}
		if segs {
			jobs[r].InSegs = segments(ins[r], p.P2P.Sends)
			jobs[r].OutSegs = segments(outs[r], p.P2P.Recvs)
			jobs[r].In, jobs[r].Out = nil, nil
		}
	}
	errsOut := w.runJobs(jobs, 20*time.Second)
	for r := range n {
		require.NoError(t, errsOut[r], "%s: rank %d", name, r)
	}
	for b := range n {
		want := make([]int32, len(outs[b]))
		for i := range want {
			want[i] = untouched
		}
		for a := range n {
			var sends, recvs []ring.Xfer
			for _, x := range plans[a].P2P.Sends {
				if x.Peer == b {
					sends = append(sends, x)
				}
			}
			for _, x := range plans[b].P2P.Recvs {
				if x.Peer == a {
					recvs = append(recvs, x)
				}
			}
			for k, x := range recvs {
				if x.Count == 0 {
					continue
				}
				copy(want[x.Off:x.Off+x.Count], ins[a][sends[k].Off:])
			}
		}
		require.Equal(t, want, outs[b], "%s: rank %d's output", name, b)
	}
}

// segments cuts buf into one segment per message (the gaps between them
// left out), as a group of separate buffers would give them, copying each
// back to buf when it is written: it returns views of buf itself.
func segments(buf []int32, xs []ring.Xfer) []Seg {
	var segs []Seg
	for _, x := range xs {
		if x.Count > 0 {
			segs = append(segs, Seg{Off: x.Off, Buf: mem.Bytes(buf[x.Off : x.Off+x.Count])})
		}
	}
	// sorted by offset, as Job requires
	for i := 1; i < len(segs); i++ {
		for j := i; j > 0 && segs[j].Off < segs[j-1].Off; j-- {
			segs[j], segs[j-1] = segs[j-1], segs[j]
		}
	}
	return segs
}

// TestP2PRandomGroups: random groups of every pattern — all-to-all,
// all-to-allv with zeros, gather, scatter, random pairs with several
// messages to one peer and to itself — run on the host executor with both
// protocols and 1 to 3 channels, their messages in one buffer or each in
// its own; then a ring all-reduce on the same connections, whose counters
// the groups left consistent.
func TestP2PRandomGroups(t *testing.T) {
	rng := rand.New(rand.NewPCG(20, 3))
	for _, n := range []int{1, 2, 3, 5} {
		for _, nch := range []int{1, 3} {
			w := newWorld(t, n, nch, smallSizes)
			for trial := range 12 {
				proto := []ring.Protocol{ring.Simple, ring.LL}[trial%2]
				buff := w.sizes.Simple
				if proto == ring.LL {
					buff = w.sizes.LL
				}
				pattern := trial % ringtest.NumPatterns
				sends, recvs := ringtest.P2PGroup(rng, n, pattern, []int64{5, 300, 3000}[rng.IntN(3)])
				g := ring.P2PSpec{Size: n, EltSize: 4, Channels: 1 + rng.IntN(nch), Proto: proto, BuffSize: buff}
				plans, err := ringtest.P2PPlans(g, sends, recvs)
				require.NoError(t, err)
				name := fmt.Sprintf("n%d ch%d trial %d %v pattern %d", n, g.Channels, trial, proto, pattern)
				runP2P(t, name, w, plans, trial, trial%3 == 2)
				if trial%4 == 3 {
					checkRun(t, name+" then allreduce", w, w.spec(ring.AllReduce, ring.Simple, 777, 4), rng, false)
				}
			}
		}
	}
}

// TestSendRecvInCollective: a collective made of SendRecv steps (an
// all-gather of pairwise exchanges) runs on the host executor.
func TestSendRecvInCollective(t *testing.T) {
	rng := rand.New(rand.NewPCG(20, 4))
	for _, proto := range []ring.Protocol{ring.Simple, ring.LL} {
		w := newWorld(t, 4, 2, transport.Sizes{Simple: 1 << 16, LL: 1 << 14})
		plans, err := ringtest.SendRecvAllGather(w.spec(ring.AllGather, proto, 60, 4))
		require.NoError(t, err)
		checkAllGather(t, proto.String(), w, plans, 60, rng)
	}
}
