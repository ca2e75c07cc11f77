package bench

import (
	"fmt"
	"strings"

	"github.com/ringo-ccl/ringo"
)

//go:generate go run golang.org/x/tools/cmd/stringer@v0.52.0 -type=Coll -linecomment -output=coll_string.go

// Coll is what a sweep times, named as nccl-tests names its programs: one
// of the library's ring collectives (ringo.Collective), or one of the
// point-to-point patterns nccl-tests times, which run through the
// library's point-to-point calls (SendRecv, AllToAll, Gather, Scatter).
type Coll uint8

const (
	AllReduce     Coll = iota // all_reduce
	ReduceScatter             // reduce_scatter
	AllGather                 // all_gather
	Broadcast                 // broadcast
	Reduce                    // reduce
	// SendRecv: each rank sends count elements to the next rank and
	// receives count from the previous one, in one group (sendrecv_perf).
	SendRecv // sendrecv
	// AllToAll: each rank sends count elements to every rank, itself too
	// (alltoall_perf; NCCL's count is per peer).
	AllToAll // alltoall
	Gather   // gather
	Scatter  // scatter
	numColls
)

// rings are the library's collectives that the ring collectives are.
var rings = [...]ringo.Collective{
	AllReduce: ringo.CollAllReduce, ReduceScatter: ringo.CollReduceScatter, AllGather: ringo.CollAllGather,
	Broadcast: ringo.CollBroadcast, Reduce: ringo.CollReduce,
}

// Ring returns the library's collective that c is, and whether c is one
// (false: c is point-to-point).
func (c Coll) Ring() (ringo.Collective, bool) {
	if int(c) < len(rings) {
		return rings[c], true
	}
	return 0, false
}

// Reduces reports whether c combines data with a reduction op.
func (c Coll) Reduces() bool {
	r, ok := c.Ring()
	return ok && r.Reduces()
}

// Rooted reports whether c has a root rank (Options.Root).
func (c Coll) Rooted() bool {
	return c == Broadcast || c == Reduce || c == Gather || c == Scatter
}

// BusFactor is the factor from algorithm to bus bandwidth on n ranks, as
// nccl-tests computes it: the ring collectives' (ringo.Collective's
// BusFactor), 1 for sendrecv, (n−1)/n for the others, whose data all but
// a rank's own block crosses a link.
func (c Coll) BusFactor(n int) float64 {
	if r, ok := c.Ring(); ok {
		return r.BusFactor(n)
	}
	if c == SendRecv {
		return 1
	}
	return float64(n-1) / float64(n)
}

// elems returns the elements of c's input and output buffers on n ranks
// for NCCL's count: the larger holds n blocks of count where c moves a
// block per rank.
func (c Coll) elems(count int64, n int) (in, out int64) {
	in, out = count, count
	switch c {
	case ReduceScatter, Scatter:
		in *= int64(n)
	case AllGather, Gather:
		out *= int64(n)
	case AllToAll:
		in, out = count*int64(n), count*int64(n)
	}
	return in, out
}

// blocks reports whether c's larger buffer holds a block of count per
// rank (NCCL's count is then the larger buffer's elements over n).
func (c Coll) blocks() bool {
	in, out := c.elems(1, 2)
	return max(in, out) > 1
}

// runsInPlace reports whether c has an in-place form the library runs:
// all but sendrecv and alltoall, whose in-place forms (one buffer both
// ways) it refuses, since its point-to-point calls never receive into
// memory they send from. nccl-tests times those two in place but does not
// check them.
func (c Coll) runsInPlace() bool { return c != SendRecv && c != AllToAll }

// ParseColls parses a comma-separated list of collective names —
// all_reduce, reduce_scatter, all_gather, broadcast, reduce (or the
// library's names: allreduce, …), sendrecv, alltoall, gather, scatter — or
// "all": the five ring collectives.
func ParseColls(s string) ([]Coll, error) {
	if strings.EqualFold(s, "all") {
		return []Coll{AllReduce, ReduceScatter, AllGather, Broadcast, Reduce}, nil
	}
	var out []Coll
	for _, name := range strings.Split(s, ",") {
		name = strings.ToLower(strings.TrimSpace(name))
		c, ok := collNamed(name)
		if !ok {
			var names []string
			for c := range numColls {
				names = append(names, c.String())
			}
			return nil, fmt.Errorf("unknown collective %q (%s, or all)", name, strings.Join(names, ", "))
		}
		out = append(out, c)
	}
	return out, nil
}

// collNamed returns the collective of a name: nccl-tests', or the
// library's for a ring collective.
func collNamed(name string) (Coll, bool) {
	for c := range numColls {
		r, ring := c.Ring()
		if name == c.String() || ring && name == r.String() {
			return c, true
		}
	}
	return 0, false
}
