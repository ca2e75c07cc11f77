package ring

import (
	"fmt"
	"strings"
)

// Variant selects the plan generator of a collective. Every variant runs on
// the connections of the ring (each rank receives from its predecessor and
// sends to its successor), so the executors run any of them unchanged.
type Variant uint8

const (
	// RingVariant is NCCL's Ring algorithm (the generators of steps.go).
	RingVariant Variant = iota
	// OneShot is an all-reduce for two ranks in one exchange: each rank
	// sends its whole input to the other and reduces what it receives with
	// its own input — one hop of latency instead of the ring's two, for
	// twice the bytes on the wire. Other collectives, already one hop on two
	// ranks, run the ring.
	OneShot
	// Bidirectional runs the ring forwards on even channels and backwards
	// on odd ones, so that every link carries data both ways at once; it
	// needs the connections of both directions (on two ranks they are the
	// same).
	Bidirectional
	// BF16Wire is the compressed all-reduce: the buffers hold float32, the
	// FIFOs bfloat16 (half the bytes on every link), and each hop widens
	// what it receives, adds its input in float32 and rounds once to send.
	// Every rank's output is the final sum as it travelled (rounded to
	// bfloat16), so all ranks agree bit for bit. All-reduce with the Simple
	// protocol only; the Comm runs other calls with the ring.
	BF16Wire
	// FP32Wire is the converse for 2-byte float buffers (float16,
	// bfloat16): partial sums travel in float32 (twice the bytes) and only
	// the final sum is rounded to the buffers' type — one rounding instead
	// of one per hop.
	FP32Wire
	// Hierarchical is the 2-D ring (Hierarchy): an all-reduce as three ring
	// collectives over sub-rings — a reduce-scatter inside groups, an
	// all-reduce across them, an all-gather inside. It is a composition of
	// plans, not a plan: a Comm runs the phases on sub-communicators, and
	// Hierarchy.Phases gives their specs; New refuses it.
	Hierarchical
	numVariants
)

var variantNames = [numVariants]string{RingVariant: "ring", OneShot: "oneshot", Bidirectional: "bidirectional",
	BF16Wire: "bf16wire", FP32Wire: "fp32wire", Hierarchical: "hierarchical"}

// WireSize returns the bytes an element of eltSize bytes takes in the FIFOs
// under variant v: eltSize, except in the precision variants.
func (v Variant) WireSize(eltSize int) int {
	switch v {
	case BF16Wire:
		return 2
	case FP32Wire:
		return 4
	}
	return eltSize
}

// Precision reports whether v changes the type the FIFOs carry.
func (v Variant) Precision() bool { return v == BF16Wire || v == FP32Wire }

// precisionElt is the buffer element size each precision variant takes.
var precisionElt = map[Variant]int{BF16Wire: 4, FP32Wire: 2}

// Backwards reports whether channel c of variant v runs the ring backwards.
func (v Variant) Backwards(c int) bool { return v == Bidirectional && c%2 == 1 }

// Neighbours returns the ranks rank receives from and sends to on channel c
// of ring r run by variant v.
func Neighbours(r Ring, v Variant, c, rank int) (prev, next int) {
	w := view{r: r, back: v.Backwards(c)}
	i := w.Index(rank)
	return w.At(i, -1), w.At(i, 1)
}

// view is a ring as one channel runs it: forwards, or backwards (position i
// of the backward ring is position n−1−i of the forward one).
type view struct {
	r    Ring
	back bool
}

func (v view) Index(rank int) int {
	i := v.r.Index(rank)
	if v.back && i >= 0 {
		i = len(v.r.Order) - 1 - i
	}
	return i
}

func (v view) At(i, k int) int {
	if !v.back {
		return v.r.At(i, k)
	}
	n := len(v.r.Order)
	return v.r.Order[n-1-((i+k)%n+n)%n]
}

// String returns the variant's name as ParseVariant reads it.
func (v Variant) String() string {
	if v < numVariants {
		return variantNames[v]
	}
	return fmt.Sprintf("Variant(%d)", uint8(v))
}

// Valid reports whether v names a variant.
func (v Variant) Valid() bool { return v < numVariants }

// ParseVariant reads a variant's name (case-insensitive).
func ParseVariant(s string) (Variant, error) {
	for v, name := range variantNames {
		if strings.EqualFold(strings.TrimSpace(s), name) {
			return Variant(v), nil
		}
	}
	return 0, fmt.Errorf("unknown variant %q (valid: %s)", s, strings.Join(variantNames[:], ", "))
}

// ValidFor reports why v cannot plan for n ranks, or nil.
func (v Variant) ValidFor(n int) error {
	if !v.Valid() {
		return fmt.Errorf("unknown variant %d", v)
	}
	if v == OneShot && n != 2 {
		return fmt.Errorf("variant oneshot needs 2 ranks (its peer must be both ring neighbours), not %d", n)
	}
	return nil
}

// ValidVariant reports why s.Variant cannot plan s, or nil.
func (s *Spec) ValidVariant() error {
	if err := s.Variant.ValidFor(s.Ring.Size()); err != nil {
		return err
	}
	if s.Variant == Hierarchical {
		return fmt.Errorf("variant hierarchical composes three plans (Hierarchy.Phases) and has none of its own")
	}
	if !s.Variant.Precision() {
		return nil
	}
	switch {
	case s.Coll != AllReduce:
		return fmt.Errorf("variant %v is an all-reduce, not a %v", s.Variant, s.Coll)
	case s.Proto != Simple:
		return fmt.Errorf("variant %v runs the Simple protocol only, not %v", s.Variant, s.Proto)
	case s.EltSize != precisionElt[s.Variant]:
		return fmt.Errorf("variant %v needs %d-byte elements, not %d", s.Variant, precisionElt[s.Variant], s.EltSize)
	}
	return nil
}

// WireSize returns the bytes one element takes in the FIFOs.
func (s *Spec) WireSize() int { return s.Variant.WireSize(s.EltSize) }
