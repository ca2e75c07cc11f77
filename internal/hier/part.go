package hier

import (
	"errors"
	"fmt"

	"github.com/ringo-ccl/ringo/reduce"
	"github.com/ringo-ccl/ringo/ring"
)

// Sub is what a part asks of its sub-communicators.
type Sub interface {
	Close() error
	Abort()
	Err() error
}

// Part is a rank's part in the hierarchical variant: the communicators of
// its group (Intra) and of its column (Inter), the group's index and the
// rank's position in it (its rank in Intra).
//
// An all-reduce of count elements runs as a reduce-scatter of the first
// count − count%Size elements inside the group, landing in this rank's
// segment of the output; an all-reduce of that segment along the column; an
// all-gather of the segments inside the group, in place; and the
// count%Size tail as the parent's flat ring. No scratch memory: each phase
// works in the output buffer, in NCCL's in-place layouts.
type Part[C Sub] struct {
	Intra, Inter C
	Group, Pos   int
	Size         int // ranks per group
}

// Covers reports whether an all-reduce of count elements with op kind k
// runs hierarchically; h may be nil (no hierarchy: never). PreMulSum and
// Avg would apply their scalar or divisor once per phase, so they run the
// flat ring; so does a message smaller than a group.
func (h *Part[C]) Covers(coll ring.Collective, k reduce.OpKind, count int64) bool {
	if h == nil || coll != ring.AllReduce || count < int64(h.Size) {
		return false
	}
	return k == reduce.Sum || k == reduce.Prod || k == reduce.Max || k == reduce.Min
}

// Segments returns how an all-reduce of count elements splits: each
// rank's segment (seg elements, this rank's at Pos·seg) and the elements
// the phases cover (main = seg·Size); the rest, count − main, is the tail.
func (h *Part[C]) Segments(count int64) (seg, main int64) {
	seg = count / int64(h.Size)
	return seg, seg * int64(h.Size)
}

// Where names a phase of this rank, for its errors.
func (h *Part[C]) Where(phase string) string {
	return fmt.Sprintf("hierarchical %s (group %d, position %d)", phase, h.Group, h.Pos)
}

// Close closes both sub-communicators.
func (h *Part[C]) Close() error { return errors.Join(h.Intra.Close(), h.Inter.Close()) }

// Abort aborts both sub-communicators.
func (h *Part[C]) Abort() {
	h.Intra.Abort()
	h.Inter.Abort()
}

// Err returns the error that broke a sub-communicator, or nil.
func (h *Part[C]) Err() error {
	if err := h.Intra.Err(); err != nil {
		return err
	}
	return h.Inter.Err()
}
