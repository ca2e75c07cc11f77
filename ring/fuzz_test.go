package ring

import (
	"math/rand/v2"
	"testing"
)

// FuzzPlan builds every rank's plan for a fuzzed spec (every variant, by
// the seed) and checks the ring's invariants with
// Verify. Invalid specs must be rejected by Validate, never
// produce a plan that Verify faults.
func FuzzPlan(f *testing.F) {
	f.Add(uint8(0), uint8(4), uint64(0), int64(1000), uint8(4), uint8(2), uint8(2), uint16(64), uint8(1))
	f.Add(uint8(1), uint8(3), uint64(7), int64(97), uint8(2), uint8(1), uint8(0), uint16(16), uint8(0))
	f.Add(uint8(2), uint8(5), uint64(9), int64(13), uint8(8), uint8(3), uint8(1), uint16(32), uint8(4))
	f.Add(uint8(3), uint8(2), uint64(1), int64(4099), uint8(1), uint8(4), uint8(2), uint16(8), uint8(1))
	f.Add(uint8(4), uint8(7), uint64(3), int64(0), uint8(12), uint8(1), uint8(2), uint16(128), uint8(6))
	f.Fuzz(func(t *testing.T, coll, n uint8, seed uint64, count int64, elt, nch, proto uint8, buffUnits uint16, root uint8) {
		nr := int(n%12) + 1
		s := Spec{
			Coll:     Collective(coll % uint8(numRingColls)),
			Ring:     Ring{Order: rand.New(rand.NewPCG(seed, 0)).Perm(nr)},
			Root:     int(root) % nr,
			Count:    count % 5000,
			EltSize:  int(elt%16) + 1,
			Channels: int(nch%5) + 1,
			Proto:    Protocol(proto % uint8(numProtocols)),
			BuffSize: NSteps * lineBytes(Protocol(proto%uint8(numProtocols))) * (int(buffUnits%256) + 1),
		}
		switch {
		case nr == 2 && seed%3 == 1:
			s.Variant = OneShot
		case seed%3 == 2:
			s.Variant = Bidirectional
		}
		if err := s.Validate(); err != nil {
			if s.Count >= 0 {
				// Only a buffer too small for the element may be refused here.
				s.BuffSize = NSteps * 128 * 64
				if err2 := s.Validate(); err2 != nil {
					t.Fatalf("valid spec %+v rejected: %v", s, err2)
				}
			}
			return
		}
		plans := make([]*Plan, nr)
		for r := range plans {
			s.Rank = r
			p, err := New(s)
			if err != nil {
				t.Fatalf("New(%+v): %v", s, err)
			}
			plans[r] = p
		}
		if err := Verify(plans); err != nil {
			t.Fatalf("%+v: %v", s, err)
		}
	})
}
