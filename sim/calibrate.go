package sim

import (
	"fmt"
	"math"
	"sort"

	"github.com/ringo-ccl/ringo/ring"
	"github.com/ringo-ccl/ringo/tune"
)

// Calibrate derives a model from a tuner model. The tuner's entries are
// fits of measured all-reduce sweeps (tune.Sweep) to latency + bytes/busbw,
// one per protocol and channel count; for every protocol with entries at
// two channel counts or more (and a FIFO size in buffBytes, indexed by
// ring.Protocol), Calibrate finds the parameters whose simulated sweeps of
// the same plans best reproduce the measurements: where an entry keeps its
// measured times (Entry.Us), the sum of the squared logarithms of simulated
// over measured time at every size; otherwise its line — the simulated
// sweep fitted the same way (tune.Fit), the squared logarithms of the
// ratios of fitted to entry latency and bus bandwidth (Nelder–Mead over the
// parameters' logarithms). The points are the better target: a line over
// 8 B…1 GiB misses the mid sizes by up to a fifth. Entries of one channel count measure the
// channel's rate and α; entries of many channels, the link's capacity;
// every entry's latency, the launch overhead.
//
// Calibrate is deterministic and takes seconds.
func Calibrate(tm *tune.Model, buffBytes [3]int) (*Model, error) {
	if tm.Ranks < 2 {
		return nil, fmt.Errorf("sim: calibrate: tuner model %q measured %d ranks, need ≥ 2", tm.Machine, tm.Ranks)
	}
	m := &Model{
		Machine: tm.Machine,
		Ranks:   tm.Ranks,
		From:    "sim.Calibrate: simulated all-reduce sweeps fitted to the tuner model's entries",
	}
	for p := ring.LL; p.Valid(); p++ {
		var entries []tune.Entry
		for _, e := range tm.Entries {
			if e.Proto == p.String() {
				entries = append(entries, e)
			}
		}
		if len(entries) == 0 || buffBytes[p] == 0 {
			continue
		}
		par, err := calibrateProto(p, entries, tm.Ranks, buffBytes[p])
		if err != nil {
			return nil, err
		}
		m.Protocols = append(m.Protocols, par)
	}
	if len(m.Protocols) == 0 {
		return nil, fmt.Errorf("sim: calibrate: tuner model %q has no entries of a protocol with a FIFO size", tm.Machine)
	}
	return m, m.Validate()
}

// sweep is one tuner entry and the plans of its sizes.
type sweep struct {
	entry   tune.Entry
	plans   [][]*ring.Plan // per size, per rank
	engines []*engine      // per size
	bus     []float64      // bus bytes per size
}

func calibrateProto(p ring.Protocol, entries []tune.Entry, n, buff int) (Params, error) {
	chans := map[int]bool{}
	var sweeps []sweep
	for _, e := range entries {
		chans[e.Channels] = true
		sw := sweep{entry: e}
		for _, size := range tune.Sweep(p) {
			spec := ring.Spec{Coll: ring.AllReduce, Ring: ring.Identity(n), Count: size / 4, EltSize: 4,
				Channels: e.Channels, Proto: p, BuffSize: buff}
			plans, err := PlanAll(spec)
			if err != nil {
				return Params{}, fmt.Errorf("sim: calibrate %v: %w", p, err)
			}
			if err := checkPlans(plans); err != nil {
				return Params{}, err
			}
			e, err := newEngine(plans)
			if err != nil {
				return Params{}, err
			}
			sw.plans, sw.engines = append(sw.plans, plans), append(sw.engines, e)
			sw.bus = append(sw.bus, float64(size)*ring.AllReduce.BusFactor(n))
		}
		sweeps = append(sweeps, sw)
	}
	if len(chans) < 2 {
		return Params{}, fmt.Errorf("sim: calibrate %v: entries at %d channel count, need 2 or more", p, len(chans))
	}
	sort.Slice(sweeps, func(i, j int) bool { return sweeps[i].entry.Channels < sweeps[j].entry.Channels })

	at := func(x []float64) Params {
		return Params{Proto: p.String(), LaunchUs: math.Exp(x[0]), AlphaUs: math.Exp(x[1]),
			ChannelGBs: math.Exp(x[2]), LinkGBs: math.Exp(x[3]), BlockUs: math.Exp(x[4]), BuffBytes: buff}
	}
	misfit := func(x []float64) float64 {
		par := at(x)
		var sum float64
		for _, sw := range sweeps {
			if len(sw.entry.Us) > 0 { // the measured points themselves
				us, err := sw.times(&par)
				if err != nil {
					return math.Inf(1)
				}
				for i, t := range us {
					sum += sq(math.Log(t / sw.entry.Us[i]))
				}
				continue
			}
			lat, bw, err := sw.fit(&par)
			if err != nil {
				return math.Inf(1)
			}
			sum += sq(math.Log(lat/sw.entry.LatencyUs)) + sq(math.Log(bw/sw.entry.BusBW))
		}
		return sum
	}
	// Start from what one channel and the most channels suggest.
	first, last := sweeps[0].entry, sweeps[len(sweeps)-1].entry
	x := []float64{
		math.Log(first.LatencyUs / 2),
		math.Log(first.LatencyUs / 20),
		math.Log(1.5 * first.BusBW / float64(first.Channels)),
		math.Log(1.2 * last.BusBW),
		math.Log(first.LatencyUs / 200),
	}
	for range 3 { // restarts from the best point found, as Nelder–Mead wants
		x, _ = minimize(misfit, x, math.Ln2, 400, 1e-9)
	}
	par := at(x)
	if err := par.validate(); err != nil {
		return Params{}, err
	}
	return round(par), nil
}

// times simulates the sweep with par.
func (sw *sweep) times(par *Params) ([]float64, error) {
	us := make([]float64, len(sw.plans))
	for i, plans := range sw.plans {
		r, err := sw.engines[i].predict(plans, par)
		if err != nil {
			return nil, err
		}
		us[i] = r.TimeUs
	}
	return us, nil
}

// fit simulates the sweep with par and fits it as the tuner does.
func (sw *sweep) fit(par *Params) (lat, bw float64, err error) {
	us, err := sw.times(par)
	if err != nil {
		return 0, 0, err
	}
	return tune.Fit(sw.bus, us)
}

// PlanAll returns every rank's plan of spec (spec.Rank is ignored).
func PlanAll(spec ring.Spec) ([]*ring.Plan, error) {
	plans := make([]*ring.Plan, spec.Ring.Size())
	for r := range plans {
		spec.Rank = r
		p, err := ring.New(spec)
		if err != nil {
			return nil, err
		}
		plans[r] = p
	}
	return plans, nil
}

func sq(v float64) float64 { return v * v }

// round keeps four significant digits, so that the model file reads well.
func round(p Params) Params {
	r := func(v float64) float64 {
		if v == 0 {
			return 0
		}
		e := math.Pow(10, 3-math.Floor(math.Log10(math.Abs(v))))
		return math.Round(v*e) / e
	}
	p.BlockUs, p.LaunchUs, p.AlphaUs, p.ChannelGBs, p.LinkGBs = r(p.BlockUs), r(p.LaunchUs), r(p.AlphaUs), r(p.ChannelGBs), r(p.LinkGBs)
	return p
}
