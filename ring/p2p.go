package ring

import (
	"fmt"
	"math"
	"slices"
)

// Point-to-point plans: a rank's sends and receives, to and from any ranks,
// scheduled as NCCL schedules a group of ncclSend/ncclRecv.
//
// Matching. The k-th send from rank a to rank b meets the k-th receive at b
// from a (by issue order, per peer); both must have the same count. A send
// to itself is matched, the same way, with the rank's receives from itself.
//
// Rounds. Rank r's program on every channel is n rounds, d = 0 … n−1: in
// round d it sends only to (r+d) mod n and receives only from (r−d) mod n.
// Round 0 is local: each self-send is copied into its self-receive (Copy).
// In round d every message to the round's send peer and from its receive
// peer is cut into chunks — a chunk is one step, at most ChunkCount
// elements, and a message spreads over several channels once it holds
// P2PMinPart bytes for each (P2PDirectMinPart when it moves directly) —
// and chunk j of message k of a
// pair goes to channel (k+j) mod Channels. Both ends of a message compute
// the same chunks and channels: they depend only on the message's count,
// its index k among the pair's messages, and the plan's geometry, which
// every rank shares. With P2PSpec.Stripe, a large direct message's chunks
// are not its consecutive parts but sets of tiles: tile i goes to chunk
// i mod (its chunks), and the send half or copy moves it as Step.Tile and
// Step.Stride say. On each channel the round's send chunks s₁…sₐ and
// receive chunks r₁…r_b become min(a, b) SendRecv steps (sᵢ with rᵢ), then
// the longer side's remaining chunks as plain Send or Recv steps. So on a
// connection a→b the i-th chunk is sent in a's i-th step of the round and
// taken in b's i-th.
//
// Protocols. Under a Simple plan with LLMax set, a message of at most LLMax
// elements goes by LL, as NCCL sends one of at most NCCL_P2P_LL_THRESHOLD
// bytes: its chunks are at most one LL slot, and the halves of the steps
// that carry them are marked SendLL or RecvLL. Both ends of a message
// agree, as they share its count. A half moves in units: a Simple one in
// SlicesPerStep slices of SlotsPerSlice slots (every slice SliceCapElems
// long, a chunk's trailing slices empty), an LL one in a single slot, a
// direct one (below) in a single unit of ChunkSlots slots. A
// step runs send unit k, then receive unit k, for k up to the larger count,
// so the send half never waits for the receive half. A connection's slot
// counter is the protocols' together; before a Simple half it is rounded
// up to a multiple of a chunk's ChunkSlots = SlotsPerSlice·SlicesPerStep
// slots, by the sender as it sends and the receiver as it takes (returning
// the skipped slots as credit), so the two stay equal. A FIFO holds NSteps
// slots, and 2·ChunkSlots − 1 ≤ NSteps (7 ≤ 8).
//
// Direct halves. With Direct (ranks of one process, on the device), a
// Simple half moves no data through the FIFO, and is one unit of a whole
// chunk's ChunkSlots slots: at the start of a step whose receive half is
// direct, the receiver posts where its chunk goes in its output (a mailbox
// of NSteps addresses by the sender's head, and a count of the slots
// posted); the sender's unit waits until it is posted, copies the chunk
// there and advances the tail; the receiver's unit waits for the tail and
// returns the credit. Counters and rounding are a Simple half's, so
// protocols still mix on a connection, and the mailbox always has room: a
// step's receive unit spans ChunkSlots ≤ NSteps slots, and every earlier
// unit was taken. Unlike a FIFO's, a direct send cannot finish before its
// receive has started: a send whose receive is issued later, outside the
// group, waits for it (as NCCL's).
//
// Why it cannot deadlock, for any set of matched sends and receives. The
// channels are independent (each runs on its own connections), so take one.
// A connection a→b is used by one round only, d = b−a mod n, so the data in
// it always belongs to the round both ends are in. Suppose every rank not
// yet done were blocked, and take the lowest round d any of them is in:
// their partners in round d are in round d too (one already past it has
// moved all its data of round d, so nothing waits on it). Order a rank's
// place in the round by (step, unit).
//
//   - A rank x blocked on receive unit k of step i has an empty FIFO from
//     w = x−d, which has not sent unit k of its step i. An empty FIFO never
//     blocks a send (a unit and its rounding take at most 2·ChunkSlots − 1
//     ≤ NSteps slots), nor does a direct one (x, in step i, has posted its
//     chunks up to step i's), so w is blocked on a receive too, at
//     unit k' of step i', having sent its units up to k' of step i' (or its
//     whole send half, if shorter). So (i', k') < (i, k), and around the
//     cycle x, x−d, x−2d … the places would strictly decrease.
//   - A rank x blocked on send unit k of step i has a full FIFO to y = x+d:
//     the slots of step i sent or skipped before the unit, at most
//     (ChunkSlots − 1) + (ChunkSlots − SlotsPerSlice), and the unit's own
//     leave y's credit short of the end of chunk i−1, so y is in a step
//     before i — as it is when x's unit is direct and y has not posted it.
//     y is blocked, not on a receive (x has moved all its data of earlier
//     steps), so on a send at a step before i: around the cycle x, x+d …
//     the steps would strictly decrease.
//
// So some rank can always move, and the
// plans run to completion. VerifyP2P checks a given set of plans by
// executing them symbolically; the tests run random groups (all-to-all,
// all-to-allv with zeros, gather, scatter, several messages to one peer)
// through it and on the host executor.

// Xfer is one point-to-point message as one rank sees it: Count elements
// to or from rank Peer, at element offset Off of the rank's input (a send)
// or output (a receive).
type Xfer struct {
	Peer  int   `json:"peer"`
	Off   int64 `json:"off"`
	Count int64 `json:"count"`
}

// P2PSpec is everything a point-to-point plan depends on.
type P2PSpec struct {
	Rank, Size   int    // this rank, of Size ranks
	Sends, Recvs []Xfer // in issue order
	EltSize      int    // bytes per element, ≥ 1
	Channels     int    // 1…MaxChannels
	Proto        Protocol
	BuffSize     int // bytes of the protocol's FIFO per connection, all NSteps slots
	// LLMax, with Proto Simple: messages of at most LLMax elements go by LL,
	// over LL FIFOs of LLBuffSize bytes per connection (NCCL's
	// NCCL_P2P_LL_THRESHOLD, for the device executor); 0: every message by
	// Proto.
	LLMax      int64
	LLBuffSize int
	// Direct, with Proto Simple: the messages not sent by LL go straight
	// from the sender's input into the receiver's output, one copy, at the
	// addresses the receiver posts for each chunk (the device executor, for
	// ranks of one process, as NCCL's P2P direct); a FIFO slot's counters
	// still pace them, but no data passes through it.
	Direct bool
	// Stripe, with Direct: a message spread over two to Channels parts,
	// each at least P2PStripeMinTiles tiles long, is cut into tiles of
	// Stripe/parts elements (aligned down), dealt to its parts in turn,
	// so that the parts' blocks copy within about Stripe elements of one
	// another rather than a part apart; 0: each part contiguous.
	Stripe int64
}

// Equal reports whether s and o are the same spec (their plans are the
// same).
func (s *P2PSpec) Equal(o *P2PSpec) bool {
	return s.Rank == o.Rank && s.Size == o.Size && s.EltSize == o.EltSize && s.Channels == o.Channels &&
		s.Proto == o.Proto && s.BuffSize == o.BuffSize && s.LLMax == o.LLMax && s.LLBuffSize == o.LLBuffSize && s.Direct == o.Direct && s.Stripe == o.Stripe && slices.Equal(s.Sends, o.Sends) && slices.Equal(s.Recvs, o.Recvs)
}

// Hash returns a 64-bit FNV-1a hash of s: specs that are Equal hash alike.
func (s *P2PSpec) Hash() uint64 {
	h := uint64(14695981039346656037)
	mix := func(v int64) {
		for i := 0; i < 64; i += 8 {
			h = (h ^ uint64(v>>i)&0xff) * 1099511628211
		}
	}
	for _, v := range [...]int64{int64(s.Rank), int64(s.Size), int64(s.EltSize), int64(s.Channels), int64(s.Proto), int64(s.BuffSize), s.LLMax, int64(s.LLBuffSize), s.Stripe, int64(len(s.Sends))} {
		mix(v)
	}
	if s.Direct {
		mix(1)
	}
	for _, xs := range [2][]Xfer{s.Sends, s.Recvs} {
		for _, x := range xs {
			mix(int64(x.Peer))
			mix(x.Off)
			mix(x.Count)
		}
	}
	return h
}

// spec returns the Spec of s's plans: collective SendRecvs over the
// identity ring (its size is the rank count), count 0.
func (s *P2PSpec) spec() Spec {
	return Spec{Coll: SendRecvs, Ring: Identity(s.Size), Rank: s.Rank, EltSize: s.EltSize,
		Channels: s.Channels, Proto: s.Proto, BuffSize: s.BuffSize}
}

// InputLen returns the elements the sends read: the end of the furthest.
func (s *P2PSpec) InputLen() int64 { return extent(s.Sends) }

// OutputLen returns the elements the receives write: the end of the
// furthest.
func (s *P2PSpec) OutputLen() int64 { return extent(s.Recvs) }

func extent(xs []Xfer) int64 {
	var n int64
	for _, x := range xs {
		if x.Count > 0 {
			n = max(n, x.Off+x.Count)
		}
	}
	return n
}

// Validate reports the first thing wrong with s, wrapping ErrInvalid: the
// geometry (as Spec.Validate), then each message (a peer in range, offsets
// and counts ≥ 0, no overflow), then that the self-sends and
// self-receives match one to one with equal counts.
func (s *P2PSpec) Validate() error {
	bad := func(format string, a ...any) error {
		return fmt.Errorf("%w: %s", ErrInvalid, fmt.Sprintf(format, a...))
	}
	if s.Size < 1 {
		return bad("%d ranks, need at least 1", s.Size)
	}
	sp := s.spec()
	if err := sp.Validate(); err != nil {
		return err
	}
	switch {
	case s.LLMax < 0:
		return bad("LL threshold of %d elements is negative", s.LLMax)
	case s.LLMax > 0 && s.Proto != Simple:
		return bad("an LL threshold (%d elements) under %v: only a Simple plan sends its small messages by LL", s.LLMax, s.Proto)
	case s.Direct && s.Proto != Simple:
		return bad("direct messages under %v: only a Simple plan moves its large messages directly", s.Proto)
	case s.Stripe < 0:
		return bad("stripe of %d elements is negative", s.Stripe)
	case s.Stripe > 0 && !s.Direct:
		return bad("a stripe of %d elements without direct messages: only a direct message goes in tiles", s.Stripe)
	case s.LLMax > 0 && s.llChunk() < 1:
		return bad("LL FIFO of %d bytes holds no %d-byte element per slot", s.LLBuffSize, s.EltSize)
	}
	for _, l := range []struct {
		what string
		xs   []Xfer
	}{{"send", s.Sends}, {"recv", s.Recvs}} {
		for i, x := range l.xs {
			switch {
			case x.Peer < 0 || x.Peer >= s.Size:
				return bad("%s %d: peer %d outside [0, %d)", l.what, i, x.Peer, s.Size)
			case x.Count < 0:
				return bad("%s %d: count %d is negative", l.what, i, x.Count)
			case x.Off < 0:
				return bad("%s %d: offset %d is negative", l.what, i, x.Off)
			case x.Off > math.MaxInt64/int64(s.EltSize)-x.Count:
				return bad("%s %d: offset %d + count %d of %d-byte elements overflows", l.what, i, x.Off, x.Count, s.EltSize)
			}
		}
	}
	self := func(xs []Xfer) []Xfer { return byPeer(xs, s.Rank) }
	ss, rs := self(s.Sends), self(s.Recvs)
	for k := range max(len(ss), len(rs)) {
		switch {
		case k >= len(rs):
			return bad("rank %d's send %d to itself (%d elements) has no matching receive from itself", s.Rank, k, ss[k].Count)
		case k >= len(ss):
			return bad("rank %d's receive %d from itself (%d elements) has no matching send to itself", s.Rank, k, rs[k].Count)
		case ss[k].Count != rs[k].Count:
			return bad("rank %d's send %d to itself has %d elements, its receive %d from itself %d", s.Rank, k, ss[k].Count, k, rs[k].Count)
		}
	}
	return nil
}

// ll reports whether a message of count elements goes by LL under a plan
// of another protocol.
func (s *P2PSpec) ll(count int64) bool { return s.LLMax > 0 && count <= s.LLMax }

// Direct reports whether a half moves directly (P2PSpec.Direct): a
// point-to-point plan's half that is not by LL, when its spec says so.
func (p *Plan) Direct(ll bool) bool { return p.P2P != nil && p.P2P.Direct && !ll }

// llChunk is the most elements one LL slot carries, aligned down.
func (s *P2PSpec) llChunk() int64 {
	return alignDown(int64(SlotPayload(LL, s.LLBuffSize))/int64(s.EltSize), int64(AlignElems(s.EltSize)))
}

// byPeer returns the messages of xs with peer, in order.
func byPeer(xs []Xfer, peer int) []Xfer {
	var out []Xfer
	for _, x := range xs {
		if x.Peer == peer {
			out = append(out, x)
		}
	}
	return out
}

// NewP2P returns rank spec.Rank's point-to-point plan: its Spec has
// collective SendRecvs over the identity ring of spec.Size ranks, and P2P
// a copy of spec. The schedule is the package's rounds (see above).
func NewP2P(spec P2PSpec) (*Plan, error) {
	if err := spec.Validate(); err != nil {
		return nil, err
	}
	s := spec.spec()
	cp := spec
	cp.Sends, cp.Recvs = append([]Xfer(nil), spec.Sends...), append([]Xfer(nil), spec.Recvs...)
	p := &Plan{P2P: &cp}
	p.geometry(s)
	p.Channels = make([]Channel, s.Channels)

	n, me := spec.Size, spec.Rank
	for d := range n {
		to, from := (me+d)%n, (me-d+n)%n
		sends, recvs := byPeer(spec.Sends, to), byPeer(spec.Recvs, from)
		sc, rc := p.chunks(sends), p.chunks(recvs)
		if d == 0 { // copies, cut over the channels as the messages to peers are (a send to itself has its receive's size)
			for c := range p.Channels {
				ch := &p.Channels[c]
				for i, x := range sc[c] {
					ch.Steps = append(ch.Steps, Step{Prim: Copy, RecvPeer: -1, SendPeer: -1, InOff: x.Off,
						OutOff: rc[c][i].Off, Count: x.Count, SliceLen: x.Count, Tile: x.tile, Stride: x.stride})
				}
			}
			continue
		}
		for c := range p.Channels {
			ch := &p.Channels[c]
			a, b := sc[c], rc[c]
			for i := range max(len(a), len(b)) {
				st := Step{RecvPeer: -1, SendPeer: -1, SliceLen: p.SliceCapElems}
				if i < len(a) {
					st.Prim, st.SendPeer, st.InOff, st.Count, st.SendLL = Send, int32(to), a[i].Off, a[i].Count, a[i].ll
					st.Tile, st.Stride = a[i].tile, a[i].stride
				}
				if i < len(b) {
					st.RecvPeer, st.OutOff, st.RecvLL = int32(from), b[i].Off, b[i].ll
					if i < len(a) {
						st.Prim, st.RecvCount = SendRecv, b[i].Count
					} else {
						st.Prim, st.Count = Recv, b[i].Count
					}
				}
				ch.Steps = append(ch.Steps, st)
			}
		}
	}
	return p, nil
}

// chunks cuts the messages of one pair, in order, into chunks, and returns
// them by channel: chunk j of message k goes to channel (k+j) mod Channels.
// A message is cut into as many chunks as it needs of ChunkCount elements
// (of one LL slot's, for a message by LL; of P2PDirectMaxChunk bytes for a
// direct one, which no FIFO bounds), and into up to one chunk per channel
// when it holds more than P2PMinPart bytes per channel (P2PDirectMinPart
// for a direct one); chunks start at multiples of the alignment unit from
// the message's start, and none is empty. A direct message that
// stripeTile admits goes in tiles: chunk j is its tiles j, j+w, … of the
// w chunks the cut above would make.
func (p *Plan) chunks(xs []Xfer) [][]chunk {
	nch := int64(len(p.Channels))
	out := make([][]chunk, nch)
	for k, x := range xs {
		if x.Count == 0 {
			continue
		}
		ll := p.P2P.ll(x.Count)
		most, part := p.ChunkCount, int64(P2PMinPart)
		switch {
		case ll:
			most = p.P2P.llChunk()
		case p.Direct(ll):
			most = max(alignDown(P2PDirectMaxChunk/int64(p.Spec.EltSize), p.AlignmentElems), p.AlignmentElems)
			part = P2PDirectMinPart
		}
		unit := alignUp(ceilDiv(part, int64(p.Spec.EltSize)), p.AlignmentElems)
		parts := max(ceilDiv(x.Count, most), min(nch, ceilDiv(x.Count, unit)))
		l := min(alignUp(ceilDiv(x.Count, parts), p.AlignmentElems), most)
		if t, w := p.stripeTile(ll, l, most, x.Count); t > 0 {
			// Tile i of the message goes to part i mod w.
			tiles := ceilDiv(x.Count, t)
			for j := range w {
				n := (tiles - j + w - 1) / w * t // its tiles j, j+w, …, whole
				if (tiles-1)%w == j {
					n -= tiles*t - x.Count // and the message's last one, short
				}
				c := (int64(k) + j) % nch
				out[c] = append(out[c], chunk{Xfer: Xfer{Peer: x.Peer, Off: x.Off + j*t, Count: n}, ll: ll, tile: t, stride: w * t})
			}
			continue
		}
		for j, off := int64(0), int64(0); off < x.Count; j, off = j+1, off+l {
			c := (int64(k) + j) % nch
			out[c] = append(out[c], chunk{Xfer: Xfer{Peer: x.Peer, Off: x.Off + off, Count: min(l, x.Count-off)}, ll: ll})
		}
	}
	return out
}

// stripeTile returns the tile and the parts of a message of count
// elements cut into parts of up to l elements (most at most), when it goes
// in tiles (P2PSpec.Stripe): a direct message of two or more parts, no
// more than the channels, each at least P2PStripeMinTiles tiles long and
// none, in tiles, over most; else 0, 0.
func (p *Plan) stripeTile(ll bool, l, most, count int64) (tile, parts int64) {
	if !p.Direct(ll) || p.P2P.Stripe == 0 {
		return 0, 0
	}
	parts = ceilDiv(count, l)
	if parts < 2 || parts > int64(len(p.Channels)) {
		return 0, 0
	}
	tile = alignDown(p.P2P.Stripe/parts, p.AlignmentElems)
	if tile == 0 || l < P2PStripeMinTiles*tile || ceilDiv(ceilDiv(count, tile), parts)*tile > most {
		return 0, 0
	}
	return tile, parts
}

// P2PStripeMinTiles is the fewest tiles a part of a striped message holds
// (P2PSpec.Stripe); a smaller message's parts stay contiguous. On one H200
// with 2 ranks sharing it, 32-KiB tiles of parts of 64 KiB (4-MiB messages)
// were no quicker than contiguous parts and at 16 MiB (8 tiles a part) as
// quick (BENCHMARKS, issue 20).
const P2PStripeMinTiles = 8

// P2PMinPart is the least a message puts on each of the channels it
// spreads over: a message of up to 64 KiB stays on one channel, as NCCL's
// within a node (its p2pChunkSize/8). Spread thinner, a small message
// costs more in blocks than it gains: on one H200 (2 ranks sharing it),
// send/recv by LL of 512 B to 16 KiB took 14–16 µs spread over up to 32
// channels in 16-byte grains, 10–11 µs on one (BENCHMARKS, issue 20).
const P2PMinPart = 64 << 10

// P2PDirectMinPart is P2PMinPart for a message that moves directly (its
// sender's block copies it into the receiver's output): no FIFO line is
// polled, so a part costs its channel one address posted and one tail, and
// a block copies only ~24 GB/s — 64 KiB on one channel is 2.7 µs of
// copying, on eight 0.35 µs each (one H200, 2 ranks:
// send/recv 8.8–9.4 µs at 32–256 KiB against the direct all-reduce's
// 6.3–6.9, BENCHMARKS, issue 20).
const P2PDirectMinPart = 8 << 10

// P2PDirectMaxChunk is the most bytes of a direct chunk: one unit, one
// post, one tail, however large (no FIFO holds it), so a message of up to
// 16 MiB a channel takes one step on each. It keeps a SendRecv step's
// receive within the kernel's 32-bit field. One post and tail a chunk
// instead of one a slice also spares a step the waits of its later
// slices.
const P2PDirectMaxChunk = 16 << 20

// chunk is one step's share of a message, and whether it goes by LL under
// a plan of another protocol.
type chunk struct {
	Xfer
	ll           bool
	tile, stride int64 // a striped part's (Step.Tile, Step.Stride)
}

// AllToAll returns rank's messages of an all-to-all of count elements per
// pair among n ranks (NCCL's ncclAlltoAll): block p of the input, count
// elements at p·count, goes to rank p, and rank p's block lands at p·count
// of the output. The block to itself is a local copy.
func AllToAll(n int, count int64) (sends, recvs []Xfer) {
	for p := range n {
		x := Xfer{Peer: p, Off: int64(p) * count, Count: count}
		sends, recvs = append(sends, x), append(recvs, x)
	}
	return sends, recvs
}

// AllToAllV returns a rank's messages of an all-to-all with per-peer counts
// and displacements (MPI_Alltoallv's): sendCounts[p] elements at
// sendDispls[p] of the input go to rank p, and recvCounts[p] elements from
// rank p land at recvDispls[p] of the output. Rank p's sendCounts[q] must
// equal rank q's recvCounts[p]. The four slices have one entry per rank.
func AllToAllV(sendCounts, sendDispls, recvCounts, recvDispls []int64) (sends, recvs []Xfer) {
	for p := range sendCounts {
		sends = append(sends, Xfer{Peer: p, Off: sendDispls[p], Count: sendCounts[p]})
		recvs = append(recvs, Xfer{Peer: p, Off: recvDispls[p], Count: recvCounts[p]})
	}
	return sends, recvs
}

// Gather returns rank's messages of a gather to root among n ranks (NCCL's
// ncclGather): every rank sends its count elements to root, root included,
// and root receives rank p's at p·count of its output.
func Gather(n, rank, root int, count int64) (sends, recvs []Xfer) {
	sends = []Xfer{{Peer: root, Count: count}}
	if rank == root {
		for p := range n {
			recvs = append(recvs, Xfer{Peer: p, Off: int64(p) * count, Count: count})
		}
	}
	return sends, recvs
}

// Scatter returns rank's messages of a scatter from root among n ranks
// (NCCL's ncclScatter): root sends the count elements at p·count of its
// input to rank p, itself included, and every rank receives count elements
// from root at offset 0 of its output.
func Scatter(n, rank, root int, count int64) (sends, recvs []Xfer) {
	if rank == root {
		for p := range n {
			sends = append(sends, Xfer{Peer: p, Off: int64(p) * count, Count: count})
		}
	}
	return sends, []Xfer{{Peer: root, Count: count}}
}
