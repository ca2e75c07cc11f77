package sim

import (
	"math"
	"strings"
	"testing"

	"github.com/ringo-ccl/ringo/ring"
	"github.com/ringo-ccl/ringo/tune"
)

// fifos are the GPU path's default FIFO sizes, indexed by ring.Protocol.
var fifos = [3]int{ring.LL: 512 << 10, ring.LL128: 4915200, ring.Simple: 4 << 20}

// tunerEntries measures m as `ringo tune` would: it simulates p's sweep at
// each channel count and fits it.
func tunerEntries(t *testing.T, m *Model, p ring.Protocol, chans ...int) []tune.Entry {
	t.Helper()
	par, err := m.Params(p)
	if err != nil {
		t.Fatal(err)
	}
	var out []tune.Entry
	for _, ch := range chans {
		var sw sweep
		for _, size := range tune.Sweep(p) {
			s := ring.Spec{Coll: ring.AllReduce, Ring: ring.Identity(2), Count: size / 4, EltSize: 4, Channels: ch, Proto: p, BuffSize: fifos[p]}
			plans := plansFor(t, s)
			e, err := newEngine(plans)
			if err != nil {
				t.Fatal(err)
			}
			sw.plans, sw.engines, sw.bus = append(sw.plans, plans), append(sw.engines, e), append(sw.bus, float64(size))
		}
		lat, bw, err := sw.fit(par)
		if err != nil {
			t.Fatal(err)
		}
		out = append(out, tune.Entry{Proto: p.String(), Channels: ch, LatencyUs: lat, BusBW: bw})
	}
	return out
}

// TestCalibrateRecoversAModel: entries measured from a known model give
// back a model that reproduces them within 3%, and predicts the known
// model's times within 15% across the sizes the entries were measured at.
// (Two numbers per channel count do not pin α against the launch overhead:
// models that differ there fit the same entries.)
func TestCalibrateRecoversAModel(t *testing.T) {
	truth := &Model{Protocols: []Params{
		{Proto: "LL", LaunchUs: 4, BlockUs: 0.04, AlphaUs: 1.2, ChannelGBs: 15, LinkGBs: 200, BuffBytes: fifos[ring.LL]},
		{Proto: "Simple", LaunchUs: 10, BlockUs: 0.02, AlphaUs: 0.5, ChannelGBs: 40, LinkGBs: 350, BuffBytes: fifos[ring.Simple]},
	}}
	chans := []int{1, 4, 16, 64}
	tm := &tune.Model{Machine: "synthetic", Ranks: 2}
	for _, p := range []ring.Protocol{ring.LL, ring.Simple} {
		tm.Entries = append(tm.Entries, tunerEntries(t, truth, p, chans...)...)
	}
	got, err := Calibrate(tm, fifos)
	if err != nil {
		t.Fatal(err)
	}
	for _, p := range []ring.Protocol{ring.LL, ring.Simple} {
		for i, e := range tunerEntries(t, got, p, chans...) {
			want := tm.Entries[i]
			if p == ring.Simple {
				want = tm.Entries[len(chans)+i]
			}
			if math.Abs(e.LatencyUs/want.LatencyUs-1) > 0.03 || math.Abs(e.BusBW/want.BusBW-1) > 0.03 {
				t.Errorf("%v %d channels: entry %+v, measured from the true model %+v", p, e.Channels, e, want)
			}
		}
		for _, ch := range []int{1, 8, 64} {
			for _, size := range tune.Sweep(p) {
				s := ring.Spec{Coll: ring.AllReduce, Ring: ring.Identity(2), Count: size / 4, EltSize: 4, Channels: ch, Proto: p, BuffSize: fifos[p]}
				plans := plansFor(t, s)
				want, _ := Predict(plans, truth)
				r, err := Predict(plans, got)
				if err != nil || math.Abs(r.TimeUs/want.TimeUs-1) > 0.15 {
					t.Errorf("%v %d channels %d B: %v µs, the true model %v µs (%v)", p, ch, size, r.TimeUs, want.TimeUs, err)
				}
			}
		}
	}
}

// TestCalibrateFromPoints: with the measured times kept in the entries,
// the calibration fits them, and the model it gives predicts the known
// model's times within 5% at every size and channel count measured.
func TestCalibrateFromPoints(t *testing.T) {
	truth := &Model{Protocols: []Params{
		{Proto: "LL", LaunchUs: 4, BlockUs: 0.04, AlphaUs: 1.2, ChannelGBs: 15, LinkGBs: 200, BuffBytes: fifos[ring.LL]},
	}}
	tm := &tune.Model{Machine: "synthetic", Ranks: 2}
	chans := []int{1, 4, 16, 64}
	times := map[int][]float64{}
	for _, e := range tunerEntries(t, truth, ring.LL, chans...) {
		for _, size := range tune.Sweep(ring.LL) {
			s := ring.Spec{Coll: ring.AllReduce, Ring: ring.Identity(2), Count: size / 4, EltSize: 4, Channels: e.Channels, Proto: ring.LL, BuffSize: fifos[ring.LL]}
			r, err := Predict(plansFor(t, s), truth)
			if err != nil {
				t.Fatal(err)
			}
			e.Us = append(e.Us, r.TimeUs)
		}
		e.LatencyUs, e.BusBW = 1, 1 // the points, not the line, must drive the fit
		times[e.Channels] = e.Us
		tm.Entries = append(tm.Entries, e)
	}
	got, err := Calibrate(tm, fifos)
	if err != nil {
		t.Fatal(err)
	}
	for _, ch := range chans {
		for i, size := range tune.Sweep(ring.LL) {
			s := ring.Spec{Coll: ring.AllReduce, Ring: ring.Identity(2), Count: size / 4, EltSize: 4, Channels: ch, Proto: ring.LL, BuffSize: fifos[ring.LL]}
			r, err := Predict(plansFor(t, s), got)
			if err != nil || math.Abs(r.TimeUs/times[ch][i]-1) > 0.05 {
				t.Errorf("LL %d channels %d B: %v µs, measured %v µs (%v)", ch, size, r.TimeUs, times[ch][i], err)
			}
		}
	}
}

// TestDefaultIsCalibratedFromTune: the built-in model is what Calibrate
// makes of h200x2-tune.json (ringo sim -calibrate sim/h200x2-tune.json).
func TestDefaultIsCalibratedFromTune(t *testing.T) {
	if testing.Short() {
		t.Skip("calibration takes seconds")
	}
	m := Default()
	var buff [3]int
	for _, p := range m.Protocols {
		pr, _ := tune.ProtocolOf(p.Proto)
		buff[pr] = p.BuffBytes
	}
	got, err := Calibrate(sourceModel(t), buff)
	if err != nil {
		t.Fatal(err)
	}
	if len(got.Protocols) != len(m.Protocols) {
		t.Fatalf("%d protocols, built-in %d", len(got.Protocols), len(m.Protocols))
	}
	for i, p := range got.Protocols {
		if p != m.Protocols[i] {
			t.Errorf("calibrated %+v\n built-in %+v: regenerate sim/h200x2.json", p, m.Protocols[i])
		}
	}
}

// sourceModel is the tuner model the built-in model is calibrated from.
func sourceModel(t *testing.T) *tune.Model {
	t.Helper()
	tm, err := tune.Parse(h200x2Tune)
	if err != nil {
		t.Fatal(err)
	}
	return tm
}

// TestDefaultReproducesTune: simulated and fitted as ringo tune fits
// measurements, the built-in model gives back every entry it was calibrated
// from within 20% (latency) and 25% (bandwidth).
func TestDefaultReproducesTune(t *testing.T) {
	m := Default()
	for _, e := range sourceModel(t).Entries {
		p, _ := tune.ProtocolOf(e.Proto)
		got := tunerEntries(t, m, p, e.Channels)[0]
		if math.Abs(got.LatencyUs/e.LatencyUs-1) > 0.20 || math.Abs(got.BusBW/e.BusBW-1) > 0.25 {
			t.Errorf("%s %d channels: %.2f µs + bytes / %.1f GB/s, the tuner's %.2f µs / %.1f GB/s",
				e.Proto, e.Channels, got.LatencyUs, got.BusBW, e.LatencyUs, e.BusBW)
		}
	}
}

func TestCalibrateErrors(t *testing.T) {
	one := &tune.Model{Machine: "m", Ranks: 2, Entries: []tune.Entry{{Proto: "LL", Channels: 4, LatencyUs: 8, BusBW: 20}}}
	for _, c := range []struct {
		tm   *tune.Model
		buff [3]int
		want string
	}{
		{&tune.Model{Machine: "m", Ranks: 1, Entries: one.Entries}, fifos, "measured 1 ranks"},
		{one, fifos, "entries at 1 channel count"},
		{one, [3]int{}, "no entries of a protocol with a FIFO size"},
	} {
		if _, err := Calibrate(c.tm, c.buff); err == nil || !strings.Contains(err.Error(), c.want) {
			t.Errorf("%+v: %v, want %q", c.tm, err, c.want)
		}
	}
}
