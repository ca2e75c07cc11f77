package p2p

import (
	"fmt"
	"slices"

	"github.com/ringo-ccl/ringo/kernels"
	"github.com/ringo-ccl/ringo/ring"
	"github.com/ringo-ccl/ringo/transport"
)

// Tables gives the connections of a communicator's GPU ranks their entries
// in each rank's connection table (kernels.Table), the same on every rank:
// every call of Add is a round, whose new connections get entries in
// regions of their own. A rank's entries of one round sit in its region
// of that round in order, one Layout stride each; an entry holds the
// receive end of one connection and the send end of another on the same
// channel, paired (pair) so that a ring's channel c is one entry and a
// pair of ranks talking both ways on a channel share one.
type Tables struct {
	n    int
	have map[transport.Edge]bool
	tabs []kernels.Table
}

// Round is the entries one call of Tables.Add made.
type Round struct {
	// Entries are each rank's new entries, in its region's order.
	Entries [][]kernels.Entry
	// First is, per rank, the index in its table of its first new entry.
	First []int
	// slot holds, per connection, the slots in the round's regions of
	// its sender's entry and its receiver's.
	slot map[transport.Edge][2]int
}

// NewTables returns the empty tables of n ranks.
func NewTables(n int) *Tables {
	return &Tables{n: n, have: map[transport.Edge]bool{}, tabs: make([]kernels.Table, n)}
}

// Edges returns the connections of ring rg's channels as variant v runs
// them: each rank to its successor of the channel — or, on a ring of one,
// to itself, so that its channels have entries too.
func Edges(rg ring.Ring, v ring.Variant, nch int) []transport.Edge {
	if rg.Size() == 1 {
		edges := make([]transport.Edge, nch)
		for c := range edges {
			edges[c] = transport.Edge{From: rg.Order[0], To: rg.Order[0], Ch: c}
		}
		return edges
	}
	return transport.RingEdges(rg, v, nch)
}

// Add gives the connections of edges that no earlier round made entries
// in a new round, and returns it; nil when every edge has one already.
func (t *Tables) Add(edges []transport.Edge) (*Round, error) {
	var fresh []transport.Edge
	for _, e := range edges {
		if e.From < 0 || e.From >= t.n || e.To < 0 || e.To >= t.n || e.Ch < 0 || e.Ch >= kernels.MaxChannels {
			return nil, fmt.Errorf("p2p: connection %d→%d on channel %d in a communicator of %d ranks", e.From, e.To, e.Ch, t.n)
		}
		if !t.have[e] {
			t.have[e] = true
			fresh = append(fresh, e)
		}
	}
	if len(fresh) == 0 {
		return nil, nil
	}
	r := &Round{Entries: make([][]kernels.Entry, t.n), First: make([]int, t.n), slot: map[transport.Edge][2]int{}}
	for rank := range t.n {
		r.First[rank] = len(t.tabs[rank].Entries)
		r.Entries[rank] = pair(rank, fresh)
		for i, en := range r.Entries[rank] {
			if err := t.tabs[rank].Add(en); err != nil {
				return nil, err
			}
			if en.Send >= 0 {
				e := transport.Edge{From: rank, To: en.Send, Ch: en.Ch}
				s := r.slot[e]
				s[0] = i
				r.slot[e] = s
			}
			if en.Recv >= 0 {
				e := transport.Edge{From: en.Recv, To: rank, Ch: en.Ch}
				s := r.slot[e]
				s[1] = i
				r.slot[e] = s
			}
		}
	}
	return r, nil
}

// Table returns rank's table: its entries of every round so far.
func (t *Tables) Table(rank int) *kernels.Table { return &t.tabs[rank] }

// sender returns the slot of connection e's send end in e.From's region
// of the round; receiver, of its receive end in e.To's.
func (r *Round) sender(e transport.Edge) int   { return r.slot[e][0] }
func (r *Round) receiver(e transport.Edge) int { return r.slot[e][1] }

// pair returns rank's entries for the connections of edges it is an end
// of: per channel in order, a receive end and a send end with the same
// peer share an entry (peers in order), then the remaining receive and
// send ends pair up in their peers' order.
func pair(rank int, edges []transport.Edge) []kernels.Entry {
	ins, outs := map[int][]int{}, map[int][]int{} // per channel: peers
	var chans []int
	for _, e := range edges {
		if e.To == rank {
			ins[e.Ch] = append(ins[e.Ch], e.From)
		}
		if e.From == rank {
			outs[e.Ch] = append(outs[e.Ch], e.To)
		}
		if e.To == rank || e.From == rank {
			chans = append(chans, e.Ch)
		}
	}
	slices.Sort(chans)
	var entries []kernels.Entry
	for _, c := range slices.Compact(chans) {
		in, out := ins[c], outs[c]
		slices.Sort(in)
		slices.Sort(out)
		var restIn, restOut []int
		for _, p := range in {
			if _, ok := slices.BinarySearch(out, p); ok {
				entries = append(entries, kernels.Entry{Ch: c, Recv: p, Send: p})
			} else {
				restIn = append(restIn, p)
			}
		}
		for _, p := range out {
			if _, ok := slices.BinarySearch(in, p); !ok {
				restOut = append(restOut, p)
			}
		}
		for i := range max(len(restIn), len(restOut)) {
			e := kernels.Entry{Ch: c, Recv: -1, Send: -1}
			if i < len(restIn) {
				e.Recv = restIn[i]
			}
			if i < len(restOut) {
				e.Send = restOut[i]
			}
			entries = append(entries, e)
		}
	}
	return entries
}
