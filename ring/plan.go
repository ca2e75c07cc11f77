package ring

// Step is one primitive call of a rank's program on one channel.
type Step struct {
	Prim     Prim
	Chunk    int32 // ring chunk: position index for AllReduce, the segment's rank for ReduceScatter/AllGather, 0 for chains
	RecvPeer int32 // rank received from, -1 if the step does not receive
	SendPeer int32 // rank sent to, -1 if the step does not send
	InOff    int64 // element offset of the step's data in the input buffer
	OutOff   int64 // element offset of the step's data in the output buffer
	Count    int64 // elements moved; 0 is legal (the FIFO slots are still posted)
	SliceLen int64 // elements per slice; slice k covers [k·SliceLen, min((k+1)·SliceLen, Count))
}

// Slice returns the element range [off, off+n) of slice k relative to the
// step's offsets. Trailing slices may be empty.
func (s *Step) Slice(k int) (off, n int64) {
	off = min(int64(k)*s.SliceLen, s.Count)
	return off, min(off+s.SliceLen, s.Count) - off
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
	p.Spec = spec
	p.SlotBytes = spec.BuffSize / NSteps
	p.SlotPayload = SlotPayload(spec.Proto, spec.BuffSize)
	p.SlotsPerSlice = sliceSteps(spec.Coll, spec.Proto)
	p.SlicesPerStep = chunkSteps(spec.Coll, spec.Proto) / p.SlotsPerSlice
	p.AlignmentElems = int64(AlignElems(spec.EltSize))
	p.SliceCapElems = sliceCapElems(&spec)
	p.ChunkCount = p.SliceCapElems * int64(p.SlicesPerStep)

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
