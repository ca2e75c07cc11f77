package p2p_test

import (
	"context"
	"fmt"
	"testing"

	"github.com/ringo-ccl/ringo/internal/mem"
	"github.com/ringo-ccl/ringo/kernels"
	"github.com/ringo-ccl/ringo/p2p"
	"github.com/ringo-ccl/ringo/rdma"
	"github.com/ringo-ccl/ringo/rdma/rdmatest"
	"github.com/ringo-ccl/ringo/ring"
	"github.com/ringo-ccl/ringo/transport"
	"github.com/ringo-ccl/ringo/transport/wiretest"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

var netLayout = p2p.Layout{SimpleBytes: ring.NSteps * 64 << 10, LLBytes: ring.NSteps * 1024}

// netChannels is how many channels the net tests' two ranks connect.
const netChannels = 2

// netEntries returns rank r's (of two) entries: one per channel, to and
// from the other rank.
func netEntries(t *testing.T, r int) []kernels.Entry {
	rd, err := p2p.NewTables(2).Add(p2p.Edges(ring.Identity(2), ring.RingVariant, netChannels), nil)
	require.NoError(t, err)
	require.Len(t, rd.Entries[r], netChannels)
	return rd.Entries[r]
}

func netBytes() int { return int(netLayout.Bytes(netChannels)) }

// TestNetConnsMatchViews: the addresses a GPU's kernel gets for a net
// connection (NetConns) are the words and slots the proxies watch
// (NetViews), when the regions' host and device addresses coincide.
func TestNetConnsMatchViews(t *testing.T) {
	own, mirror := mem.Alloc(netBytes(), 4096), mem.Alloc(netBytes(), 4096)
	entries := netEntries(t, 0)
	send, recv, err := netLayout.NetViews(entries, own, mirror)
	require.NoError(t, err)
	conns := netLayout.NetConns(entries, uint64(mem.Addr(own)), uint64(mem.Addr(mirror)))
	addr := func(b []byte) uint64 { return uint64(mem.Addr(b)) }
	for c, k := range conns {
		s, r := send[c], recv[c]
		checks := []struct {
			what      string
			got, want uint64
		}{
			{"SendTail", k.SendTail, uint64(addrOf(s.Tail()))},
			{"SendHead", k.SendHead, uint64(addrOf(s.Head()))},
			{"SendBuf", k.SendBuf, addr(s.SimpleSlots(0, 1))},
			{"SendLL", k.SendLL, uint64(addrOf(&s.LLSlot(0)[0]))},
			{"SendPosts", k.SendPosts, k.SendTail + 8},
			{"RecvTail", k.RecvTail, uint64(addrOf(r.Tail()))},
			{"RecvHead", k.RecvHead, uint64(addrOf(r.Head()))},
			{"RecvBuf", k.RecvBuf, addr(r.SimpleSlots(0, 1))},
			{"RecvLL", k.RecvLL, uint64(addrOf(&r.LLSlot(0)[0]))},
		}
		for _, x := range checks {
			if x.got != x.want {
				t.Errorf("channel %d: the kernel's %s is %#x, the proxy watches %#x", c, x.what, x.got, x.want)
			}
		}
	}
	if _, _, err := netLayout.NetViews(entries, own[:100], mirror); err == nil {
		t.Error("a short region was accepted")
	}
}

// TestNetViewsCarryPosts: two ranks' views, joined by a net transport's
// proxies, carry wiretest's scripts both ways (the test plays both GPUs
// through the views' own methods) — over sockets, and over RDMA wires (the
// fake fabric) registered on the regions' channel parts, as GPU ranks use
// them.
func TestNetViewsCarryPosts(t *testing.T) {
	sizes := transport.Sizes{Simple: netLayout.SimpleBytes, LL: netLayout.LLBytes}
	t.Run("sockets", func(t *testing.T) {
		viewsRing(t, func(ctx context.Context, ex transport.Exchanger, r int, _, _ []byte) ([]transport.SendWire, []transport.RecvWire, error) {
			se, re := viewEdges(r)
			return transport.ConnectSockets(ctx, ex, se, re, 2)
		})
	})
	t.Run("rdma", func(t *testing.T) {
		fabric := rdmatest.NewFabric()
		viewsRing(t, func(ctx context.Context, ex transport.Exchanger, r int, own, mirror []byte) ([]transport.SendWire, []transport.RecvWire, error) {
			var sm, rm [][]byte
			for c := range netChannels {
				sm, rm = append(sm, netLayout.EntryRegion(mirror, c)), append(rm, netLayout.EntryRegion(own, c))
			}
			se, re := viewEdges(r)
			w, err := rdma.Connect(ctx, ex, fabric, rdma.Port{Device: fmt.Sprint("fake_", r), Port: 1}, se, re, sizes, sm, rm, nil)
			if err != nil {
				return nil, nil, err
			}
			t.Cleanup(func() { w.Close() })
			return w.Sends, w.Recvs, nil
		})
	})
}

// viewsRing connects two ranks' net views with the wires wires makes and
// runs wiretest's scripts over them.
func viewsRing(t *testing.T, wires func(ctx context.Context, ex transport.Exchanger, r int, own, mirror []byte) ([]transport.SendWire, []transport.RecvWire, error)) {
	sizes := transport.Sizes{Simple: netLayout.SimpleBytes, LL: netLayout.LLBytes}
	nets, fails := wiretest.Connect(t, 2, func(ctx context.Context, ex transport.Exchanger, r int, fail func(error)) (*transport.Net, error) {
		own, mirror := mem.Alloc(netBytes(), 4096), mem.Alloc(netBytes(), 4096)
		send, recv, err := netLayout.NetViews(netEntries(t, r), own, mirror)
		if err != nil {
			return nil, err
		}
		sw, rw, err := wires(ctx, ex, r, own, mirror)
		if err != nil {
			return nil, err
		}
		se, re := viewEdges(r)
		var ends []transport.NetEnd
		for c := range netChannels {
			ends = append(ends, transport.NetEnd{Edge: se[c], Conn: send[c], Send: sw[c]}, transport.NetEnd{Edge: re[c], Conn: recv[c], Recv: rw[c]})
		}
		return transport.NewNet(r, ends, fail, nil)
	})
	wiretest.Ring(t, nets, netChannels, 200, sizes, fails)
}

// viewEdges returns rank r's (of two) edges on every channel of
// netLayout: to the other rank, and from it.
func viewEdges(r int) (sends, recvs []transport.Edge) {
	for c := range netChannels {
		sends = append(sends, transport.Edge{From: r, To: 1 - r, Ch: c})
		recvs = append(recvs, transport.Edge{From: 1 - r, To: r, Ch: c})
	}
	return sends, recvs
}

// wire returns every rank's wiring of every round of t's connections of
// edges (added as rounds, in order), regions of rank q in round k at
// (k+1)<<40 | q<<32 — as one process's ranks see each other.
func wire(t *testing.T, l p2p.Layout, n int, rounds ...[]transport.Edge) (*p2p.Tables, [][]kernels.Conn) {
	tabs := p2p.NewTables(n)
	conns := make([][]kernels.Conn, n)
	for k, edges := range rounds {
		rd, err := tabs.Add(edges, nil)
		require.NoError(t, err)
		require.NotNil(t, rd, "round %d adds connections", k)
		at := func(q int) uint64 { return uint64(k+1)<<40 | uint64(q)<<32 }
		for r := range n {
			require.Equal(t, len(conns[r]), len(tabs.Table(r).Entries)-len(rd.Entries[r]), "rank %d's round %d starts after its earlier entries", r, k)
			conns[r] = append(conns[r], l.Conns(rd, r, at)...)
		}
	}
	return tabs, conns
}

// requireEndsMeet: for every connection of edges, the sender's entry and
// the receiver's name the same tail, head, FIFOs — each end's in its own
// or the peer's region as the layout says — and each entry's state is its
// own.
func requireEndsMeet(t *testing.T, l p2p.Layout, table func(rank int) *kernels.Table, conns [][]kernels.Conn, edges []transport.Edge) {
	states := map[uint64]bool{}
	for r := range conns {
		for _, k := range conns[r] {
			require.False(t, states[k.State], "two entries share a state word")
			states[k.State] = true
		}
	}
	for _, e := range edges {
		si, ok := table(e.From).Send(e.Ch, e.To)
		require.True(t, ok, "%v has no send entry", e)
		ri, ok := table(e.To).Recv(e.Ch, e.From)
		require.True(t, ok, "%v has no receive entry", e)
		s, r := conns[e.From][si], conns[e.To][ri]
		assert.Equal(t, s.SendTail, r.RecvTail, "%v: tail", e)
		assert.Equal(t, s.SendHead, r.RecvHead, "%v: head", e)
		assert.Equal(t, s.SendBuf, r.RecvBuf, "%v: Simple FIFO", e)
		assert.Equal(t, s.SendLL, r.RecvLL, "%v: LL FIFO", e)
		assert.Equal(t, s.SendLL128, r.RecvLL128, "%v: LL128 FIFO", e)
		region := func(a uint64) int { return int(a>>32) & 0xff }
		assert.Equal(t, e.To, region(r.RecvTail), "%v: the tail is in the receiver's region", e)
		assert.Equal(t, e.From, region(s.SendHead), "%v: the head is in the sender's region", e)
		if l.Read {
			assert.Equal(t, e.From, region(s.SendBuf), "%v: read: Simple slots at the sender", e)
		} else {
			assert.Equal(t, e.To, region(s.SendBuf), "%v: write: Simple slots at the receiver", e)
		}
	}
}

// TestTablesRing: a ring's connections are one entry per channel, in
// channel order — entry c from the channel's predecessor, to its successor
// — and both ends of every connection meet, written or read, both ways
// round.
func TestTablesRing(t *testing.T) {
	for _, read := range []bool{false, true} {
		for _, v := range []ring.Variant{ring.RingVariant, ring.Bidirectional} {
			l := p2p.Layout{SimpleBytes: ring.NSteps * 4096, LLBytes: ring.NSteps * 1024, LL128Bytes: ring.NSteps * 2048, Read: read}
			rg := ring.Ring{Order: []int{2, 0, 3, 1}}
			edges := p2p.Edges(rg, v, 4)
			tabs, conns := wire(t, l, 4, edges)
			for r := range 4 {
				tab := tabs.Table(r)
				require.Len(t, tab.Entries, 4)
				for c, e := range tab.Entries {
					prev, next := ring.Neighbours(rg, v, c, r)
					assert.Equal(t, kernels.Entry{Ch: c, Recv: prev, Send: next}, e, "rank %d, variant %v", r, v)
				}
			}
			requireEndsMeet(t, l, tabs.Table, conns, edges)
		}
	}
}

// TestTablesAnyPeer: a later round adds the connections a schedule needs
// beyond the ring (every rank to every other), in entries after the
// ring's; every connection's ends meet; adding them again adds nothing;
// a connection to a rank outside the communicator is refused.
func TestTablesAnyPeer(t *testing.T) {
	l := p2p.Layout{SimpleBytes: ring.NSteps * 4096, LLBytes: ring.NSteps * 1024}
	rg := ring.Identity(4)
	ringEdges := p2p.Edges(rg, ring.RingVariant, 2)
	var all []transport.Edge
	for a := range 4 {
		for b := range 4 {
			if a != b {
				all = append(all, transport.Edge{From: a, To: b, Ch: 0})
			}
		}
	}
	tabs, conns := wire(t, l, 4, ringEdges, all)
	for r := range 4 {
		assert.Len(t, tabs.Table(r).Entries, 2+2, "rank %d: 2 ring entries, then 2 for the 4 new ends on channel 0", r)
	}
	requireEndsMeet(t, l, tabs.Table, conns, append(ringEdges, all...))
	rd, err := tabs.Add(all, nil)
	require.NoError(t, err)
	assert.Nil(t, rd, "no new connections, no round")
	_, err = tabs.Add([]transport.Edge{{From: 0, To: 4, Ch: 0}}, nil)
	require.ErrorContains(t, err, "0→4")
}

// TestTablesPairRounds: ranks in separate processes each keep their own
// tables. Two ranks connect alone (a pair round) twice, the others take no
// part; then every rank makes a collective round whose connections include
// theirs again, and more. Each rank's entries come from its own tables,
// its peers' from what they say (Round.Learn); both ends of every
// connection meet, and a peer that claims no end for a connection is
// refused.
func TestTablesPairRounds(t *testing.T) {
	l := p2p.Layout{SimpleBytes: ring.NSteps * 4096, LLBytes: ring.NSteps * 1024}
	const n = 4
	procs := make([]*p2p.Tables, n) // each rank's own
	for r := range procs {
		procs[r] = p2p.NewTables(n)
	}
	conns := make([][]kernels.Conn, n)
	k := 0
	round := func(ranks []int, edges []transport.Edge) {
		k++
		at := func(q int) uint64 { return uint64(k)<<40 | uint64(q)<<32 }
		rds := map[int]*p2p.Round{}
		for _, r := range ranks {
			rd, err := procs[r].Add(edges, ranks)
			require.NoError(t, err)
			rds[r] = rd
		}
		for _, r := range ranks {
			rd := rds[r]
			if rd == nil {
				continue
			}
			for _, q := range ranks {
				if q != r && rds[q] != nil {
					require.NoError(t, rd.Learn(r, q, rds[q].Entries[q]))
				}
			}
			conns[r] = append(conns[r], l.Conns(rd, r, at)...)
		}
	}
	both := func(a, b, ch int) []transport.Edge {
		return []transport.Edge{{From: a, To: b, Ch: ch}, {From: b, To: a, Ch: ch}}
	}
	var every []transport.Edge
	round([]int{1, 3}, both(1, 3, 0))
	every = append(every, both(1, 3, 0)...)
	round([]int{1, 3}, append(both(1, 3, 0), both(1, 3, 1)...)) // one new connection pair
	every = append(every, both(1, 3, 1)...)
	var all []transport.Edge
	for a := range n {
		for b := range n {
			if a != b {
				all = append(all, transport.Edge{From: a, To: b, Ch: 0})
			}
		}
	}
	round([]int{0, 1, 2, 3}, all)
	every = append(every, all...)
	requireEndsMeet(t, l, func(r int) *kernels.Table { return procs[r].Table(r) }, conns, every)
	assert.Len(t, procs[1].Table(1).Entries, 1+1+2, "rank 1: 1 with rank 3 on each channel, then 2 for 4 new ends")

	rd, err := p2p.NewTables(2).Add(both(0, 1, 0), nil)
	require.NoError(t, err)
	require.ErrorContains(t, rd.Learn(0, 1, []kernels.Entry{{Ch: 1, Recv: 0, Send: 0}}), "rank 1 has no entry for its connection with rank 0 on channel 0")
	require.ErrorContains(t, rd.Learn(0, 1, []kernels.Entry{{Ch: -2}}), "malformed")
}

// TestEdgesOfOne: a ring of one connects each channel to itself, so its
// table has an entry per channel.
func TestEdgesOfOne(t *testing.T) {
	rd, err := p2p.NewTables(1).Add(p2p.Edges(ring.Identity(1), ring.RingVariant, 3), nil)
	require.NoError(t, err)
	require.Equal(t, []kernels.Entry{{Ch: 0, Recv: 0, Send: 0}, {Ch: 1, Recv: 0, Send: 0}, {Ch: 2, Recv: 0, Send: 0}}, rd.Entries[0])
}

func addrOf[T any](p *T) uintptr { return mem.AddrOf(p) }
