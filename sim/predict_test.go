package sim

import (
	"errors"
	"math"
	"strings"
	"testing"
	"time"

	"github.com/ringo-ccl/ringo/ring"
)

func plansFor(t testing.TB, s ring.Spec) []*ring.Plan {
	t.Helper()
	plans, err := PlanAll(s)
	if err != nil {
		t.Fatalf("%+v: %v", s, err)
	}
	return plans
}

func model(p Params) *Model { return &Model{Machine: "test", Protocols: []Params{p}} }

func near(got, want float64) bool { return math.Abs(got-want) <= 1e-9*math.Max(1, math.Abs(want)) }

// TestRingAllReduceClosedForm: a 2-rank ring all-reduce on C channels runs,
// per channel and loop, 3 steps of 2 slices; the 4 slices that send share
// the link, the 2 that only receive run at the channel's rate, and nobody
// ever waits. The simulation must give exactly that.
func TestRingAllReduceClosedForm(t *testing.T) {
	const slice = 1024 // bytes: Simple slices span 2 slots of 512
	for _, c := range []struct {
		channels       int
		chanGBs, link  float64
		wantSendGBs    float64
		loopsPerChanel int64
	}{
		{1, 20, 1000, 20, 4},
		{2, 20, 20, 10, 4}, // two channels share one link
		{4, 20, 1000, 20, 3},
	} {
		par := Params{Proto: "Simple", LaunchUs: 5, BlockUs: 0.25, AlphaUs: 0.5, ChannelGBs: c.chanGBs, LinkGBs: c.link}
		count := c.loopsPerChanel * int64(c.channels) * 2 * 2 * slice / 4 // loop: 2 chunks of 2 slices
		s := ring.Spec{Coll: ring.AllReduce, Ring: ring.Identity(2), Count: count, EltSize: 4, Channels: c.channels,
			Proto: ring.Simple, BuffSize: 8 * 512}
		r, err := Predict(plansFor(t, s), model(par))
		if err != nil {
			t.Fatal(err)
		}
		perLoop := 4*(par.AlphaUs+slice/(c.wantSendGBs*1e3)) + 2*(par.AlphaUs+slice/(c.chanGBs*1e3))
		want := par.LaunchUs + par.BlockUs*float64(c.channels) + float64(c.loopsPerChanel)*perLoop
		if !near(r.TimeUs, want) {
			t.Errorf("%d channels: %v µs, want %v", c.channels, r.TimeUs, want)
		}
		if wantN := int(c.loopsPerChanel) * c.channels * 2 * 6; r.Transfers != wantN {
			t.Errorf("%d channels: %d transfers, want %d", c.channels, r.Transfers, wantN)
		}
		if r.Bytes != count*4 || !near(r.AlgBW, float64(r.Bytes)/r.TimeUs/1e3) || !near(r.BusBW, r.AlgBW) {
			t.Errorf("%d channels: %+v", c.channels, r)
		}
	}
}

// handPlans builds one plan per rank from hand-written steps on one channel,
// one slice of one FIFO slot per step.
func handPlans(steps ...[]ring.Step) []*ring.Plan {
	var plans []*ring.Plan
	for r, st := range steps {
		s := ring.Spec{Coll: ring.AllReduce, Ring: ring.Identity(len(steps)), Rank: r, Count: 1, EltSize: 1,
			Channels: 1, Proto: ring.Simple, BuffSize: 8 * 16}
		plans = append(plans, &ring.Plan{Spec: s, SlicesPerStep: 1, SlotsPerSlice: 1, Channels: []ring.Channel{{Steps: st}}})
	}
	return plans
}

func send(to int32, n int64) ring.Step {
	return ring.Step{Prim: ring.Send, RecvPeer: -1, SendPeer: to, Count: n, SliceLen: max(n, 1)}
}

func recv(from int32, n int64) ring.Step {
	return ring.Step{Prim: ring.Recv, RecvPeer: from, SendPeer: -1, Count: n, SliceLen: max(n, 1)}
}

func local(n int64) ring.Step {
	return ring.Step{Prim: ring.Copy, RecvPeer: -1, SendPeer: -1, Count: n, SliceLen: n}
}

// unit costs 1 µs per 1000 bytes and nothing else.
var unit = Params{Proto: "Simple", ChannelGBs: 1, LinkGBs: 1000}

// TestCreditsBound: rank 1 is busy for 100 µs before it receives, so rank 0
// sends 8 slices (the FIFO's slots), then waits for each slot to be freed;
// its 50 µs of local work after the sends ends at 100+3+50 µs.
func TestCreditsBound(t *testing.T) {
	var r0, r1 []ring.Step
	for range 10 {
		r0 = append(r0, send(1, 1000))
	}
	r0 = append(r0, local(50000))
	r1 = append(r1, local(100000))
	for range 10 {
		r1 = append(r1, recv(0, 1000))
	}
	r, err := Predict(handPlans(r0, r1), model(unit))
	if err != nil {
		t.Fatal(err)
	}
	if !near(r.TimeUs, 153) {
		t.Fatalf("%v µs, want 153 (without credits it would be 110)", r.TimeUs)
	}
}

// TestAnyPeers: a program may send to any rank. Rank 0 sends to ranks 1 and
// 2 over two links, so they do not share; rank 2 then forwards to rank 1.
func TestAnyPeers(t *testing.T) {
	plans := handPlans(
		[]ring.Step{send(2, 4000), send(1, 1000)},
		[]ring.Step{recv(0, 1000), recv(2, 2000)},
		[]ring.Step{recv(0, 4000), send(1, 2000)},
	)
	r, err := Predict(plans, model(unit))
	if err != nil {
		t.Fatal(err)
	}
	// 0→2 ends at 4, 0→1 at 5; rank 2 receives until 8, sends until 10;
	// rank 1 receives [5, 6], then [10, 12].
	if !near(r.TimeUs, 12) {
		t.Fatalf("%v µs, want 12", r.TimeUs)
	}
}

// TestOneShotBeatsRingWhenSmall: the one-shot variant's one hop costs fewer
// slices than the ring's two at small sizes and twice the bytes at large.
func TestOneShotBeatsRingWhenSmall(t *testing.T) {
	m := Default()
	at := func(v ring.Variant, count int64) float64 {
		s := ring.Spec{Coll: ring.AllReduce, Ring: ring.Identity(2), Count: count, EltSize: 4, Channels: 8,
			Proto: ring.LL, BuffSize: 512 << 10, Variant: v}
		r, err := Predict(plansFor(t, s), m)
		if err != nil {
			t.Fatal(err)
		}
		return r.TimeUs
	}
	if small := 1 << 10; at(ring.OneShot, int64(small)) >= at(ring.RingVariant, int64(small)) {
		t.Errorf("4 KiB: one-shot %v µs, ring %v µs", at(ring.OneShot, int64(small)), at(ring.RingVariant, int64(small)))
	}
	if big := int64(64 << 20); at(ring.OneShot, big) <= at(ring.RingVariant, big) {
		t.Errorf("256 MiB: one-shot %v µs, ring %v µs", at(ring.OneShot, big), at(ring.RingVariant, big))
	}
}

// TestEveryCollective: every ring collective of 1 to 8 ranks simulates, and more
// bytes never take less time.
func TestEveryCollective(t *testing.T) {
	m := Default()
	for c := ring.AllReduce; c.Valid() && !c.P2P(); c++ { // the ring collectives (point-to-point plans come from NewP2P)
		for _, n := range []int{1, 2, 3, 8} {
			for _, p := range []ring.Protocol{ring.LL, ring.Simple} {
				par, _ := m.Params(p)
				prev := 0.0
				for _, count := range []int64{0, 1, 1000, 1 << 20} {
					s := ring.Spec{Coll: c, Ring: ring.Identity(n), Root: n - 1, Count: count, EltSize: 4, Channels: 4,
						Proto: p, BuffSize: par.BuffBytes}
					r, err := Predict(plansFor(t, s), m)
					if err != nil {
						t.Fatalf("%v %d ranks %v count %d: %v", c, n, p, count, err)
					}
					if r.TimeUs < prev || r.TimeUs < par.LaunchUs {
						t.Fatalf("%v %d ranks %v count %d: %v µs after %v", c, n, p, count, r.TimeUs, prev)
					}
					if want := float64(s.SizeBytes()) / r.TimeUs / 1e3 * c.BusFactor(n); !near(r.BusBW, want) {
						t.Fatalf("%v: busbw %v, want %v", c, r.BusBW, want)
					}
					prev = r.TimeUs
				}
			}
		}
	}
}

// TestLargePlanIsFast: 1 GiB on 64 channels simulates in well under a
// second, in time linear in its slices.
func TestLargePlanIsFast(t *testing.T) {
	m := Default()
	for _, p := range []ring.Protocol{ring.LL, ring.Simple} {
		par, _ := m.Params(p)
		s := ring.Spec{Coll: ring.AllReduce, Ring: ring.Identity(2), Count: 1 << 28, EltSize: 4, Channels: 64,
			Proto: p, BuffSize: par.BuffBytes}
		plans := plansFor(t, s)
		start := time.Now()
		r, err := Predict(plans, m)
		if el := time.Since(start); err != nil || el > 500*time.Millisecond {
			t.Fatalf("%v: %v in %v", p, err, el)
		}
		var slices int
		for _, pl := range plans {
			for _, ch := range pl.Channels {
				slices += len(ch.Steps) * pl.SlicesPerStep
			}
		}
		if r.Transfers != slices {
			t.Fatalf("%v: %d transfers for %d slices", p, r.Transfers, slices)
		}
	}
}

func TestBadInput(t *testing.T) {
	good := handPlans([]ring.Step{send(1, 10)}, []ring.Step{recv(0, 10)})
	if _, err := Predict(good, model(unit)); err != nil {
		t.Fatal(err)
	}
	wrongRank := handPlans([]ring.Step{send(1, 10)}, []ring.Step{recv(0, 10)})
	wrongRank[1].Spec.Rank = 0
	wrongCount := handPlans([]ring.Step{send(1, 10)}, []ring.Step{recv(0, 10)})
	wrongCount[1].Spec.Count = 2
	wrongSlots := handPlans([]ring.Step{send(1, 10)}, []ring.Step{recv(0, 10)})
	wrongSlots[1].SlotsPerSlice = 2
	cases := []struct {
		plans []*ring.Plan
		m     *Model
		is    error
		want  string
	}{
		{nil, model(unit), ErrInvalidPlans, "no plans"},
		{[]*ring.Plan{good[0], nil}, model(unit), ErrInvalidPlans, "plans[1] is nil"},
		{wrongRank, model(unit), ErrInvalidPlans, "plans[1] is rank 0's"},
		{wrongCount, model(unit), ErrInvalidPlans, "rank 1 plans"},
		{wrongSlots, model(unit), ErrInvalidPlans, "slices span 2 FIFO slots"},
		{good, nil, ErrInvalidModel, "nil model"},
		{good, model(Params{Proto: "LL", ChannelGBs: 1, LinkGBs: 1}), ErrInvalidModel, "no Simple parameters"},
		{good, model(Params{Proto: "Simple", ChannelGBs: 1}), ErrInvalidModel, "link_gbs 0"},
		{handPlans([]ring.Step{send(0, 10)}, []ring.Step{recv(0, 10)}), model(unit), ErrInvalidPlans, "ch0 rank 0 step 0 (send): peer 0"},
		{handPlans([]ring.Step{send(5, 10)}, []ring.Step{recv(0, 10)}), model(unit), ErrInvalidPlans, "peer 5"},
		{handPlans([]ring.Step{{Prim: ring.Send, RecvPeer: 1, SendPeer: 1, Count: 1, SliceLen: 1}}, []ring.Step{recv(0, 10)}),
			model(unit), ErrInvalidPlans, "peers recv 1 send 1 do not match"},
		{handPlans([]ring.Step{send(1, 10), {Prim: ring.Send, RecvPeer: -1, SendPeer: 1, Count: 10, SliceLen: 5}}, []ring.Step{recv(0, 10)}),
			model(unit), ErrInvalidPlans, "rank 0 step 1 (send): 1 slices of 5 elements cannot carry 10"},
		// Unmatched: one send too many, a receive never sent, sizes that differ, a cycle.
		{handPlans([]ring.Step{send(1, 10), send(1, 10)}, []ring.Step{recv(0, 10)}), model(unit), ErrUnmatched,
			"allreduce ch0 rank 0 step 1 sent rank 1 1 slices it never receives"},
		{handPlans([]ring.Step{send(1, 10)}, []ring.Step{recv(0, 10), recv(0, 10)}), model(unit), ErrUnmatched,
			"ch0 rank 1 step 1 (recv) slice 0 waits for data from rank 0, which sent 1 slices on ch0 and has finished"},
		{handPlans([]ring.Step{send(1, 10)}, []ring.Step{recv(0, 20)}), model(unit), ErrUnmatched,
			"ch0 rank 1 step 0 (recv) slice 0 expects 20 bytes from rank 0, which sent 10 (its step 0)"},
		{handPlans([]ring.Step{recv(1, 10), send(1, 10)}, []ring.Step{recv(0, 10), send(0, 10)}), model(unit), ErrUnmatched,
			"ch0 rank 0 step 0 (recv) slice 0 waits for data from rank 1, which sent 0 slices on ch0 and waits at its step 0 (recv)"},
	}
	for i, c := range cases {
		_, err := Predict(c.plans, c.m)
		if !errors.Is(err, c.is) || !strings.Contains(err.Error(), c.want) {
			t.Errorf("case %d: %v\nwant %v with %q", i, err, c.is, c.want)
		}
	}
}

// TestDeterministic: the same plans give the same result, whatever order
// the programs were visited in before.
func TestDeterministic(t *testing.T) {
	s := ring.Spec{Coll: ring.AllReduce, Ring: ring.Ring{Order: []int{2, 0, 3, 1}}, Count: 123457, EltSize: 2, Channels: 3,
		Proto: ring.LL, BuffSize: 512 << 10}
	plans := plansFor(t, s)
	a, err := Predict(plans, Default())
	if err != nil {
		t.Fatal(err)
	}
	b, _ := Predict(plans, Default())
	if a != b {
		t.Fatalf("%+v then %+v", a, b)
	}
}
