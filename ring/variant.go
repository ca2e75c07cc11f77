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
	numVariants
)

var variantNames = [numVariants]string{RingVariant: "ring", OneShot: "oneshot", Bidirectional: "bidirectional"}

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

// ValidVariant reports why s.Variant cannot plan for s.Ring, or nil.
func (s *Spec) ValidVariant() error {
	if !s.Variant.Valid() {
		return fmt.Errorf("unknown variant %d", s.Variant)
	}
	if n := s.Ring.Size(); s.Variant == OneShot && n != 2 {
		return fmt.Errorf("variant oneshot needs 2 ranks (its peer must be both ring neighbours), not %d", n)
	}
	return nil
}
