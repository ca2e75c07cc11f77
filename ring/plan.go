package ring

import (
	"fmt"
	"iter"
)

// Step is one primitive call of a rank's program on one channel.
type Step struct {
	Prim     Prim
	Chunk    int32 // ring chunk: position index for AllReduce, the segment's rank for ReduceScatter/AllGather, 0 for chains
	RecvPeer int32 // rank received from, -1 if the step does not receive
	SendPeer int32 // rank sent to, -1 if the step does not send
	InOff    int64 // element offset of the step's data in the input buffer
	OutOff   int64 // element offset of the step's data in the output buffer
	Count    int64 // elements moved (a SendRecv's sent); 0 is legal (the FIFO slots are still posted)
	SliceLen int64 // elements per slice; slice k covers [k·SliceLen, min((k+1)·SliceLen, Count))
	// RecvCount is the elements a SendRecv step receives into the output
	// at OutOff, sliced by SliceLen as Count is; 0 for every other
	// primitive (their one count is Count).
	RecvCount int64
	// SendLL and RecvLL say that a point-to-point step's send (receive)
	// half goes by LL under a plan of another protocol (P2PSpec.LLMax): one
	// slot of the LL FIFO, as one slice. Every other half, and every step
	// of other plans, goes by the plan's protocol.
	SendLL, RecvLL bool
	// Tile and Stride: a point-to-point plan's direct send half or copy
	// that goes in tiles (P2PSpec.Stripe) moves its Count elements as
	// tiles of Tile elements, Stride apart, from InOff — and writes them
	// as far apart from where its receiver posted (a copy: from OutOff);
	// the last tile may be short. Tile 0: contiguous.
	Tile, Stride int64
}

// Pieces yields the element ranges, relative to the step's offsets, of n
// of its elements: [0, n) for a contiguous step, a tile each for one in
// tiles (Tile).
func (s *Step) Pieces(n int64) iter.Seq2[int64, int64] {
	return func(yield func(off, n int64) bool) {
		if s.Tile <= 0 {
			yield(0, n)
			return
		}
		for done, off := int64(0), int64(0); done < n; done, off = done+s.Tile, off+s.Stride {
			if !yield(off, min(s.Tile, n-done)) {
				return
			}
		}
	}
}

// Slice returns the element range [off, off+n) of slice k relative to the
// step's offsets: of the data sent and of the data received, except for
// SendRecv, whose received slices are RecvSlice's. Trailing slices may be
// empty.
func (s *Step) Slice(k int) (off, n int64) { return s.slice(k, s.Count) }

// RecvSlice returns the element range of slice k of what the step receives,
// relative to OutOff: Slice's, except for SendRecv, which receives
// RecvCount elements.
func (s *Step) RecvSlice(k int) (off, n int64) {
	if s.Prim == SendRecv {
		return s.slice(k, s.RecvCount)
	}
	return s.Slice(k)
}

func (s *Step) slice(k int, count int64) (off, n int64) {
	off = min(int64(k)*s.SliceLen, count)
	return off, min(off+s.SliceLen, count) - off
}

// Channel is the program of one rank on one channel.
type Channel struct {
	Offset int64 // first element of the channel's range (in NCCL's count space)
	Count  int64 // elements of the channel's range
	Steps  []Step
}

// Plan is one rank's program for one collective. Plans are values: the same
// Spec always yields the same Plan.
type Plan struct {
	Spec Spec

	SlotBytes      int   // bytes of one FIFO slot (raw, flags included)
	SlotPayload    int   // data bytes one slot carries
	SlicesPerStep  int   // slices of every primitive call (empty ones included)
	SlotsPerSlice  int   // FIFO slots one slice spans
	ChunkCount     int64 // elements of a full chunk
	SliceCapElems  int64 // most elements a slice may carry
	Channels       []Channel
	AlignmentElems int64 // chunk and slice offsets are multiples of this inside a segment

	// P2P is the transfers of a point-to-point plan (Spec.Coll SendRecvs,
	// NewP2P); nil for collectives.
	P2P *P2PSpec
}

// SlotsPerStep returns how many FIFO slots every primitive call consumes on
// each connection it uses.
func (p *Plan) SlotsPerStep() int { return p.SlicesPerStep * p.SlotsPerSlice }

// New returns the plan for spec.
func New(spec Spec) (*Plan, error) {
	p := new(Plan)
	if err := p.Build(spec); err != nil {
		return nil, err
	}
	return p, nil
}

// Build recomputes p for spec, reusing p's memory: once p has held a plan at
// least as long, Build does not allocate. On error p is left empty.
func (p *Plan) Build(spec Spec) error {
	chans := p.Channels[:0]
	*p = Plan{Channels: chans}
	if err := spec.Validate(); err != nil {
		return err
	}
	if spec.Coll.P2P() {
		return fmt.Errorf("%w: %v plans come from NewP2P", ErrInvalid, spec.Coll)
	}
	p.geometry(spec)

	unit := channelUnit(spec.Proto, spec.EltSize)
	for c := 0; c < spec.Channels; c++ {
		if c < cap(p.Channels) {
			p.Channels = p.Channels[:c+1]
			p.Channels[c].Steps = p.Channels[c].Steps[:0]
		} else {
			p.Channels = append(p.Channels, Channel{})
		}
		ch := &p.Channels[c]
		ch.Offset, ch.Count = channelRange(spec.Count, spec.Channels, c, unit)
		if ch.Count == 0 {
			continue
		}
		g := gen{p: p, ch: ch, r: view{r: spec.Ring, back: spec.Variant.Backwards(c)}}
		g.me = g.r.Index(spec.Rank)
		g.run()
	}
	return nil
}

// geometry sets p's spec and the FIFO geometry that follows from it.
func (p *Plan) geometry(spec Spec) {
	p.Spec = spec
	p.SlotBytes = spec.BuffSize / NSteps
	p.SlotPayload = SlotPayload(spec.Proto, spec.BuffSize)
	p.SlotsPerSlice = sliceSteps(spec.Coll, spec.Proto)
	p.SlicesPerStep = chunkSteps(spec.Coll, spec.Proto) / p.SlotsPerSlice
	p.AlignmentElems = int64(AlignElems(spec.EltSize))
	p.SliceCapElems = sliceCapElems(&spec)
	p.ChunkCount = p.SliceCapElems * int64(p.SlicesPerStep)
}
