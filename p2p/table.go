package p2p

import (
	"fmt"
	"slices"

	"github.com/ringo-ccl/ringo/kernels"
	"github.com/ringo-ccl/ringo/ring"
	"github.com/ringo-ccl/ringo/transport"
)

// Tables gives the connections of a communicator's GPU ranks their entries
// in each rank's connection table (kernels.Table): every call of Add is a
// round, whose new connections get entries in regions of their own. A
// rank's entries of one round sit in its region of that round in order,
// one Layout stride each; an entry holds the receive end of one connection
// and the send end of another on the same channel, paired (pair) so that a
// ring's channel c is one entry and a pair of ranks talking both ways on a
// channel share one.
//
// A rank's entries depend only on the rounds it takes part in, so the two
// ends of a connection agree on it whoever else takes part: every rank in
// a round of every rank (a collective's connections), or two ranks alone
// (a send and its receive). Tables of ranks in separate processes each
// know their own rank's table only; they learn the peers' entries of a
// round from the peers (Round.Learn).
type Tables struct {
	n    int
	have []map[transport.Edge]bool // per rank: the connections it has entries for
	tabs []kernels.Table
}

// Round is the entries one call of Tables.Add made.
type Round struct {
	// Entries are each rank's new entries, in its region's order (nil for
	// a rank that took no part, or whose entries are not known here); they
	// follow the rank's earlier entries in its table.
	Entries [][]kernels.Entry
}

// NewTables returns the empty tables of n ranks.
func NewTables(n int) *Tables {
	t := &Tables{n: n, have: make([]map[transport.Edge]bool, n), tabs: make([]kernels.Table, n)}
	for r := range t.have {
		t.have[r] = map[transport.Edge]bool{}
	}
	return t
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

// Add gives the connections of edges that rank has no entries for yet new
// entries, for each of ranks (nil: every rank) that is an end of one, in a
// new round, and returns it; nil when no rank got any. Both ends of every
// edge must be among ranks.
func (t *Tables) Add(edges []transport.Edge, ranks []int) (*Round, error) {
	if ranks == nil {
		ranks = make([]int, t.n)
		for r := range ranks {
			ranks[r] = r
		}
	}
	for _, e := range edges {
		if e.From < 0 || e.From >= t.n || e.To < 0 || e.To >= t.n || e.Ch < 0 || e.Ch >= kernels.MaxChannels {
			return nil, fmt.Errorf("p2p: connection %d→%d on channel %d in a communicator of %d ranks", e.From, e.To, e.Ch, t.n)
		}
		if !slices.Contains(ranks, e.From) || !slices.Contains(ranks, e.To) {
			return nil, fmt.Errorf("p2p: connection %d→%d in a round of ranks %v", e.From, e.To, ranks)
		}
	}
	r := &Round{Entries: make([][]kernels.Entry, t.n)}
	added := false
	for _, rank := range ranks {
		var fresh []transport.Edge
		for _, e := range edges {
			if (e.From == rank || e.To == rank) && !t.have[rank][e] {
				t.have[rank][e] = true
				fresh = append(fresh, e)
			}
		}
		r.Entries[rank] = pair(rank, fresh)
		for _, en := range r.Entries[rank] {
			if err := t.tabs[rank].Add(en); err != nil {
				return nil, err
			}
		}
		added = added || len(r.Entries[rank]) > 0
	}
	if !added {
		return nil, nil
	}
	return r, nil
}

// Table returns rank's table: its entries of every round so far.
func (t *Tables) Table(rank int) *kernels.Table { return &t.tabs[rank] }

// Learn records peer's entries of the round, as the peer said they are,
// after checking that they hold the ends of the connections rank's own
// entries of the round talk to peer through.
func (r *Round) Learn(rank, peer int, entries []kernels.Entry) error {
	for _, e := range entries {
		if e.Ch < 0 || e.Ch >= kernels.MaxChannels || e.Recv < -1 || e.Send < -1 {
			return fmt.Errorf("rank %d sent a malformed connection entry %+v", peer, e)
		}
	}
	prev := r.Entries[peer]
	r.Entries[peer] = entries
	for _, e := range r.Entries[rank] {
		if (e.Recv == peer && r.sender(transport.Edge{From: peer, To: rank, Ch: e.Ch}) < 0) ||
			(e.Send == peer && r.receiver(transport.Edge{From: rank, To: peer, Ch: e.Ch}) < 0) {
			r.Entries[peer] = prev
			return fmt.Errorf("rank %d has no entry for its connection with rank %d on channel %d", peer, rank, e.Ch)
		}
	}
	return nil
}

// sender returns the slot of connection e's send end in e.From's region
// of the round; receiver, of its receive end in e.To's; -1 when the round
// has none.
func (r *Round) sender(e transport.Edge) int {
	return slices.IndexFunc(r.Entries[e.From], func(x kernels.Entry) bool { return x.Ch == e.Ch && x.Send == e.To })
}

func (r *Round) receiver(e transport.Edge) int {
	return slices.IndexFunc(r.Entries[e.To], func(x kernels.Entry) bool { return x.Ch == e.Ch && x.Recv == e.From })
}

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
