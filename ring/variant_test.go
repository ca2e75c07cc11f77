package ring

import (
	"strings"
	"testing"
)

// TestOneShot: the one-shot all-reduce verifies symbolically on both ring
// orders of two ranks, every protocol, counts that span several chunks and
// channels; each rank's program is one send and one reduce per chunk, both
// with the other rank.
func TestOneShot(t *testing.T) {
	protos := []struct {
		p Protocol
		b int
	}{{Simple, 8 * 512}, {LL, 8 * 256}, {LL128, 8 * 1024}}
	for _, order := range [][]int{{0, 1}, {1, 0}} {
		for _, pr := range protos {
			for _, count := range []int64{0, 1, 7, 255, 1000, 4099} {
				for _, ch := range []int{1, 3} {
					s := Spec{Coll: AllReduce, Ring: Ring{Order: order}, Count: count, EltSize: 4, Channels: ch,
						Proto: pr.p, BuffSize: pr.b, Variant: OneShot}
					plans := plansFor(t, s)
					if err := Verify(plans); err != nil {
						t.Fatalf("%+v: %v", s, err)
					}
					for r, p := range plans {
						for c, chn := range p.Channels {
							for i, st := range chn.Steps {
								want := Send
								if i%2 == 1 {
									want = RecvReduceCopy
								}
								if st.Prim != want || (st.SendPeer != -1 && int(st.SendPeer) != 1-r) || (st.RecvPeer != -1 && int(st.RecvPeer) != 1-r) {
									t.Fatalf("%+v rank %d channel %d step %d: %+v", s, r, c, i, st)
								}
							}
						}
					}
				}
			}
		}
	}
	// The ring's other collectives are unchanged by the variant.
	s := Spec{Coll: ReduceScatter, Ring: Identity(2), Count: 100, EltSize: 4, Channels: 2, Proto: Simple, BuffSize: 8 * 512}
	ring, one := plansFor(t, s), []*Plan(nil)
	s.Variant = OneShot
	one = plansFor(t, s)
	if len(ring[0].Channels[0].Steps) != len(one[0].Channels[0].Steps) || ring[0].Channels[0].Steps[0] != one[0].Channels[0].Steps[0] {
		t.Fatal("oneshot changed reduce-scatter")
	}
}

// TestBidirectional: even channels run the ring forwards, odd ones
// backwards — each rank receives from its successor and sends to its
// predecessor there — and every collective verifies symbolically.
func TestBidirectional(t *testing.T) {
	r := Ring{Order: []int{2, 0, 3, 1}}
	for c := range 4 {
		for rank := range 4 {
			prev, next := Neighbours(r, Bidirectional, c, rank)
			i := r.Index(rank)
			wp, wn := r.At(i, -1), r.At(i, 1)
			if c%2 == 1 {
				wp, wn = wn, wp
			}
			if prev != wp || next != wn {
				t.Fatalf("channel %d rank %d: prev %d next %d, want %d %d", c, rank, prev, next, wp, wn)
			}
			if p, n := Neighbours(r, RingVariant, c, rank); p != r.At(i, -1) || n != r.At(i, 1) {
				t.Fatalf("the ring's channel %d: %d, %d", c, p, n)
			}
		}
	}
	for coll := range numRingColls {
		s := Spec{Coll: coll, Ring: r, Root: 3, Count: 1001, EltSize: 4, Channels: 4, Proto: Simple, BuffSize: 8 * 512, Variant: Bidirectional}
		plans := plansFor(t, s)
		if err := Verify(plans); err != nil {
			t.Fatalf("%v: %v", coll, err)
		}
		for rank, p := range plans {
			for c, ch := range p.Channels {
				prev, next := Neighbours(r, Bidirectional, c, rank)
				for _, st := range ch.Steps {
					if (st.RecvPeer >= 0 && int(st.RecvPeer) != prev) || (st.SendPeer >= 0 && int(st.SendPeer) != next) {
						t.Fatalf("%v rank %d channel %d: %+v, neighbours %d, %d", coll, rank, c, st, prev, next)
					}
				}
			}
		}
	}
}

func TestParseVariant(t *testing.T) {
	for v := range numVariants {
		got, err := ParseVariant(strings.ToUpper(v.String()))
		if err != nil || got != v {
			t.Errorf("%v: %v, %v", v, got, err)
		}
	}
	if _, err := ParseVariant("tree"); err == nil || !strings.Contains(err.Error(), "valid: ring, oneshot, bidirectional, bf16wire, fp32wire, hierarchical") {
		t.Errorf("tree: %v", err)
	}
	if s := Variant(9).String(); s != "Variant(9)" {
		t.Errorf("%q", s)
	}
}

// TestPrecisionVariants: the precision variants plan the ring's all-reduce
// with slices sized in wire bytes, verify symbolically, and refuse what they
// do not cover with an error naming it.
func TestPrecisionVariants(t *testing.T) {
	for _, c := range []struct {
		v        Variant
		elt, wir int
	}{{BF16Wire, 4, 2}, {FP32Wire, 2, 4}} {
		s := Spec{Coll: AllReduce, Ring: Ring{Order: []int{1, 2, 0}}, Count: 100003, EltSize: c.elt, Channels: 3,
			Proto: Simple, BuffSize: 8 * 4096, Variant: c.v}
		if s.WireSize() != c.wir {
			t.Fatalf("%v: wire size %d", c.v, s.WireSize())
		}
		plans := plansFor(t, s)
		if err := Verify(plans); err != nil {
			t.Fatalf("%v: %v", c.v, err)
		}
		plain := s
		plain.Variant = RingVariant
		ring := plansFor(t, plain)
		// The slices carry a slot's worth of wire bytes, not buffer bytes.
		if got, want := plans[0].SliceCapElems*int64(c.wir), ring[0].SliceCapElems*int64(c.elt); got != want {
			t.Fatalf("%v: slice cap %d wire bytes, the ring's %d buffer bytes", c.v, got, want)
		}
		for _, bad := range []struct {
			edit func(*Spec)
			want string
		}{
			{func(s *Spec) { s.Coll = AllGather }, "is an all-reduce, not a allgather"},
			{func(s *Spec) { s.Proto, s.BuffSize = LL, 8*256 }, "Simple protocol only, not LL"},
			{func(s *Spec) { s.EltSize = 8 }, "-byte elements, not 8"},
		} {
			b := s
			bad.edit(&b)
			if err := b.Validate(); err == nil || !strings.Contains(err.Error(), bad.want) {
				t.Errorf("%v: %v, want %q", c.v, err, bad.want)
			}
		}
	}
}
