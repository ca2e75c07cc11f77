package kernels

import (
	"encoding/binary"
	"fmt"
	"math"
	"strings"

	"github.com/ringo-ccl/ringo/ring"
)

// Sizes of the structures in src/common.cuh (asserted there with
// static_assert).
const (
	StepBytes        = 40  // RingoStep
	PlanChannelBytes = 8   // RingoPlanChannel
	ConnBytes        = 128 // RingoConn
	planHeaderBytes  = MaxChannels * PlanChannelBytes

	// ConnTraceOffset is where a RingoConn holds its trace pointer.
	ConnTraceOffset = 12 * 8
	// TraceCap is how many steps a channel's trace buffer keeps
	// (RINGO_TRACE_CAP); TraceBytes is the buffer's size: the count, a
	// spare word, then a (start, end) pair of ns per step.
	TraceCap   = 4096
	TraceBytes = 16 + TraceCap*16
)

// PlanBytes returns the size of the encoding of a plan with nsteps steps.
func PlanBytes(nsteps int) int { return planHeaderBytes + nsteps*StepBytes }

// EncodePlan appends the device encoding of p to dst: per channel the first
// step and the step count (64 entries), then every channel's steps with
// offsets and lengths in bytes and the entries of t, the rank's connection
// table, whose receive and send ends each uses. A SendRecv (ringo_p2p's
// steps only) holds its slice and received bytes as two 32-bit numbers
// where the others hold their slice's 64; a point-to-point plan's steps
// carry their halves' protocols beside the primitive (primWord), and one
// in tiles its stripe word in place of its slice (stripeWord). It fails when p has more
// channels than a launch can run, or a step talks to a peer over a
// connection t does not hold.
func EncodePlan(dst []byte, p *ring.Plan, t *Table) ([]byte, error) {
	if len(p.Channels) > MaxChannels {
		return nil, fmt.Errorf("kernels: plan has %d channels, at most %d", len(p.Channels), MaxChannels)
	}
	total := 0
	for _, ch := range p.Channels {
		total += len(ch.Steps)
	}
	start := len(dst)
	dst = append(dst, make([]byte, PlanBytes(total))...)
	hdr := dst[start : start+planHeaderBytes]
	body := dst[start+planHeaderBytes:]
	elt := int64(p.Spec.EltSize)
	first := 0
	for c, ch := range p.Channels {
		binary.LittleEndian.PutUint32(hdr[8*c:], uint32(first))
		binary.LittleEndian.PutUint32(hdr[8*c+4:], uint32(len(ch.Steps)))
		recv, send := 0, 0 // a step that does not receive (send) names the last entry that did
		for i, st := range ch.Steps {
			var ok bool
			if st.Prim.Recvs() {
				if recv, ok = t.Recv(c, int(st.RecvPeer)); !ok {
					return nil, fmt.Errorf("kernels: channel %d's step %d receives from rank %d, and the rank's connection table has no such connection", c, i, st.RecvPeer)
				}
			}
			if st.Prim.Sends() {
				if send, ok = t.Send(c, int(st.SendPeer)); !ok {
					return nil, fmt.Errorf("kernels: channel %d's step %d sends to rank %d, and the rank's connection table has no such connection", c, i, st.SendPeer)
				}
			}
			b := body[first*StepBytes : (first+1)*StepBytes]
			binary.LittleEndian.PutUint32(b[0:], primWord(p, &st))
			binary.LittleEndian.PutUint16(b[4:], uint16(recv))
			binary.LittleEndian.PutUint16(b[6:], uint16(send))
			binary.LittleEndian.PutUint64(b[8:], uint64(st.InOff*elt))
			binary.LittleEndian.PutUint64(b[16:], uint64(st.OutOff*elt))
			binary.LittleEndian.PutUint64(b[24:], uint64(st.Count*elt))
			if st.Tile > 0 { // a copy or direct send in tiles: its stripe word where a slice's bytes go
				word, err := stripeWord(st.Tile*elt, st.Stride/st.Tile)
				if err != nil {
					return nil, fmt.Errorf("kernels: channel %d's step %d: %w", c, i, err)
				}
				binary.LittleEndian.PutUint32(b[32:], word)
				if st.Prim == ring.SendRecv {
					binary.LittleEndian.PutUint32(b[36:], uint32(st.RecvCount*elt))
				}
			} else if st.Prim == ring.SendRecv {
				slice, recvd := st.SliceLen*elt, st.RecvCount*elt
				if slice > math.MaxInt32 || recvd > math.MaxInt32 {
					return nil, fmt.Errorf("kernels: channel %d's step %d is a SendRecv of %d-byte slices receiving %d bytes, over the 2³¹−1 bytes its encoding holds", c, i, slice, recvd)
				}
				binary.LittleEndian.PutUint32(b[32:], uint32(slice))
				binary.LittleEndian.PutUint32(b[36:], uint32(recvd))
			} else {
				binary.LittleEndian.PutUint64(b[32:], uint64(st.SliceLen*elt))
			}
			first++
		}
	}
	return dst, nil
}

// stripeWord is a step in tiles' stripe word (prims_p2p.cuh): a tile's
// bytes in the low 24 bits, the tiles from one of the step's to its next
// (the stripe's width) in the high 8.
func stripeWord(tile, width int64) (uint32, error) {
	if tile <= 0 || tile >= 1<<24 || width < 2 || width > 0xff {
		return 0, fmt.Errorf("tiles of %d bytes %d tiles apart: the encoding holds tiles under 16 MiB, 2 to 255 apart", tile, width)
	}
	return uint32(tile) | uint32(width)<<24, nil
}

// Grid returns the blocks a launch of p needs: one per channel up to the
// last that has steps (at least one). The channels after it have none,
// and their blocks would only exit: a point-to-point plan's small message
// is on channel 0 of up to 32.
func Grid(p *ring.Plan) int {
	n := len(p.Channels)
	for n > 1 && len(p.Channels[n-1].Steps) == 0 {
		n--
	}
	return n
}

// ProtoDirect is a point-to-point half's protocol code when it moves
// directly (ring.Plan.Direct; RINGO_PROTO_DIRECT), after ring.Protocol's
// values.
const ProtoDirect = uint32(ring.Simple) + 1

// PrimTiles marks a point-to-point step whose copy or direct send goes in
// tiles (ring.Step.Tile; RINGO_PRIM_TILES): its slice field is its stripe
// word.
const PrimTiles = 1 << 24

// primWord is a step's prim word: its primitive and, in a point-to-point
// plan, the protocols of its send and receive halves in the next two bytes
// and PrimTiles (prims_p2p.cuh).
func primWord(p *ring.Plan, st *ring.Step) uint32 {
	w := uint32(st.Prim)
	if p.P2P == nil {
		return w
	}
	if st.Tile > 0 {
		w |= PrimTiles
	}
	half := func(ll bool) uint32 {
		switch {
		case ll:
			return uint32(ring.LL)
		case p.Direct(ll):
			return ProtoDirect
		}
		return uint32(p.Spec.Proto)
	}
	return w | half(st.SendLL)<<8 | half(st.RecvLL)<<16
}

// P2PArg is the point-to-point kernel's argument: an LL slot's bytes, for
// the LL halves of a plan of another protocol (ring.P2PSpec.LLMax).
func P2PArg(p *ring.Plan) uint64 { return uint64(p.P2P.LLBuffSize / ring.NSteps) }

// Geom packs the launch geometry of p (RingoGeom).
func Geom(p *ring.Plan) uint64 {
	return uint64(uint32(p.SlotBytes)) | uint64(uint8(p.SlotsPerSlice))<<32 |
		uint64(uint8(p.SlicesPerStep))<<40 | uint64(uint8(p.Spec.Proto))<<48
}

// Conn is one entry of a rank's connection table (RingoConn): a receive
// end and a send end (a Table's Entry says whose) as device addresses,
// "local" on this rank's GPU, "remote" on the peer's; State holds the send
// counter ([0]) and the receive counter ([1]); entry c also holds channel
// c's trace buffer (a communicator's first entries are its channels' ring
// connections, in channel order).
type Conn struct {
	RecvBuf  uint64 // Simple FIFO of the receive end's connection (local; the sender's with P2P read)
	RecvTail uint64 // local: steps the sender produced
	RecvHead uint64 // remote: steps this rank consumed
	SendBuf  uint64 // Simple FIFO of the send end's connection (remote; local with P2P read)
	SendTail uint64 // remote: steps this rank produced
	SendHead uint64 // local: steps the receiver consumed
	State    uint64 // local: send and receive step, kept across launches
	RecvLL   uint64 // local LL FIFO of the receive end's connection
	SendLL   uint64 // remote LL FIFO of the send end's connection
	// SendPosts: a net connection's NSteps post entries (beside SendTail,
	// in host memory a proxy reads); 0 for the others.
	SendPosts uint64
	RecvLL128 uint64 // local LL128 FIFO of the receive end's connection (0: LL128 off)
	SendLL128 uint64 // remote LL128 FIFO of the send end's connection
	Trace     uint64 // the channel's trace buffer (mapped host memory) when tracing; 0 otherwise
	// SendPtrs (local) and RecvPtrs (remote, the sender's): a connection's
	// mailbox for direct halves — the slots posted, then NSteps addresses
	// in the receiver's output — by the head it sits beside.
	SendPtrs uint64
	RecvPtrs uint64
}

// EncodeConns appends the device encoding of conns.
func EncodeConns(dst []byte, conns []Conn) []byte {
	for _, c := range conns {
		var b [ConnBytes]byte
		for i, v := range []uint64{c.RecvBuf, c.RecvTail, c.RecvHead, c.SendBuf, c.SendTail, c.SendHead, c.State, c.RecvLL, c.SendLL, c.SendPosts, c.RecvLL128, c.SendLL128, c.Trace, c.SendPtrs, c.RecvPtrs} {
			binary.LittleEndian.PutUint64(b[8*i:], v)
		}
		dst = append(dst, b[:]...)
	}
	return dst
}

// The direct all-reduces' structures (kernels/src/direct.cu): a rank's
// sync area — the blocks' epochs, per block and rank a start slot of
// DirectSlotWords words, a mid flag and an end flag, then (for ranks in
// separate processes) a staging buffer — and RingoDirect, the rank's view
// of every rank's area and windows.
const (
	DirectSlotWords  = 8 // RINGO_DIRECT_SLOT
	DirectSyncBytes  = (directEndWord + DirectMaxBlocks*DirectMaxRanks) * 8
	DirectBytes      = DirectMaxRanks*8 + 8 + DirectMaxRanks + 8 // RingoDirect
	DirectMaxWindows = 64                                        // RINGO_DIRECT_MAXWINDOWS
	// DirectWindowsBytes is RingoDirect.windows's table: per window, every
	// rank's address of it.
	DirectWindowsBytes = DirectMaxWindows * DirectMaxRanks * 8
)

// Where a sync area's regions start, in 64-bit words (RINGO_DIRECT_START,
// RINGO_DIRECT_MID, RINGO_DIRECT_END): the blocks' epochs are first.
const (
	directStartWord = DirectMaxBlocks
	directMidWord   = directStartWord + DirectMaxBlocks*DirectMaxRanks*DirectSlotWords
	directEndWord   = directMidWord + DirectMaxBlocks*DirectMaxRanks
)

// DirectSync is what a rank's sync area says of its direct all-reduces'
// blocks: Epoch[b], block b's launches completed on this rank; Start[b][q],
// Mid[b][q] and End[b][q], the latest epoch at which rank q's block b told
// this rank it started, reached its mid point (two shots) and ended. A
// stalled block b at epoch e waits for the ranks q whose flag is below e.
type DirectSync struct {
	Epoch           [DirectMaxBlocks]uint64
	Start, Mid, End [DirectMaxBlocks][DirectMaxRanks]uint64
}

// DecodeDirectSync decodes the first DirectSyncBytes of a sync area.
func DecodeDirectSync(b []byte) (*DirectSync, error) {
	if len(b) < DirectSyncBytes {
		return nil, fmt.Errorf("kernels: a direct sync area of %d bytes, need %d", len(b), DirectSyncBytes)
	}
	w := func(i int) uint64 { return binary.LittleEndian.Uint64(b[8*i:]) }
	d := &DirectSync{}
	for k := range DirectMaxBlocks {
		d.Epoch[k] = w(k)
		for q := range DirectMaxRanks {
			d.Start[k][q] = w(directStartWord + (k*DirectMaxRanks+q)*DirectSlotWords)
			d.Mid[k][q] = w(directMidWord + k*DirectMaxRanks + q)
			d.End[k][q] = w(directEndWord + k*DirectMaxRanks + q)
		}
	}
	return d, nil
}

// Stalled describes, for rank me of n, each block of a direct all-reduce
// that started and did not end (its own start flag is one past its
// completed epochs) and which ranks it still waits for: to start, to reach
// the mid point (two shots), to end; "" when no block is stalled.
func (d *DirectSync) Stalled(me, n int) string {
	var out []string
	for k := range DirectMaxBlocks {
		e := d.Epoch[k] + 1
		if d.Start[k][me] != e {
			continue
		}
		stage, flags := "start", &d.Start[k]
		switch {
		case d.End[k][me] == e:
			stage, flags = "end", &d.End[k]
		case d.Mid[k][me] == e:
			stage, flags = "mid point", &d.Mid[k]
		}
		var late []string
		for q := range n {
			if flags[q] < e {
				late = append(late, fmt.Sprintf("rank %d (at %d)", q, flags[q]))
			}
		}
		if len(late) > 0 {
			out = append(out, fmt.Sprintf("block %d at epoch %d waits for the %s of %s", k, e, stage, strings.Join(late, ", ")))
		}
	}
	return strings.Join(out, "; ")
}

// Where a direct all-reduce reads a rank's input (RINGO_DIRECT_*): at its
// own address (every rank in one process), in the rank's staging buffer
// (copied there first), or in window w at an offset (DirectWindow + w).
const (
	DirectRaw    = 0
	DirectStaged = 1
	DirectWindow = 2
)

// EncodeDirect returns RingoDirect of rank among len(areas) ranks, whose
// sync areas are at areas (as rank reaches them), summing in the order of
// ring order (a permutation of the ranks), with its windows' table at
// windows (0: none).
func EncodeDirect(areas []uint64, rank int, order []int, windows uint64) ([]byte, error) {
	n := len(areas)
	if n > DirectMaxRanks || rank < 0 || rank >= n {
		return nil, fmt.Errorf("kernels: a direct all-reduce of rank %d among %d ranks (at most %d)", rank, n, DirectMaxRanks)
	}
	if len(order) != n {
		return nil, fmt.Errorf("kernels: a direct all-reduce's order of %d ranks for %d", len(order), n)
	}
	if err := (ring.Ring{Order: order}).Validate(); err != nil {
		return nil, fmt.Errorf("kernels: a direct all-reduce's order: %w", err)
	}
	b := make([]byte, DirectBytes)
	for r, a := range areas {
		binary.LittleEndian.PutUint64(b[8*r:], a)
	}
	binary.LittleEndian.PutUint32(b[8*DirectMaxRanks:], uint32(rank))
	binary.LittleEndian.PutUint32(b[8*DirectMaxRanks+4:], uint32(n))
	for i, r := range order {
		b[8*DirectMaxRanks+8+i] = byte(r)
	}
	binary.LittleEndian.PutUint64(b[DirectBytes-8:], windows)
	return b, nil
}
