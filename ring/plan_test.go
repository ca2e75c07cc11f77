package ring

import (
	"errors"
	"fmt"
	"math"
	"math/rand/v2"
	"strings"
	"testing"
)

const (
	defaultSimpleBuff = 4 << 20
	defaultLLBuff     = 512 << 10
	defaultLL128Buff  = 4915200
)

func plansFor(t testing.TB, s Spec) []*Plan {
	t.Helper()
	plans := make([]*Plan, s.Ring.Size())
	for r := range plans {
		s.Rank = r
		p, err := New(s)
		if err != nil {
			t.Fatalf("New(%+v): %v", s, err)
		}
		plans[r] = p
	}
	return plans
}

func prims(steps []Step) string {
	var b []string
	for _, s := range steps {
		b = append(b, fmt.Sprintf("%v:%d", s.Prim, s.Chunk))
	}
	return strings.Join(b, " ")
}

func TestAllReduceSequence(t *testing.T) {
	s := Spec{Coll: AllReduce, Ring: Identity(4), Count: 1000, EltSize: 4, Channels: 1, Proto: Simple, BuffSize: defaultSimpleBuff}
	cases := []struct {
		rank int
		want string
	}{
		{0, "send:3 recvReduceSend:2 recvReduceSend:1 recvReduceCopySend:0 recvCopySend:3 recvCopySend:2 recv:1"},
		{2, "send:1 recvReduceSend:0 recvReduceSend:3 recvReduceCopySend:2 recvCopySend:1 recvCopySend:0 recv:3"},
	}
	for _, c := range cases {
		s.Rank = c.rank
		p, err := New(s)
		if err != nil {
			t.Fatal(err)
		}
		if got := prims(p.Channels[0].Steps); got != c.want {
			t.Errorf("rank %d:\n got %s\nwant %s", c.rank, got, c.want)
		}
		st := p.Channels[0].Steps[0]
		if st.RecvPeer != -1 || st.SendPeer != int32((c.rank+1)%4) {
			t.Errorf("rank %d send step peers %d/%d", c.rank, st.RecvPeer, st.SendPeer)
		}
	}
}

func TestOtherSequences(t *testing.T) {
	base := Spec{Ring: Identity(4), Count: 100, EltSize: 4, Channels: 1, Proto: Simple, BuffSize: defaultSimpleBuff, Root: 1}
	cases := []struct {
		coll Collective
		rank int
		want string
	}{
		{ReduceScatter, 0, "send:3 recvReduceSend:2 recvReduceSend:1 recvReduceCopy:0"},
		{AllGather, 0, "copySend:0 recvCopySend:3 recvCopySend:2 recv:1"},
		{Broadcast, 1, "copySend:0"},
		{Broadcast, 2, "recvCopySend:0"},
		{Broadcast, 0, "recv:0"},
		{Reduce, 2, "send:0"},
		{Reduce, 3, "recvReduceSend:0"},
		{Reduce, 1, "recvReduceCopy:0"},
	}
	for _, c := range cases {
		s := base
		s.Coll, s.Rank = c.coll, c.rank
		p, err := New(s)
		if err != nil {
			t.Fatal(err)
		}
		if got := prims(p.Channels[0].Steps); got != c.want {
			t.Errorf("%v rank %d:\n got %s\nwant %s", c.coll, c.rank, got, c.want)
		}
	}
}

// TestNCCLSizes checks the chunk and slice sizes against NCCL's for the
// default buffers (reference/nccl-internals.md §1.3).
func TestNCCLSizes(t *testing.T) {
	cases := []struct {
		proto      Protocol
		buff       int
		chunkBytes int64
		slices     int
		slots      int
	}{
		{Simple, defaultSimpleBuff, 2 << 20, 2, 2},
		{LL, defaultLLBuff, 32 << 10, 1, 1},
		{LL128, defaultLL128Buff, 576000, 1, 1},
	}
	for _, c := range cases {
		p, err := New(Spec{Coll: AllReduce, Ring: Identity(8), Count: 1 << 20, EltSize: 4, Channels: 1, Proto: c.proto, BuffSize: c.buff})
		if err != nil {
			t.Fatal(err)
		}
		if got := p.ChunkCount * 4; got != c.chunkBytes {
			t.Errorf("%v chunk %d bytes, want %d", c.proto, got, c.chunkBytes)
		}
		if p.SlicesPerStep != c.slices || p.SlotsPerSlice != c.slots {
			t.Errorf("%v %d slices × %d slots, want %d × %d", c.proto, p.SlicesPerStep, p.SlotsPerSlice, c.slices, c.slots)
		}
	}
}

// TestNCCLWorkedExample is NCCL's own: 8 ranks, 1 GiB of float32, 16
// channels, Simple with default buffers → 16 ranges of 64 MiB, 4 loops of
// 15 primitive calls each per channel.
func TestNCCLWorkedExample(t *testing.T) {
	p, err := New(Spec{Coll: AllReduce, Ring: Identity(8), Count: 1 << 28, EltSize: 4, Channels: 16, Proto: Simple, BuffSize: defaultSimpleBuff})
	if err != nil {
		t.Fatal(err)
	}
	for c, ch := range p.Channels {
		if ch.Count != 16<<20 || ch.Offset != int64(c)*16<<20 {
			t.Fatalf("channel %d range [%d,+%d)", c, ch.Offset, ch.Count)
		}
		if len(ch.Steps) != 4*15 {
			t.Fatalf("channel %d has %d steps, want 60", c, len(ch.Steps))
		}
		for _, st := range ch.Steps {
			if st.Count != 1<<19 || st.SliceLen != 1<<18 {
				t.Fatalf("channel %d step %+v, want count 2 MiB in slices of 1 MiB", c, st)
			}
		}
	}
}

func orders(n int, rng *rand.Rand) []Ring {
	id := Identity(n)
	rev := make([]int, n)
	for i := range rev {
		rev[i] = n - 1 - i
	}
	perm := rng.Perm(n)
	return []Ring{id, {Order: rev}, {Order: perm}}
}

// TestVerifyGrid runs the symbolic checker over every collective on a grid of
// rank counts, ring orders, counts (0, 1, primes, smaller than ranks ×
// channels, several loops), element sizes, channels and protocols.
func TestVerifyGrid(t *testing.T) {
	rng := rand.New(rand.NewPCG(1, 2))
	counts := []int64{0, 1, 2, 3, 7, 13, 31, 97, 256, 1009, 4099}
	elts := []int{1, 2, 3, 4, 8, 12}
	type pb struct {
		p Protocol
		b int
	}
	protos := []pb{{Simple, 8 * 64}, {Simple, 8 * 512}, {LL, 8 * 32}, {LL, 8 * 256}, {LL128, 8 * 256}}
	ns := []int{1, 2, 3, 4, 5, 8}
	if testing.Short() {
		ns = []int{1, 2, 3, 5}
	}
	for c := range numRingColls {
		for _, n := range ns {
			for _, ring := range orders(n, rng) {
				for _, count := range counts {
					// Every count against a few sampled shapes; the fuzz
					// target covers the rest of the space.
					for range 3 {
						pr := protos[rng.IntN(len(protos))]
						s := Spec{Coll: c, Ring: ring, Root: rng.IntN(n), Count: count, EltSize: elts[rng.IntN(len(elts))],
							Channels: 1 + rng.IntN(3), Proto: pr.p, BuffSize: pr.b, Variant: Variant(rng.IntN(2)) * Bidirectional}
						if err := s.Validate(); err != nil {
							continue // buffer too small for this element size
						}
						if err := Verify(plansFor(t, s)); err != nil {
							t.Fatalf("%+v: %v", s, err)
						}
					}
				}
			}
		}
	}
}

func TestValidate(t *testing.T) {
	ok := Spec{Coll: AllReduce, Ring: Identity(4), Count: 10, EltSize: 4, Channels: 2, Proto: Simple, BuffSize: defaultSimpleBuff}
	cases := []struct {
		name string
		mod  func(*Spec)
		want string
	}{
		{"collective", func(s *Spec) { s.Coll = 9 }, "unknown collective"},
		{"no ranks", func(s *Spec) { s.Ring = Ring{} }, "need at least 1"},
		{"not a permutation", func(s *Spec) { s.Ring = Ring{Order: []int{0, 1, 1, 3}} }, "rank 1 twice"},
		{"rank out of ring", func(s *Spec) { s.Ring = Ring{Order: []int{0, 1, 4, 3}} }, "outside [0, 4)"},
		{"rank", func(s *Spec) { s.Rank = 4 }, "rank 4 outside [0, 4)"},
		{"negative rank", func(s *Spec) { s.Rank = -1 }, "rank -1 outside"},
		{"root", func(s *Spec) { s.Coll, s.Root = Broadcast, 7 }, "root 7 outside [0, 4)"},
		{"element size", func(s *Spec) { s.EltSize = 0 }, "element size 0"},
		{"negative count", func(s *Spec) { s.Count = -1 }, "count -1 is negative"},
		{"byte overflow", func(s *Spec) { s.Count = math.MaxInt64 / 2 }, "overflows"},
		{"rank overflow", func(s *Spec) { s.Coll, s.Count, s.EltSize = AllGather, math.MaxInt64/3, 1 }, "× 4 ranks overflows"},
		{"channels", func(s *Spec) { s.Channels = 0 }, "0 channels"},
		{"too many channels", func(s *Spec) { s.Channels = 65 }, "65 channels"},
		{"protocol", func(s *Spec) { s.Proto = 3 }, "unknown protocol"},
		{"buffer", func(s *Spec) { s.BuffSize = 1000 }, "buffer size 1000"},
		{"LL128 buffer", func(s *Spec) { s.Proto, s.BuffSize = LL128, 8*16 }, "multiple of 1024"},
		{"buffer too small", func(s *Spec) { s.EltSize, s.BuffSize = 1000, 8*64 }, "too small"},
		{"variant", func(s *Spec) { s.Variant = 7 }, "unknown variant"},
		{"oneshot on 4 ranks", func(s *Spec) { s.Variant = OneShot }, "oneshot needs 2 ranks"},
	}
	for _, c := range cases {
		s := ok
		c.mod(&s)
		err := s.Validate()
		if !errors.Is(err, ErrInvalid) || !strings.Contains(err.Error(), c.want) {
			t.Errorf("%s: got %v, want an ErrInvalid containing %q", c.name, err, c.want)
		}
		if _, err := New(s); err == nil {
			t.Errorf("%s: New accepted the spec", c.name)
		}
	}
	if err := ok.Validate(); err != nil {
		t.Fatalf("valid spec rejected: %v", err)
	}
}

func TestBuildReusesMemory(t *testing.T) {
	big := Spec{Coll: AllReduce, Ring: Identity(8), Count: 1 << 20, EltSize: 4, Channels: 4, Proto: LL, BuffSize: defaultLLBuff}
	small := big
	small.Count = 12345
	var p Plan
	if err := p.Build(big); err != nil {
		t.Fatal(err)
	}
	allocs := testing.AllocsPerRun(100, func() {
		if err := p.Build(small); err != nil {
			t.Fatal(err)
		}
		if err := p.Build(big); err != nil {
			t.Fatal(err)
		}
	})
	if allocs != 0 {
		t.Fatalf("Build allocates %v times per call on reused memory", allocs)
	}
	fresh, _ := New(big)
	if len(fresh.Channels) != len(p.Channels) || prims(fresh.Channels[2].Steps) != prims(p.Channels[2].Steps) {
		t.Fatal("rebuilt plan differs from a fresh one")
	}
}

// TestVerifyCatchesBrokenPlans makes sure the checker is not vacuous.
func TestVerifyCatchesBrokenPlans(t *testing.T) {
	s := Spec{Coll: AllReduce, Ring: Identity(3), Count: 100, EltSize: 4, Channels: 1, Proto: Simple, BuffSize: 8 * 64}
	breaks := []struct {
		name string
		mod  func([]*Plan)
		want string
	}{
		{"double reduce", func(p []*Plan) { p[1].Channels[0].Steps[1].Chunk = 0; p[1].Channels[0].Steps[0].Prim = RecvReduceSend }, ""},
		{"shifted offset", func(p []*Plan) { p[0].Channels[0].Steps[1].InOff += 16 }, ""},
		{"dropped step", func(p []*Plan) {
			st := p[2].Channels[0].Steps
			p[2].Channels[0].Steps = st[:len(st)-1]
		}, ""},
		{"wrong length", func(p []*Plan) { p[1].Channels[0].Steps[0].Count-- }, ""},
		{"misaligned", func(p []*Plan) { p[1].Channels[0].Steps[0].SliceLen = 3 }, "slice length"},
		{"wrong peer", func(p []*Plan) { p[0].Channels[0].Steps[0].SendPeer = 2 }, ""},
		{"self", func(p []*Plan) { p[0].Channels[0].Steps[0].SendPeer = 0 }, "not another rank"},
		{"out of range", func(p []*Plan) { p[1].Channels[0].Steps[1].RecvPeer = 3 }, "not another rank"},
	}
	for _, b := range breaks {
		plans := plansFor(t, s)
		b.mod(plans)
		err := Verify(plans)
		if err == nil || !strings.Contains(err.Error(), b.want) {
			t.Errorf("%s: Verify returned %v", b.name, err)
		}
	}
}
