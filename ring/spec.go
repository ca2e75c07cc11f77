package ring

import (
	"errors"
	"fmt"
	"math"
)

// ErrInvalid is wrapped by every error that rejects a Spec.
var ErrInvalid = errors.New("invalid plan spec")

// Spec is everything a plan depends on.
type Spec struct {
	Coll Collective
	Ring Ring // ring order over ranks 0…n−1
	Rank int  // the rank to plan for
	Root int  // root rank of Broadcast and Reduce; ignored otherwise

	// Count is the element count in NCCL's sense: of each buffer for
	// AllReduce, Broadcast and Reduce; of each rank's output for
	// ReduceScatter (input is Count×n); of each rank's input for AllGather
	// (output is Count×n).
	Count   int64
	EltSize int // bytes per element, ≥ 1

	Channels int      // 1…MaxChannels
	Proto    Protocol // Simple, LL or LL128
	BuffSize int      // bytes of the protocol's FIFO per connection, all NSteps slots
	Variant  Variant  // the plan generator; the zero value is NCCL's ring
}

// InputLen returns the element count of the rank's input buffer.
func (s *Spec) InputLen() int64 {
	if s.Coll == ReduceScatter {
		return s.Count * int64(s.Ring.Size())
	}
	return s.Count
}

// OutputLen returns the element count of the rank's output buffer.
func (s *Spec) OutputLen() int64 {
	if s.Coll == AllGather {
		return s.Count * int64(s.Ring.Size())
	}
	return s.Count
}

// Validate reports the first thing wrong with s, wrapping ErrInvalid.
func (s *Spec) Validate() error {
	bad := func(format string, a ...any) error {
		return fmt.Errorf("%w: %s", ErrInvalid, fmt.Sprintf(format, a...))
	}
	if !s.Coll.Valid() {
		return bad("unknown collective %d", s.Coll)
	}
	if err := s.Ring.Validate(); err != nil {
		return bad("%v", err)
	}
	n := s.Ring.Size()
	if s.Rank < 0 || s.Rank >= n {
		return bad("rank %d outside [0, %d)", s.Rank, n)
	}
	if s.Coll.Rooted() && (s.Root < 0 || s.Root >= n) {
		return bad("root %d outside [0, %d)", s.Root, n)
	}
	if s.EltSize < 1 {
		return bad("element size %d, need ≥ 1", s.EltSize)
	}
	if s.Count < 0 {
		return bad("count %d is negative", s.Count)
	}
	total := s.Count
	if s.Coll == ReduceScatter || s.Coll == AllGather {
		if total > math.MaxInt64/int64(n) {
			return bad("count %d × %d ranks overflows", s.Count, n)
		}
		total *= int64(n)
	}
	if total > math.MaxInt64/int64(s.EltSize) {
		return bad("count %d of %d-byte elements overflows", total, s.EltSize)
	}
	if s.Channels < 1 || s.Channels > MaxChannels {
		return bad("%d channels, need 1…%d", s.Channels, MaxChannels)
	}
	if err := s.ValidVariant(); err != nil {
		return bad("%v", err)
	}
	if !s.Proto.Valid() {
		return bad("unknown protocol %d", s.Proto)
	}
	line := lineBytes(s.Proto)
	if s.BuffSize <= 0 || s.BuffSize%(NSteps*line) != 0 {
		return bad("%v buffer size %d is not a positive multiple of %d", s.Proto, s.BuffSize, NSteps*line)
	}
	if cap := sliceCapElems(s); cap < int64(AlignElems(s.EltSize)) {
		return bad("%v buffer size %d too small for %d-byte elements", s.Proto, s.BuffSize, s.EltSize)
	}
	return nil
}
