package ring_test

import (
	"bytes"
	"math"
	"math/rand/v2"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/ringo-ccl/ringo/ring"
	"github.com/ringo-ccl/ringo/ring/ringtest"
)

func p2pGeom(n, nch int, proto ring.Protocol, elt int) ring.P2PSpec {
	buff := 8 * 512
	if proto == ring.LL {
		buff = 8 * 256
	}
	return ring.P2PSpec{Size: n, EltSize: elt, Channels: nch, Proto: proto, BuffSize: buff}
}

// TestP2PRandomGroupsVerify: every pattern of random groups — all-to-all,
// all-to-allv with zeros, gather, scatter, random pairs with several
// messages to one peer and to itself — on 1 to 6 ranks, 1 to 3 channels,
// Simple, LL, and Simple with the small messages by LL, each Simple one
// also direct (the receiver posting its output's addresses, the sender
// waiting for them) and some of those in tiles (a stripe), with messages from empty to many chunks long, runs to
// completion and delivers every message to its receive (Verify).
func TestP2PRandomGroupsVerify(t *testing.T) {
	rng := rand.New(rand.NewPCG(20, 1))
	tiled := 0
	for trial := range 400 {
		n := 1 + rng.IntN(6)
		pattern := trial % ringtest.NumPatterns
		g := p2pGeom(n, 1+rng.IntN(3), []ring.Protocol{ring.Simple, ring.LL}[rng.IntN(2)], []int{1, 2, 4, 8}[rng.IntN(4)])
		if g.Proto == ring.Simple && rng.IntN(2) == 0 { // small messages by LL, the rest by Simple
			g.LLMax, g.LLBuffSize = []int64{1, 20, 200}[rng.IntN(3)], 8*256
		}
		g.Direct = g.Proto == ring.Simple && rng.IntN(2) == 0
		if g.Direct {
			g.Stripe = []int64{0, 24, 100, 250}[rng.IntN(4)]
		}
		sends, recvs := ringtest.P2PGroup(rng, n, pattern, []int64{3, 100, 2000}[rng.IntN(3)])
		plans, err := ringtest.P2PPlans(g, sends, recvs)
		require.NoError(t, err, "trial %d", trial)
		require.NoError(t, ring.Verify(plans), "trial %d: pattern %d, %+v\nsends %v\nrecvs %v", trial, pattern, g, sends, recvs)
		for _, p := range plans {
			for _, ch := range p.Channels {
				for _, st := range ch.Steps {
					if st.Tile > 0 {
						tiled++
					}
				}
			}
		}
	}
	assert.Greater(t, tiled, 100, "steps in tiles")
}

// TestP2PStripes: with a stripe, a direct message of parts of at least
// P2PStripeMinTiles tiles is dealt to its parts a tile at a time — tiles
// of Stripe/parts elements, the parts' tiles that many apart, a part's
// first tile at its place in the message — and every element arrives;
// its copy to itself goes alike; a smaller message's parts stay whole,
// and so do a message's without a stripe or not direct. Verify catches
// tiles where they cannot be and a sender's tiles that are not its
// receiver's; a schedule, which cannot carry tiles, refuses them.
func TestP2PStripes(t *testing.T) {
	const nch, stripe = 8, 64 << 10
	g := p2pGeom(2, nch, ring.Simple, 1)
	g.BuffSize, g.Direct, g.Stripe = 1<<22, true, stripe
	big := int64(512<<10 + 5)
	tile := int64(stripe / nch)
	sends := [][]ring.Xfer{{{Peer: 1, Count: big}, {Peer: 0, Off: big, Count: big}}, {{Peer: 0, Count: 40 << 10}}}
	recvs := [][]ring.Xfer{{{Peer: 1, Count: 40 << 10}, {Peer: 0, Off: 40 << 10, Count: big}}, {{Peer: 0, Count: big}}}
	plans, err := ringtest.P2PPlans(g, sends, recvs)
	require.NoError(t, err)
	require.NoError(t, ring.Verify(plans))
	var sent, copied int64
	for c, ch := range plans[0].Channels {
		for _, st := range ch.Steps {
			switch {
			case st.Prim == ring.Copy:
				copied += st.Count
				assert.Equal(t, big+int64(c)*tile, st.InOff, "channel %d's copy starts at its first tile", c)
				assert.Equal(t, int64(40<<10)+int64(c)*tile, st.OutOff, "channel %d's copy lands at its first tile", c)
			case st.Prim.Sends():
				sent += st.Count
				assert.Equal(t, int64(c)*tile, st.InOff, "channel %d's part starts at its first tile", c)
			}
			if st.Prim == ring.Copy || st.Prim.Sends() {
				assert.Equal(t, [2]int64{tile, nch * tile}, [2]int64{st.Tile, st.Stride}, "channel %d's %v", c, st.Prim)
			}
		}
	}
	assert.Equal(t, [2]int64{big, big}, [2]int64{sent, copied})
	for _, st := range plans[1].Channels[0].Steps {
		assert.Zero(t, st.Tile, "40 KiB in 5 parts: fewer than %d tiles a part", ring.P2PStripeMinTiles)
	}

	_, err = ring.NewSchedule(plans)
	assert.ErrorContains(t, err, "rank 0 channel 0 step 0 goes in tiles (P2PSpec.Stripe), which a schedule does not carry")

	var pieces [][2]int64
	for off, n := range plans[0].Channels[0].Steps[0].Pieces(2*tile + 3) {
		pieces = append(pieces, [2]int64{off, n})
	}
	assert.Equal(t, [][2]int64{{0, tile}, {nch * tile, tile}, {2 * nch * tile, 3}}, pieces)

	for _, off := range []ring.P2PSpec{{Stripe: 0, Direct: true}, {Stripe: 0, Direct: false}} {
		h := g
		h.Stripe, h.Direct = off.Stripe, off.Direct
		plans, err := ringtest.P2PPlans(h, sends, recvs)
		require.NoError(t, err)
		require.NoError(t, ring.Verify(plans))
		for _, ch := range plans[0].Channels {
			for _, st := range ch.Steps {
				assert.Zero(t, st.Tile, "stripe %d, direct %v", h.Stripe, h.Direct)
			}
		}
	}

	for _, tc := range []struct {
		change func(p []*ring.Plan)
		want   string
	}{
		{func(p []*ring.Plan) { p[0].Channels[1].Steps[0].Stride = tile }, "at least two"},
		{func(p []*ring.Plan) { p[0].Channels[1].Steps[0].Tile = 3 }, "a positive multiple of 16 elements, a whole number of tiles apart"},
		{func(p []*ring.Plan) { p[0].P2P.Stripe = 0 }, "in a plan without a stripe"},
		{func(p []*ring.Plan) { st := &p[0].Channels[1].Steps[1]; st.Tile, st.Stride = tile/2, nch*tile/2 }, "written twice"},
	} {
		plans, err := ringtest.P2PPlans(g, sends, recvs)
		require.NoError(t, err)
		tc.change(plans)
		assert.ErrorContains(t, ring.Verify(plans), tc.want)
	}
}

// TestP2PSchedule: the shape NCCL's group scheduling gives: round d sends
// to r+d and receives from r−d, paired in SendRecv steps, the longer side's
// remaining chunks alone; a send to itself is a copy.
func TestP2PSchedule(t *testing.T) {
	g := p2pGeom(3, 1, ring.Simple, 4)
	g.Rank = 1
	g.Sends = []ring.Xfer{{Peer: 2, Off: 0, Count: 10}, {Peer: 1, Off: 10, Count: 5}, {Peer: 0, Off: 20, Count: 3}}
	g.Recvs = []ring.Xfer{{Peer: 0, Off: 0, Count: 7}, {Peer: 1, Off: 8, Count: 5}}
	p, err := ring.NewP2P(g)
	require.NoError(t, err)
	cap := p.SliceCapElems
	assert.Equal(t, []ring.Step{
		{Prim: ring.Copy, RecvPeer: -1, SendPeer: -1, InOff: 10, OutOff: 8, Count: 5, SliceLen: 5},
		{Prim: ring.SendRecv, RecvPeer: 0, SendPeer: 2, InOff: 0, OutOff: 0, Count: 10, RecvCount: 7, SliceLen: cap},
		{Prim: ring.Send, RecvPeer: -1, SendPeer: 0, InOff: 20, Count: 3, SliceLen: cap},
	}, p.Channels[0].Steps)
	assert.Equal(t, int64(23), g.InputLen())
	assert.Equal(t, int64(13), g.OutputLen())

	// A message of many chunks spreads over the channels, chunk j of
	// message k on channel (k+j) mod channels, the same at both ends.
	g = p2pGeom(2, 3, ring.Simple, 4)
	big := 5*p.ChunkCount + 3
	sends := [][]ring.Xfer{{{Peer: 1, Count: 1}, {Peer: 1, Off: 1, Count: big}}, nil}
	recvs := [][]ring.Xfer{nil, {{Peer: 0, Count: 1}, {Peer: 0, Off: 1, Count: big}}}
	plans, err := ringtest.P2PPlans(g, sends, recvs)
	require.NoError(t, err)
	require.NoError(t, ring.Verify(plans))
	for c := range 3 {
		assert.Len(t, plans[0].Channels[c].Steps, len(plans[1].Channels[c].Steps), "channel %d", c)
		assert.NotEmpty(t, plans[0].Channels[c].Steps, "channel %d", c)
	}
	assert.Equal(t, int64(1), plans[0].Channels[0].Steps[0].Count, "message 0 on channel 0")
	assert.Equal(t, int64(1), plans[0].Channels[1].Steps[0].InOff, "message 1 starts on channel 1")
}

// TestP2PParts: a message stays on one channel up to P2PMinPart bytes
// and spreads in parts of at least that much above; one that moves
// directly spreads in parts of P2PDirectMinPart, and its part of a channel
// is one step however many FIFO chunks it would fill.
func TestP2PParts(t *testing.T) {
	for _, tc := range []struct {
		direct bool
		bytes  int64
		want   int // channels with steps
	}{
		{false, ring.P2PMinPart, 1},
		{false, 2 * ring.P2PMinPart, 2},
		{false, 100 * ring.P2PMinPart, 16},
		{true, ring.P2PDirectMinPart, 1},
		{true, 4 * ring.P2PDirectMinPart, 4},
		{true, 4*ring.P2PDirectMinPart + 1, 5},
		{true, 100 * ring.P2PDirectMinPart, 16},
	} {
		g := p2pGeom(2, 16, ring.Simple, 1)
		g.BuffSize, g.Direct = 1<<20, tc.direct
		if tc.direct { // chunks of 32 KiB: the largest part fills two
			g.BuffSize = 64 << 10
		}
		sends := [][]ring.Xfer{{{Peer: 1, Count: tc.bytes}}, nil}
		recvs := [][]ring.Xfer{nil, {{Peer: 0, Count: tc.bytes}}}
		plans, err := ringtest.P2PPlans(g, sends, recvs)
		require.NoError(t, err)
		require.NoError(t, ring.Verify(plans))
		used := 0
		for _, ch := range plans[0].Channels {
			if len(ch.Steps) == 0 {
				continue
			}
			used++
			if tc.direct {
				assert.Len(t, ch.Steps, 1, "%d bytes: a direct part is one step", tc.bytes)
			}
		}
		if tc.direct && tc.want == 16 {
			require.Greater(t, tc.bytes/16, plans[0].ChunkCount)
			assert.Equal(t, int64(tc.bytes/16), plans[0].Channels[0].Steps[0].Count, "a direct part larger than a FIFO's chunk")
		}
		assert.Equal(t, tc.want, used, "%d bytes, direct %v", tc.bytes, tc.direct)
	}
}

// TestP2PLLHalves: under a Simple plan with an LL threshold, a message of
// at most LLMax elements goes by LL (NCCL_P2P_LL_THRESHOLD), in chunks of
// one LL slot, each half of a step by its own message's protocol; both
// ends agree, and Verify catches ends that do not.
func TestP2PLLHalves(t *testing.T) {
	g := p2pGeom(2, 1, ring.Simple, 4)
	g.LLMax, g.LLBuffSize = 64, 8*256 // an LL slot carries 128 bytes: 32 elements
	// Rank 0 sends 40 elements (LL, two chunks) and 100 (Simple); rank 1
	// sends 100 (Simple) and 10 (LL).
	sends := [][]ring.Xfer{{{Peer: 1, Count: 40}, {Peer: 1, Off: 40, Count: 100}}, {{Peer: 0, Count: 100}, {Peer: 0, Off: 100, Count: 10}}}
	recvs := [][]ring.Xfer{{{Peer: 1, Count: 100}, {Peer: 1, Off: 100, Count: 10}}, {{Peer: 0, Count: 40}, {Peer: 0, Off: 40, Count: 100}}}
	plans, err := ringtest.P2PPlans(g, sends, recvs)
	require.NoError(t, err)
	require.NoError(t, ring.Verify(plans))
	var halves [2][2]int // [rank][LL send halves, LL receive halves]
	for r, p := range plans {
		for _, st := range p.Channels[0].Steps {
			if st.SendLL {
				halves[r][0]++
				assert.LessOrEqual(t, st.Count, int64(32), "an LL chunk fits one slot")
			}
			if st.RecvLL {
				halves[r][1]++
			}
		}
	}
	assert.Equal(t, [2][2]int{{2, 1}, {1, 2}}, halves, "40 elements in two LL chunks, 10 in one")
	mixed := plans[0].Channels[0].Steps[0]
	assert.True(t, mixed.SendLL && !mixed.RecvLL, "the first step sends by LL and receives by Simple: %+v", mixed)

	// One end thinking a message goes by the other protocol is caught.
	plans[1].Channels[0].Steps[0].RecvLL = false
	assert.ErrorContains(t, ring.Verify(plans), "receives a unit of")

	// So is one end thinking a Simple message goes directly: the sender
	// waits for addresses never posted (a deadlock), or the receiver meets
	// a unit through the FIFO.
	for r := range plans {
		direct := g
		direct.Direct = true
		plans, err := ringtest.P2PPlans(direct, sends, recvs)
		require.NoError(t, err)
		require.NoError(t, ring.Verify(plans), "both ends direct")
		plans[r].P2P.Direct = false
		assert.Error(t, ring.Verify(plans), "rank %d not direct", r)
	}

	for _, tc := range []struct {
		change func(s *ring.P2PSpec)
		want   string
	}{
		{func(s *ring.P2PSpec) { s.LLMax = -1 }, "LL threshold of -1 elements is negative"},
		{func(s *ring.P2PSpec) { s.Proto, s.BuffSize = ring.LL, 8*256 }, "only a Simple plan sends its small messages by LL"},
		{func(s *ring.P2PSpec) { s.LLBuffSize = 0 }, "LL FIFO of 0 bytes holds no 4-byte element per slot"},
		{func(s *ring.P2PSpec) { s.Proto, s.BuffSize, s.LLMax, s.Direct = ring.LL, 8*256, 0, true }, "only a Simple plan moves its large messages directly"},
		{func(s *ring.P2PSpec) { s.Direct, s.Stripe = true, -1 }, "stripe of -1 elements is negative"},
		{func(s *ring.P2PSpec) { s.Stripe = 1 << 20 }, "only a direct message goes in tiles"},
	} {
		bad := g
		tc.change(&bad)
		_, err := ring.NewP2P(bad)
		require.ErrorIs(t, err, ring.ErrInvalid)
		assert.ErrorContains(t, err, tc.want)
	}
}

// TestP2PRefusals: every bad spec is an error naming what is wrong.
func TestP2PRefusals(t *testing.T) {
	for _, tc := range []struct {
		name         string
		sends, recvs []ring.Xfer
		size         int
		want         string
	}{
		{"peer out of range", []ring.Xfer{{Peer: 3, Count: 1}}, nil, 3, "send 0: peer 3 outside [0, 3)"},
		{"negative peer", nil, []ring.Xfer{{Peer: -1, Count: 1}}, 3, "recv 0: peer -1 outside"},
		{"negative count", []ring.Xfer{{Peer: 1, Count: -2}}, nil, 3, "send 0: count -2 is negative"},
		{"negative offset", nil, []ring.Xfer{{Peer: 1, Off: -1, Count: 2}}, 3, "recv 0: offset -1 is negative"},
		{"overflow", []ring.Xfer{{Peer: 1, Off: math.MaxInt64 / 8, Count: 2}}, nil, 3, "overflows"},
		{"self-send alone", []ring.Xfer{{Peer: 0, Count: 4}}, nil, 3, "send 0 to itself (4 elements) has no matching receive"},
		{"self-recv alone", nil, []ring.Xfer{{Peer: 0, Count: 4}}, 3, "receive 0 from itself (4 elements) has no matching send"},
		{"self counts differ", []ring.Xfer{{Peer: 0, Count: 4}}, []ring.Xfer{{Peer: 0, Count: 5}}, 3, "send 0 to itself has 4 elements, its receive 0 from itself 5"},
		{"no ranks", nil, nil, 0, "0 ranks"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			g := p2pGeom(tc.size, 1, ring.Simple, 8)
			g.Sends, g.Recvs = tc.sends, tc.recvs
			_, err := ring.NewP2P(g)
			require.ErrorIs(t, err, ring.ErrInvalid)
			assert.Contains(t, err.Error(), tc.want)
		})
	}
	_, err := ring.New(ring.Spec{Coll: ring.SendRecvs, Ring: ring.Identity(2), EltSize: 4, Channels: 1, Proto: ring.Simple, BuffSize: 4096})
	require.ErrorIs(t, err, ring.ErrInvalid)
	assert.Contains(t, err.Error(), "NewP2P")
}

// TestP2PVerifyCatches: Verify refuses groups whose messages do not match
// and plans that would hang or deliver wrongly.
func TestP2PVerifyCatches(t *testing.T) {
	g := p2pGeom(2, 1, ring.Simple, 4)
	build := func(sends, recvs [][]ring.Xfer) []*ring.Plan {
		plans, err := ringtest.P2PPlans(g, sends, recvs)
		require.NoError(t, err)
		return plans
	}
	err := ring.Verify(build([][]ring.Xfer{{{Peer: 1, Count: 5}}, nil}, [][]ring.Xfer{nil, {{Peer: 0, Count: 6}}}))
	assert.ErrorContains(t, err, "rank 0's send 0 to rank 1 has 5 elements, rank 1's receive 0 from rank 0 6")
	err = ring.Verify(build([][]ring.Xfer{{{Peer: 1, Count: 5}}, nil}, [][]ring.Xfer{nil, nil}))
	assert.ErrorContains(t, err, "rank 0 sends 1 messages to rank 1, which receives 0")
	err = ring.Verify(build([][]ring.Xfer{nil, {{Peer: 0, Count: 3}, {Peer: 0, Count: 3}}}, [][]ring.Xfer{{{Peer: 1, Count: 3}, {Peer: 1, Off: 1, Count: 3}}, nil}))
	assert.ErrorContains(t, err, "rank 0 receives element 1 of its output twice")

	plans := build([][]ring.Xfer{{{Peer: 1, Count: 50}}, {{Peer: 0, Off: 1, Count: 50}}}, [][]ring.Xfer{{{Peer: 1, Count: 50}}, {{Peer: 0, Count: 50}}})
	require.NoError(t, ring.Verify(plans))
	st := &plans[1].Channels[0].Steps[0]
	st.InOff-- // delivers the wrong elements
	assert.ErrorContains(t, ring.Verify(plans), "rank 0 output element 0 holds element 0 from 1 ranks (0x2), want element 1")
	st.InOff++
	st.Prim, st.SendPeer, st.Count, st.RecvCount = ring.Recv, -1, 50, 0 // never sends: rank 0 waits
	assert.ErrorContains(t, ring.Verify(plans), "deadlocks")
}

// TestSendRecvInCollectives: a collective's plans may use SendRecv steps
// (an all-gather of pairwise exchanges): Verify accepts them, and they
// survive the schedule format with their receive counts; recv_count on
// another primitive is refused.
func TestSendRecvInCollectives(t *testing.T) {
	for _, spec := range []ring.Spec{
		{Coll: ring.AllGather, Ring: ring.Identity(4), Count: 96, EltSize: 4, Channels: 2, Proto: ring.Simple, BuffSize: 8 * 1024},
		{Coll: ring.AllGather, Ring: ring.Identity(3), Count: 40, EltSize: 2, Channels: 1, Proto: ring.LL, BuffSize: 8 * 512},
	} {
		plans, err := ringtest.SendRecvAllGather(spec)
		require.NoError(t, err)
		require.NoError(t, ring.Verify(plans))
		got := roundTrip(t, plans)
		for r := range plans {
			assert.Equal(t, plans[r].Channels, got[r].Channels, "rank %d", r)
		}
		plans[1].Channels[0].Steps[1].RecvCount-- // receives less than is sent
		assert.ErrorContains(t, ring.Verify(plans), "expected")
	}
	plans, err := ringtest.DirectAllGather(ring.Spec{Coll: ring.AllGather, Ring: ring.Identity(2), Count: 8, EltSize: 4, Channels: 1, Proto: ring.Simple, BuffSize: 8 * 1024})
	require.NoError(t, err)
	d, err := ring.NewSchedule(plans)
	require.NoError(t, err)
	d.Ranks[0].Channels[0].Steps[0].RecvCount = 3
	_, err = d.Plans()
	assert.ErrorContains(t, err, "recv_count on a copySend (sendRecv's only)")
}

// TestP2PScheduleRoundTrip: point-to-point plans survive the schedule
// format, messages included, and are checked when read back.
func TestP2PScheduleRoundTrip(t *testing.T) {
	rng := rand.New(rand.NewPCG(20, 2))
	for pattern := range ringtest.NumPatterns {
		g := p2pGeom(4, 2, ring.Simple, 4)
		sends, recvs := ringtest.P2PGroup(rng, 4, pattern, 300)
		plans, err := ringtest.P2PPlans(g, sends, recvs)
		require.NoError(t, err)
		got := roundTrip(t, plans)
		for r := range plans {
			assert.Equal(t, plans[r].Channels, got[r].Channels, "pattern %d rank %d", pattern, r)
			assert.Equal(t, plans[r].P2P, got[r].P2P, "pattern %d rank %d", pattern, r)
		}
	}
	plans, err := ringtest.P2PPlans(p2pGeom(2, 1, ring.Simple, 4), [][]ring.Xfer{{{Peer: 1, Count: 9}}, nil}, [][]ring.Xfer{nil, {{Peer: 0, Count: 9}}})
	require.NoError(t, err)
	d, err := ring.NewSchedule(plans)
	require.NoError(t, err)
	d.Ranks[1].Recvs[0].Count = 8
	_, err = d.Plans()
	assert.ErrorContains(t, err, "rank 1's receive 0 from rank 0 8")
}

func roundTrip(t *testing.T, plans []*ring.Plan) []*ring.Plan {
	t.Helper()
	d, err := ring.NewSchedule(plans)
	require.NoError(t, err)
	var buf bytes.Buffer
	require.NoError(t, d.Write(&buf))
	back, err := ring.ReadSchedule(bytes.NewReader(buf.Bytes()))
	require.NoError(t, err, buf.String())
	got, err := back.Plans()
	require.NoError(t, err, buf.String())
	return got
}

// TestP2PHelpers: the message lists of the collectives built on
// point-to-point.
func TestP2PHelpers(t *testing.T) {
	s, r := ring.AllToAll(3, 4)
	want := []ring.Xfer{{Peer: 0, Off: 0, Count: 4}, {Peer: 1, Off: 4, Count: 4}, {Peer: 2, Off: 8, Count: 4}}
	assert.Equal(t, want, s)
	assert.Equal(t, want, r)
	s, r = ring.AllToAllV([]int64{1, 0, 2}, []int64{5, 0, 1}, []int64{3, 3, 0}, []int64{0, 3, 9})
	assert.Equal(t, []ring.Xfer{{Peer: 0, Off: 5, Count: 1}, {Peer: 1, Off: 0, Count: 0}, {Peer: 2, Off: 1, Count: 2}}, s)
	assert.Equal(t, []ring.Xfer{{Peer: 0, Off: 0, Count: 3}, {Peer: 1, Off: 3, Count: 3}, {Peer: 2, Off: 9, Count: 0}}, r)
	s, r = ring.Gather(3, 1, 1, 2)
	assert.Equal(t, []ring.Xfer{{Peer: 1, Count: 2}}, s)
	assert.Equal(t, []ring.Xfer{{Peer: 0, Off: 0, Count: 2}, {Peer: 1, Off: 2, Count: 2}, {Peer: 2, Off: 4, Count: 2}}, r)
	s, r = ring.Gather(3, 0, 1, 2)
	assert.Empty(t, r)
	s, r = ring.Scatter(3, 2, 0, 5)
	assert.Empty(t, s)
	assert.Equal(t, []ring.Xfer{{Peer: 0, Count: 5}}, r)
	s, _ = ring.Scatter(2, 0, 0, 5)
	assert.Equal(t, []ring.Xfer{{Peer: 0, Off: 0, Count: 5}, {Peer: 1, Off: 5, Count: 5}}, s)
}

// TestP2PSpecEqualHash: specs that are equal hash alike; a change of any
// field, or a message moved from the sends to the receives, makes another.
func TestP2PSpecEqualHash(t *testing.T) {
	base := func() ring.P2PSpec {
		return ring.P2PSpec{Rank: 1, Size: 4, EltSize: 1, Channels: 8, Proto: ring.Simple, BuffSize: 1 << 22,
			Sends: []ring.Xfer{{Peer: 2, Off: 0, Count: 10}, {Peer: 3, Off: 10, Count: 5}}, Recvs: []ring.Xfer{{Peer: 0, Count: 7}}}
	}
	a, b := base(), base()
	require.True(t, a.Equal(&b))
	require.Equal(t, a.Hash(), b.Hash())
	changes := []func(s *ring.P2PSpec){
		func(s *ring.P2PSpec) { s.Rank = 2 }, func(s *ring.P2PSpec) { s.Size = 5 }, func(s *ring.P2PSpec) { s.EltSize = 2 },
		func(s *ring.P2PSpec) { s.Channels = 4 }, func(s *ring.P2PSpec) { s.Proto = ring.LL }, func(s *ring.P2PSpec) { s.BuffSize = 1 << 20 },
		func(s *ring.P2PSpec) { s.Sends[1].Off = 11 }, func(s *ring.P2PSpec) { s.Recvs[0].Peer = 3 },
		func(s *ring.P2PSpec) { s.Recvs = append(s.Recvs, s.Sends[1]); s.Sends = s.Sends[:1] },
		func(s *ring.P2PSpec) { s.LLMax = 16 }, func(s *ring.P2PSpec) { s.LLBuffSize = 1 << 16 },
		func(s *ring.P2PSpec) { s.Direct = true }, func(s *ring.P2PSpec) { s.Stripe = 64 },
	}
	for i, change := range changes {
		c := base()
		change(&c)
		assert.False(t, a.Equal(&c), "change %d", i)
		assert.NotEqual(t, a.Hash(), c.Hash(), "change %d", i)
	}
}

// TestP2PSelfCopySpread: a large message to the rank itself is copied in
// chunks over every channel, as a message to a peer is sent (one block
// copying it all ran all-to-all at a tenth of send/recv's bandwidth).
func TestP2PSelfCopySpread(t *testing.T) {
	const n, count = 2, 1 << 20
	var plans []*ring.Plan
	for r := range n {
		sends, recvs := ring.AllToAll(n, count)
		p, err := ring.NewP2P(ring.P2PSpec{Rank: r, Size: n, EltSize: 1, Channels: 8, Proto: ring.Simple, BuffSize: 1 << 22, Sends: sends, Recvs: recvs})
		require.NoError(t, err)
		plans = append(plans, p)
	}
	require.NoError(t, ring.Verify(plans))
	for c, ch := range plans[0].Channels {
		copied := int64(0)
		for _, st := range ch.Steps {
			if st.Prim == ring.Copy {
				copied += st.Count
			}
		}
		assert.Equal(t, int64(count/8), copied, "channel %d's copies", c)
	}
}
