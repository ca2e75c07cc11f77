package ring

// The partition arithmetic: how a count is split over channels, loops, chunks
// and slices, following NCCL's calcCollChunking and the device loops.

// AlignElems returns the alignment unit, in elements, that chunk and slice
// offsets keep inside a rank's segment: the smallest element count that is a
// multiple of 16 bytes.
func AlignElems(eltSize int) int {
	g := gcd(16, eltSize)
	return 16 / g
}

// lineBytes is the FIFO granule of a protocol: a slot holds whole lines.
func lineBytes(p Protocol) int {
	switch p {
	case LL:
		return 16
	case LL128:
		return 128
	}
	return 16
}

// grainBytes is NCCL's per-protocol grain (ncclProtoGrainSize): channel
// ranges are multiples of it, so channels start on protocol-friendly bounds.
func grainBytes(p Protocol) int {
	switch p {
	case LL:
		return 16
	case LL128:
		return 1920
	}
	return 512
}

// SlotPayload returns the data bytes one FIFO slot carries: all of it for
// Simple, half for LL (a flag beside every data word), 120 of every 128 for
// LL128.
func SlotPayload(p Protocol, buffSize int) int {
	slot := buffSize / NSteps
	switch p {
	case LL:
		return slot / 2
	case LL128:
		return slot / 128 * 120
	}
	return slot
}

// chunkSteps and sliceSteps are NCCL's *_CHUNKSTEPS and *_SLICESTEPS: how
// many FIFO slots a primitive call and each of its slices span. Only Simple
// spans several; LL and LL128 move one slot per call.
func chunkSteps(c Collective, p Protocol) int {
	if p != Simple {
		return 1
	}
	switch c {
	case Broadcast, Reduce:
		return 1
	}
	return NSteps / 2
}

func sliceSteps(c Collective, p Protocol) int {
	if p != Simple {
		return 1
	}
	switch c {
	case Broadcast, Reduce:
		return 1
	}
	return NSteps / 4
}

// sliceCapElems is the most elements one slice can carry (at their size in
// the FIFOs), rounded down to the alignment unit.
func sliceCapElems(s *Spec) int64 {
	bytes := int64(SlotPayload(s.Proto, s.BuffSize)) * int64(sliceSteps(s.Coll, s.Proto))
	return alignDown(bytes/int64(s.WireSize()), int64(AlignElems(s.EltSize)))
}

// sliceLen returns the slice length of a primitive call moving count
// elements in slices slices: the count split evenly (aligned up), but never
// less than 1/32 of a slice's capacity (so small calls move in one slice, as
// NCCL's genericOp does) and never more than the capacity.
func sliceLen(count int64, slices int, capElems int64, align int64) int64 {
	l := alignUp(ceilDiv(count, int64(slices)), align)
	if min := max(alignDown(capElems/32, align), align); l < min {
		l = min
	}
	if l > capElems {
		l = capElems
	}
	return l
}

// channelRange returns the element range [off, off+n) of channel c when
// count elements are split over nch channels in grain-sized units. Trailing
// channels may be empty.
func channelRange(count int64, nch, c int, unit int64) (off, n int64) {
	per := alignUp(ceilDiv(count, int64(nch)), unit)
	off = min(per*int64(c), count)
	end := min(off+per, count)
	return off, end - off
}

// channelUnit is the granule of channel ranges in elements: the protocol's
// grain, rounded up to a multiple of the alignment unit.
func channelUnit(p Protocol, eltSize int) int64 {
	a := int64(AlignElems(eltSize))
	g := int64(grainBytes(p)) / int64(eltSize)
	return alignUp(max(g, 1), a)
}

func gcd(a, b int) int {
	for b != 0 {
		a, b = b, a%b
	}
	return a
}

func ceilDiv(a, b int64) int64 { return (a + b - 1) / b }

func alignUp(a, b int64) int64 { return ceilDiv(a, b) * b }

func alignDown(a, b int64) int64 { return a / b * b }
