package main

import (
	"errors"
	"flag"
	"fmt"
	"io"
	"math"
	"os"
	"strings"

	"github.com/ringo-ccl/ringo"
	"github.com/ringo-ccl/ringo/bench"
	"github.com/ringo-ccl/ringo/internal/env"
	"github.com/ringo-ccl/ringo/ring"
	"github.com/ringo-ccl/ringo/sim"
	"github.com/ringo-ccl/ringo/tune"
)

// simFlags are the parsed command line of "ringo sim".
type simFlags struct {
	o         bench.Options
	ranks     int
	channels  int     // 0: the tuner's choice
	allowed   [3]bool // protocols the tuner may pick, indexed by ring.Protocol
	variant   ring.Variant
	group     int // the hierarchical variant's ranks per group
	tuner     *tune.Model
	model     *sim.Model
	csv       string
	label     string
	compare   string
	tolerance float64 // %
	from      int64   // bytes: the verdict counts sizes from here
	calibrate string  // a tuner model file to calibrate from
}

func parseSimFlags(args []string) (*simFlags, error) {
	fs := flag.NewFlagSet("sim", flag.ContinueOnError)
	f := &simFlags{o: bench.Defaults()}
	minB := fs.String("b", "8", "minimum size in bytes (K, M, G suffixes)")
	maxB := fs.String("e", "64M", "maximum size in bytes")
	step := fs.String("i", "1M", "additive size step when -f is 0")
	fs.Int64Var(&f.o.StepFactor, "f", 2, "multiplicative size step (0: additive steps of -i)")
	colls := fs.String("coll", "all_reduce", "collectives: all_reduce reduce_scatter all_gather broadcast reduce (comma list) or all")
	dtype := fs.String("d", "float", "datatype (only its size matters)")
	fs.IntVar(&f.o.Root, "r", 0, "root of broadcast and reduce")
	fs.IntVar(&f.ranks, "ranks", 2, "ranks")
	gpus := fs.String("gpus", "", "GPU ordinals as ringo bench takes them (e.g. 0,1): sets -ranks to their count")
	fs.IntVar(&f.channels, "channels", 0, "channels per collective (0: the tuner's choice)")
	proto := fs.String("proto", "", "protocols allowed, NCCL_PROTO syntax (LL, Simple, ^LL); empty: all, the tuner picks")
	variant := fs.String("variant", "ring", "plan generator: ring, oneshot, bidirectional, bf16wire, fp32wire, hierarchical")
	fs.IntVar(&f.group, "group", 0, "hierarchical: ranks per group (0: the default for the rank count)")
	tuneFile := fs.String("tune", "", "tuner model that picks protocol and channels (default: built-in, tune/h200x2.json)")
	modelFile := fs.String("model", "", "sim model JSON (default: built-in, sim/h200x2.json)")
	fs.StringVar(&f.csv, "csv", "", "also write the predictions to this CSV file")
	fs.StringVar(&f.label, "label", "sim", "series label of the CSV rows")
	fs.StringVar(&f.compare, "compare", "", "measured nccl-tests table (or CSV) to compare the predictions with")
	fs.Float64Var(&f.tolerance, "tolerance", 15, "±% within which a prediction counts as right")
	from := fs.String("from", "64K", "the verdict counts sizes from this one up")
	fs.StringVar(&f.calibrate, "calibrate", "", "print the model calibrated from this tuner model file (ringo tune -o) and exit")
	fs.SetOutput(os.Stderr)
	if err := fs.Parse(args); err != nil {
		return nil, err
	}
	if fs.NArg() > 0 {
		return nil, fmt.Errorf("unexpected argument %q", fs.Arg(0))
	}
	err := parseSizes(sizeFlag{"-b", *minB, &f.o.MinBytes}, sizeFlag{"-e", *maxB, &f.o.MaxBytes},
		sizeFlag{"-i", *step, &f.o.StepBytes}, sizeFlag{"-from", *from, &f.from})
	if err != nil {
		return nil, err
	}
	if f.o.Colls, err = bench.ParseColls(*colls); err != nil {
		return nil, fmt.Errorf("-coll: %w", err)
	}
	for _, c := range f.o.Colls {
		if _, ok := c.Ring(); !ok {
			return nil, fmt.Errorf("-coll: the model has the ring collectives, not %v", c)
		}
	}
	if f.o.Types, err = bench.ParseTypes(*dtype); err != nil || len(f.o.Types) != 1 {
		return nil, fmt.Errorf("-d %q: want one datatype (%v)", *dtype, err)
	}
	if *gpus != "" {
		f.ranks = len(strings.Split(*gpus, ","))
	}
	if f.variant, err = ring.ParseVariant(*variant); err != nil {
		return nil, fmt.Errorf("-variant: %w", err)
	}
	if err := f.variant.ValidFor(f.ranks); err != nil {
		return nil, fmt.Errorf("-variant: %w", err)
	}
	if f.group == 0 {
		f.group = ring.DefaultGroupSize(f.ranks)
	}
	if _, err := ring.NewHierarchy(ring.Identity(max(f.ranks, 1)), f.group); err != nil {
		return nil, fmt.Errorf("-group: %w", err)
	}
	f.allowed = [3]bool{true, true, true}
	if *proto != "" {
		set, err := env.ParseList(*proto, []string{ring.LL.String(), ring.LL128.String(), ring.Simple.String()}, "allreduce")
		if err != nil {
			return nil, fmt.Errorf("-proto: %w", err)
		}
		copy(f.allowed[:], set)
		if f.allowed == [3]bool{} {
			return nil, fmt.Errorf("-proto %q allows no protocol", *proto)
		}
	}
	f.tuner, f.model = tune.Default(), sim.Default()
	if *tuneFile != "" {
		if f.tuner, err = tune.Load(*tuneFile); err != nil {
			return nil, fmt.Errorf("-tune: %w", err)
		}
	}
	if *modelFile != "" {
		if f.model, err = sim.Load(*modelFile); err != nil {
			return nil, fmt.Errorf("-model: %w", err)
		}
	}
	switch {
	case f.ranks < 1:
		return nil, fmt.Errorf("-ranks %d: need at least 1", f.ranks)
	case f.channels < 0 || f.channels > ring.MaxChannels:
		return nil, fmt.Errorf("-channels %d: need 0 (the tuner's choice) or 1…%d", f.channels, ring.MaxChannels)
	case f.compare != "" && len(f.o.Colls) != 1:
		return nil, errors.New("-compare needs one collective (-coll)")
	case !(f.tolerance > 0):
		return nil, fmt.Errorf("-tolerance %v: need > 0", f.tolerance)
	}
	return f, f.o.Validate(f.ranks)
}

// gpuFIFO is the FIFO size of a GPU connection with protocol p, as a GPU
// communicator sets it by default.
func gpuFIFO(p ring.Protocol) int {
	return [3]int{ring.LL: ringo.DefaultGPULLBuffSize, ring.LL128: ringo.DefaultGPULL128BuffSize, ring.Simple: ringo.DefaultGPUBuffSize}[p]
}

func simMain(args []string) error { return runSim(args, os.Stdout) }

// runSim is "ringo sim": it predicts a sweep with the cost model, prints a
// table, and with -compare sets the predictions beside a measured table.
func runSim(args []string, out io.Writer) error {
	f, err := parseSimFlags(args)
	if err != nil {
		return err
	}
	if f.calibrate != "" {
		tm, err := tune.Load(f.calibrate)
		if err != nil {
			return err
		}
		m, err := sim.Calibrate(tm, [3]int{gpuFIFO(ring.LL), gpuFIFO(ring.LL128), gpuFIFO(ring.Simple)})
		if err != nil {
			return err
		}
		m.From = fmt.Sprintf("ringo sim -calibrate %s: %s", f.calibrate, m.From)
		return m.Encode(out)
	}
	var measured map[int64]bench.Point
	if f.compare != "" {
		if measured, err = readMeasured(f.compare); err != nil {
			return err
		}
	}
	var pts []bench.Point
	var cmp comparison
	for _, coll := range f.o.Colls {
		fmt.Fprintf(out, "# ringo sim: %s, %v, %d ranks, %v variant; model %q\n", coll, f.o.Types[0], f.ranks, f.variant, f.model.Machine)
		fmt.Fprintf(out, "#%13s %13s %9s %7s %3s %10s %9s %9s", "size", "count", "type", "proto", "ch", "time", "algbw", "busbw")
		if measured != nil {
			fmt.Fprintf(out, " %9s %9s %7s %7s", "time", "busbw", "error", "verdict")
		}
		fmt.Fprintf(out, "\n#%13s %13s %9s %7s %3s %10s %9s %9s", "(B)", "(elements)", "", "", "", "(us)", "(GB/s)", "(GB/s)")
		if measured != nil {
			fmt.Fprintf(out, " %9s %9s %7s %7s", "meas(us)", "meas", "(%)", "")
		}
		fmt.Fprintln(out)
		for _, size := range f.o.Sizes() {
			pt, proto, ch, err := f.predict(coll, size)
			if err != nil {
				return fmt.Errorf("%s %d bytes: %w", coll, size, err)
			}
			pts = append(pts, pt)
			fmt.Fprintf(out, "%14d %13d %9s %7v %3d %10.2f %9.2f %9.2f", pt.Bytes, pt.Count, pt.Type, proto, ch, pt.TimeUs, pt.AlgBW, pt.BusBW)
			if measured != nil {
				fmt.Fprint(out, cmp.add(pt, measured, f))
			}
			fmt.Fprintln(out)
		}
	}
	if measured != nil {
		cmp.summary(out, f)
	}
	if f.csv == "" {
		return nil
	}
	return writePointsFile(f.csv, pts)
}

// predict returns the prediction of one collective of size bytes, and the
// protocol and channel count it was planned with.
func (f *simFlags) predict(bc bench.Coll, size int64) (bench.Point, ring.Protocol, int, error) {
	coll, _ := bc.Ring()
	t := f.o.Types[0]
	elems := size / int64(t.Size())
	count := elems
	if coll == ring.ReduceScatter || coll == ring.AllGather {
		count = elems / int64(f.ranks)
		elems = count * int64(f.ranks)
	}
	bytes := elems * int64(t.Size())
	op := "none"
	if coll.Reduces() {
		op = "sum"
	}
	pt := bench.Point{Bytes: bytes, Count: elems, Type: t.String(), Op: op, Label: f.label}
	if f.variant != ring.Hierarchical || coll != ring.AllReduce || count < int64(f.group) {
		us, proto, ch, err := f.predictRing(coll, f.ranks, count, f.variant)
		pt.TimeUs = us
		return pt.WithTime(bc, f.ranks), proto, ch, err
	}
	// The hierarchical variant: its three phases one after another, each
	// as the tuner plans it (every group or column runs the same plan at
	// the same time; the model does not share links between them), and the
	// tail on the flat ring.
	seg := count / int64(f.group)
	phases := []struct {
		coll  ring.Collective
		ranks int
		count int64
	}{{ring.ReduceScatter, f.group, seg}, {ring.AllReduce, f.ranks / f.group, seg}, {ring.AllGather, f.group, seg},
		{ring.AllReduce, f.ranks, count % int64(f.group)}}
	var proto ring.Protocol
	var ch int
	for i, ph := range phases {
		if ph.count == 0 || ph.ranks == 1 && ph.coll != ring.AllReduce {
			continue
		}
		us, p, c, err := f.predictRing(ph.coll, ph.ranks, ph.count, ring.RingVariant)
		if err != nil {
			return pt, p, c, err
		}
		if i == 0 {
			proto, ch = p, c
		}
		pt.TimeUs += us
	}
	return pt.WithTime(bc, f.ranks), proto, ch, nil
}

// predictRing returns the predicted µs of one ring collective of count
// elements (NCCL's count) on n ranks with variant v, and the protocol and
// channel count it was planned with.
func (f *simFlags) predictRing(coll ring.Collective, n int, count int64, v ring.Variant) (float64, ring.Protocol, int, error) {
	t := f.o.Types[0]
	elems := count
	if coll == ring.ReduceScatter || coll == ring.AllGather {
		elems *= int64(n)
	}
	lo, hi := 1, ring.MaxChannels
	if f.channels > 0 {
		lo, hi = f.channels, f.channels
	}
	bytes := elems * int64(t.Size())
	// A precision variant covers all-reduces of its type (as a Comm runs
	// it): Simple only, the tuner asked about its wire bytes.
	variant, wire, allowed := v, bytes, f.allowed
	if variant.Precision() {
		if (&ring.Spec{Coll: coll, EltSize: t.Size(), Proto: ring.Simple, Variant: variant}).ValidVariant() != nil {
			variant = ring.RingVariant
		} else {
			wire, allowed = elems*int64(variant.WireSize(t.Size())), [3]bool{ring.Simple: true}
		}
	}
	proto, ch := ring.Simple, hi
	if c, ok := f.tuner.Choose(coll, n, wire, allowed, lo, hi); ok {
		proto, ch = c.Proto, c.Channels
	} else {
		for _, p := range []ring.Protocol{ring.Simple, ring.LL128, ring.LL} {
			if allowed[p] {
				proto = p
				break
			}
		}
	}
	fifo := gpuFIFO(proto)
	if par, err := f.model.Params(proto); err == nil && par.BuffBytes > 0 {
		fifo = par.BuffBytes
	}
	spec := ring.Spec{Coll: coll, Ring: ring.Identity(n), Root: min(f.o.Root, n-1), Count: count, EltSize: t.Size(),
		Channels: ch, Proto: proto, BuffSize: fifo, Variant: variant}
	plans, err := sim.PlanAll(spec)
	if err != nil {
		return 0, proto, ch, err
	}
	r, err := sim.Predict(plans, f.model)
	if err != nil {
		return 0, proto, ch, err
	}
	return r.TimeUs, proto, ch, nil
}

// readMeasured reads a measured table (or CSV) into points by size; a size
// listed twice keeps its first row.
func readMeasured(path string) (map[int64]bench.Point, error) {
	pts, err := readPointsFile(path, path)
	if err != nil {
		return nil, err
	}
	bySize := map[int64]bench.Point{}
	for _, p := range pts {
		if _, ok := bySize[p.Bytes]; !ok {
			bySize[p.Bytes] = p
		}
	}
	return bySize, nil
}

// comparison accumulates the errors of predictions against measurements.
type comparison struct {
	compared, within int
	worst            float64 // signed %, largest in magnitude
	worstAt          int64
}

// add returns the comparison columns of one prediction. The error is
// predicted bus bandwidth over measured, minus 1, computed from the times
// (the tables round bandwidths to 0.01 GB/s).
func (c *comparison) add(pt bench.Point, measured map[int64]bench.Point, f *simFlags) string {
	m, ok := measured[pt.Bytes]
	if !ok || !(m.TimeUs > 0) || !(pt.TimeUs > 0) {
		return fmt.Sprintf(" %9s %9s %7s %7s", "-", "-", "-", "-")
	}
	e := 100 * (m.TimeUs/pt.TimeUs - 1)
	verdict := "-"
	if pt.Bytes >= f.from {
		c.compared++
		verdict = "MISS"
		if math.Abs(e) <= f.tolerance {
			c.within++
			verdict = "ok"
		}
		if c.compared == 1 || math.Abs(e) > math.Abs(c.worst) {
			c.worst, c.worstAt = e, pt.Bytes
		}
	}
	return fmt.Sprintf(" %9.2f %9.2f %+7.1f %7s", m.TimeUs, m.BusBW, e, verdict)
}

func (c *comparison) summary(out io.Writer, f *simFlags) {
	if c.compared == 0 {
		fmt.Fprintf(out, "# no measured size from %d B up to compare\n", f.from)
		return
	}
	fmt.Fprintf(out, "# worst error from %d B up: %+.1f%% at %d B; within ±%g%% at %d of %d sizes\n",
		f.from, c.worst, c.worstAt, f.tolerance, c.within, c.compared)
}
