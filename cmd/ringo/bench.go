package main

import (
	"context"
	"errors"
	"flag"
	"fmt"
	"io"
	"os"
	"os/exec"
	"strconv"
	"strings"
	"sync"
	"syscall"
	"time"

	"github.com/ringo-ccl/ringo"
	"github.com/ringo-ccl/ringo/bench"
	"github.com/ringo-ccl/ringo/internal/env"
	"github.com/ringo-ccl/ringo/transport"
)

// Environment of a rank process started by "ringo bench --ranks N".
const (
	envBenchID    = "RINGO_BENCH_ID"     // the communicator's UniqueID, hex
	envBenchRank  = "RINGO_BENCH_RANK"   // this process's rank
	envBenchRanks = "RINGO_BENCH_RANKS"  // number of ranks
	envBenchGPUID = "RINGO_BENCH_GPU_ID" // with --gpus: the GPU communicator's UniqueID
)

// errChecksFailed makes the process exit non-zero when #wrong is not 0, as
// nccl-tests does.
var errChecksFailed = errors.New("results were wrong (see #wrong)")

// benchFlags are the parsed command line.
type benchFlags struct {
	o         bench.Options
	gpus      []int
	procs     bool // with gpus: one process per GPU
	ranks     int
	transport string
	channels  int
	proto     string
	ring      []int  // -ring: the ring order; nil: the default
	variant   string // -variant: the plan generator
	format    string
	csv       string // also write rank 0's rows here as bench.Point CSV
	label     string // the CSV rows' series label
}

func parseBenchFlags(args []string) (*benchFlags, error) {
	fs := flag.NewFlagSet("bench", flag.ContinueOnError)
	f := &benchFlags{o: bench.Defaults()}
	o := &f.o
	minB := fs.String("b", "8", "minimum size in bytes (K, M, G suffixes)")
	maxB := fs.String("e", "64M", "maximum size in bytes")
	step := fs.String("i", "1M", "additive size step when -f is not given")
	fs.Int64Var(&o.StepFactor, "f", 2, "multiplicative size step (0: additive steps of -i)")
	fs.IntVar(&o.Iters, "n", 20, "timed iterations per size")
	fs.IntVar(&o.Warmup, "w", 5, "warm-up iterations per size")
	fs.IntVar(&o.Check, "c", 1, "correctness checks per size (0: off)")
	dtype := fs.String("d", "float", "datatype: int8 uint8 int32 uint32 int64 uint64 half float double bfloat16 f8e4m3 f8e5m2, or all")
	opName := fs.String("o", "sum", "op: sum prod min max avg mulsum, or all")
	fs.IntVar(&o.Root, "r", 0, "root of broadcast and reduce")
	colls := fs.String("coll", "all_reduce", "collectives: all_reduce reduce_scatter all_gather broadcast reduce (comma list) or all")
	fs.IntVar(&f.ranks, "ranks", 2, "ranks to start on this host (ignored when a launcher's environment names the job)")
	gpus := fs.String("gpus", "", "GPU ordinals, one rank each, in this process (e.g. 0,1; repeats allowed): benchmark GPU memory")
	fs.BoolVar(&f.procs, "procs", false, "with -gpus: one process per GPU (CUDA IPC; shared memory with NCCL_P2P_DISABLE=1), as torchrun runs them")
	fs.Int64Var(&o.Unalign, "u", 0, "misalign every buffer by this many elements")
	fs.StringVar(&f.transport, "transport", "shm", "shm: one process per rank over shared memory; loopback: ranks as goroutines of this process")
	fs.IntVar(&f.channels, "channels", 0, "channels per collective (0: NCCL_MIN/MAX_NCHANNELS or 1)")
	fs.StringVar(&f.proto, "proto", "", "protocols allowed, NCCL_PROTO syntax (LL, Simple, ^LL); empty: by size")
	ringText := fs.String("ring", "", "ring order: ranks in order (e.g. 0,2,1,3, as ringo topo prints it) or reversed; empty: the default")
	fs.StringVar(&f.variant, "variant", "", "plan generator: ring, oneshot, bidirectional, bf16wire, fp32wire; empty: RINGO_VARIANT or ring")
	fs.BoolVar(&o.Error, "error", false, "check with random inputs and report each size's relative RMS error against the exact sum (all-reduce sums of float, half, bfloat16)")
	fs.StringVar(&f.format, "format", "table", "output: table, csv or json")
	fs.StringVar(&f.csv, "csv", "", "also write the out-of-place results to this file as CSV (size_bytes,…,label), as ringo plot reads it")
	fs.StringVar(&f.label, "label", "ringo", "series label of the -csv rows")
	fs.SetOutput(os.Stderr)
	if err := fs.Parse(args); err != nil {
		return nil, err
	}
	if fs.NArg() > 0 {
		return nil, fmt.Errorf("unexpected argument %q", fs.Arg(0))
	}
	err := parseSizes(sizeFlag{"-b", *minB, &o.MinBytes}, sizeFlag{"-e", *maxB, &o.MaxBytes}, sizeFlag{"-i", *step, &o.StepBytes})
	if err != nil {
		return nil, err
	}
	if o.Colls, err = bench.ParseColls(*colls); err != nil {
		return nil, fmt.Errorf("-coll: %w", err)
	}
	if o.Types, err = bench.ParseTypes(*dtype); err != nil {
		return nil, fmt.Errorf("-d: %w", err)
	}
	if o.Ops, err = bench.ParseOps(*opName); err != nil {
		return nil, fmt.Errorf("-o: %w", err)
	}
	if *gpus != "" {
		for _, g := range strings.Split(*gpus, ",") {
			d, err := strconv.Atoi(strings.TrimSpace(g))
			if err != nil || d < 0 {
				return nil, fmt.Errorf("-gpus %q: want GPU ordinals like 0,1", *gpus)
			}
			f.gpus = append(f.gpus, d)
		}
		f.ranks = len(f.gpus)
	}
	switch {
	case *ringText == "reversed":
		for r := f.ranks - 1; r >= 0; r-- {
			f.ring = append(f.ring, r)
		}
	case *ringText != "":
		if f.ring, err = intList(*ringText); err != nil {
			return nil, fmt.Errorf("-ring: %w", err)
		}
	}
	switch {
	case f.format != "table" && f.format != "csv" && f.format != "json":
		return nil, fmt.Errorf("-format %q: want table, csv or json", f.format)
	case f.transport != "shm" && f.transport != "loopback":
		return nil, fmt.Errorf("-transport %q: want shm or loopback", f.transport)
	case f.ranks < 1:
		return nil, fmt.Errorf("-ranks %d: need at least 1", f.ranks)
	case f.procs && len(f.gpus) == 0:
		return nil, fmt.Errorf("-procs needs -gpus")
	}
	return f, nil
}

// sizeFlag is a size flag's name, its text and where its value goes.
type sizeFlag struct {
	name, text string
	v          *int64
}

// parseSizes parses size flags, naming the first that does not parse.
func parseSizes(flags ...sizeFlag) error {
	for _, f := range flags {
		v, err := parseSize(f.text)
		if err != nil {
			return fmt.Errorf("%s: %w", f.name, err)
		}
		*f.v = v
	}
	return nil
}

// parseSize parses a non-negative byte count with a K, M or G suffix.
func parseSize(s string) (int64, error) {
	n, err := env.ParseSize(s)
	if err == nil && n < 0 {
		err = fmt.Errorf("%q is negative", s)
	}
	return n, err
}

func benchMain(args []string) error {
	f, err := parseBenchFlags(args)
	if err != nil {
		return err
	}
	cfg := &ringo.Config{Channels: f.channels, Protocol: f.proto, Ring: f.ring, Variant: f.variant}
	ctx := context.Background()
	// A rank process: started by a parent "ringo bench", or by a launcher.
	if id := os.Getenv(envBenchID); id != "" {
		return benchChild(ctx, f, cfg, id)
	}
	if _, ok, err := transport.LaunchFromEnv(); err != nil {
		return err
	} else if ok {
		c, err := ringo.NewCommFromEnv(ctx, cfg)
		if err != nil {
			return err
		}
		defer c.Close()
		return runRank(ctx, f, c, "launcher")
	}
	if err := f.o.Validate(f.ranks); err != nil {
		return err
	}
	if len(f.gpus) > 0 && !f.procs {
		return benchGPUs(ctx, f, cfg)
	}
	if f.transport == "loopback" {
		return benchLoopback(ctx, f, cfg)
	}
	return benchSpawn(f, args)
}

// benchChild is one rank started by benchSpawn.
func benchChild(ctx context.Context, f *benchFlags, cfg *ringo.Config, idText string) error {
	id, err := ringo.UniqueIDFromString(idText)
	if err != nil {
		return err
	}
	rank, err1 := strconv.Atoi(os.Getenv(envBenchRank))
	n, err2 := strconv.Atoi(os.Getenv(envBenchRanks))
	if err := errors.Join(err1, err2); err != nil {
		return fmt.Errorf("%s/%s: %w", envBenchRank, envBenchRanks, err)
	}
	initCtx, cancel := context.WithTimeout(ctx, time.Minute)
	defer cancel()
	if len(f.gpus) == 0 {
		c, err := ringo.NewComm(initCtx, id, n, rank, cfg)
		if err != nil {
			return err
		}
		defer c.Close()
		return runRank(ctx, f, c, "processes, shared memory")
	}
	// A GPU rank: the GPU communicator, and a host one to agree on timings.
	gid, err := ringo.UniqueIDFromString(os.Getenv(envBenchGPUID))
	if err != nil {
		return fmt.Errorf("%s: %w", envBenchGPUID, err)
	}
	agg, err := ringo.NewComm(initCtx, id, n, rank, nil)
	if err != nil {
		return err
	}
	defer agg.Close()
	c, err := ringo.NewGPUComm(initCtx, gid, n, rank, f.gpus[rank], cfg)
	if err != nil {
		return err
	}
	defer c.Close()
	out := io.Discard
	if rank == 0 {
		out = os.Stdout
	}
	printHeader(out, f, n, fmt.Sprintf("GPUs %v, one process each", f.gpus))
	rows, err := bench.RunGPURank(ctx, c, agg, f.o, progress(out, f))
	if err != nil {
		return err
	}
	return printFooter(out, f, rows)
}

// runRank runs the sweep on one rank; rank 0 prints.
func runRank(ctx context.Context, f *benchFlags, c *ringo.Comm, how string) error {
	out := io.Discard
	if c.Rank() == 0 {
		out = os.Stdout
	}
	printHeader(out, f, c.Size(), how)
	rows, err := bench.RunRank(ctx, c, f.o, progress(out, f))
	if err != nil {
		return err
	}
	return printFooter(out, f, rows)
}

// benchLoopback runs every rank as a goroutine of this process.
func benchLoopback(ctx context.Context, f *benchFlags, cfg *ringo.Config) error {
	comms, err := ringo.NewLocal(f.ranks, cfg)
	if err != nil {
		return err
	}
	defer func() {
		for _, c := range comms {
			c.Close()
		}
	}()
	printHeader(os.Stdout, f, f.ranks, "goroutines of one process, loopback")
	results := make([][]bench.Row, len(comms))
	errs := make([]error, len(comms))
	var wg sync.WaitGroup
	for r, c := range comms {
		wg.Add(1)
		go func() {
			defer wg.Done()
			var cb func(bench.Row)
			if r == 0 {
				cb = progress(os.Stdout, f)
			}
			results[r], errs[r] = bench.RunRank(ctx, c, f.o, cb)
			if errs[r] != nil {
				c.Abort() // release the ranks waiting on this one
			}
		}()
	}
	wg.Wait()
	if err := errors.Join(errs...); err != nil {
		return err
	}
	return printFooter(os.Stdout, f, results[0])
}

// benchGPUs runs one rank per listed GPU as goroutines of this process.
func benchGPUs(ctx context.Context, f *benchFlags, cfg *ringo.Config) error {
	printHeader(os.Stdout, f, len(f.gpus), fmt.Sprintf("GPUs %v, one process", f.gpus))
	rows, err := sweepGPUs(ctx, f.gpus, cfg, f.o, progress(os.Stdout, f))
	if err != nil {
		return err
	}
	return printFooter(os.Stdout, f, rows)
}

// sweepGPUs runs the sweep o with one rank per GPU of gpus, with a host
// communicator of the same ranks to agree on timings, and returns rank 0's
// rows; row sees each as it is measured.
func sweepGPUs(ctx context.Context, gpus []int, cfg *ringo.Config, o bench.Options, row func(bench.Row)) ([]bench.Row, error) {
	comms, err := ringo.NewLocalGPUs(gpus, cfg)
	if err != nil {
		return nil, err
	}
	aggs, err := ringo.NewLocal(len(gpus), nil)
	if err != nil {
		return nil, err
	}
	defer func() {
		for r := range comms {
			comms[r].Close()
			aggs[r].Close()
		}
	}()
	results := make([][]bench.Row, len(comms))
	errs := make([]error, len(comms))
	var wg sync.WaitGroup
	for r, c := range comms {
		wg.Add(1)
		go func() {
			defer wg.Done()
			var cb func(bench.Row)
			if r == 0 {
				cb = row
			}
			results[r], errs[r] = bench.RunGPURank(ctx, c, aggs[r], o, cb)
			if errs[r] != nil {
				c.Abort()
				aggs[r].Abort()
			}
		}()
	}
	wg.Wait()
	return results[0], errors.Join(errs...)
}

// benchSpawn starts one process per rank (this program again, with the same
// flags; with -gpus, rank r on GPU r of the list) joined through a bootstrap
// root served by this process, and waits for them. When a rank fails, the
// others learn it through the bootstrap; any still running 10 s later are
// killed.
func benchSpawn(f *benchFlags, args []string) error {
	id, err := ringo.NewUniqueID()
	if err != nil {
		return err
	}
	env := []string{envBenchID + "=" + id.String(), fmt.Sprintf("%s=%d", envBenchRanks, f.ranks)}
	if len(f.gpus) > 0 {
		gid, err := ringo.NewUniqueID()
		if err != nil {
			return err
		}
		env = append(env, envBenchGPUID+"="+gid.String())
	}
	self, err := os.Executable()
	if err != nil {
		return err
	}
	procs := make([]*exec.Cmd, f.ranks)
	for r := range procs {
		cmd := exec.Command(self, append([]string{"bench"}, args...)...)
		cmd.Stdout, cmd.Stderr = os.Stdout, os.Stderr
		cmd.Env = append(append(os.Environ(), env...), fmt.Sprintf("%s=%d", envBenchRank, r))
		if err := cmd.Start(); err != nil {
			for _, p := range procs[:r] {
				p.Process.Kill()
				p.Wait()
			}
			return fmt.Errorf("starting rank %d: %w", r, err)
		}
		procs[r] = cmd
	}
	type exit struct {
		rank int
		err  error
	}
	exits := make(chan exit, len(procs))
	for r, p := range procs {
		go func() { exits <- exit{r, p.Wait()} }()
	}
	var failed []string
	var deadline <-chan time.Time
	for range procs {
		select {
		case e := <-exits:
			if e.err != nil {
				failed = append(failed, fmt.Sprintf("rank %d: %v", e.rank, e.err))
				if deadline == nil {
					deadline = time.After(10 * time.Second)
				}
			}
		case <-deadline:
			for _, p := range procs {
				p.Process.Signal(syscall.SIGKILL)
			}
			deadline = nil
		}
	}
	if len(failed) > 0 {
		return fmt.Errorf("%d of %d ranks failed: %s", len(failed), f.ranks, strings.Join(failed, "; "))
	}
	return nil
}

func printHeader(w io.Writer, f *benchFlags, n int, how string) {
	if f.format != "table" {
		return
	}
	fmt.Fprintf(w, "# ringo bench: %d ranks (%s)\n", n, how)
	if f.ring != nil || f.variant != "" {
		fmt.Fprintf(w, "# ring %v, variant %q\n", f.ring, f.variant)
	}
	step := fmt.Sprintf("%d(bytes)", f.o.StepBytes)
	if f.o.StepFactor > 1 {
		step = fmt.Sprintf("%d(factor)", f.o.StepFactor)
	}
	fmt.Fprintf(w, "# nThread 1 nRanks %d minBytes %d maxBytes %d step: %s warmup iters: %d iters: %d validation: %d\n",
		n, f.o.MinBytes, f.o.MaxBytes, step, f.o.Warmup, f.o.Iters, f.o.Check)
	if f.o.Error {
		fmt.Fprintf(w, "# -error: random inputs in [-1, 1); #wrong counts elements that are no rotation's sum; the last two columns are the relative RMS error against the exact sum (out-of-place, in-place)\n")
	}
	bench.WriteHeader(w)
}

// progress prints each row of a table as it is measured, or a progress line
// on stderr for the formats that print at the end.
func progress(w io.Writer, f *benchFlags) func(bench.Row) {
	return func(r bench.Row) {
		if f.format == "table" {
			bench.WriteRow(w, r)
		} else if w != io.Discard {
			fmt.Fprintf(os.Stderr, "ringo bench: %s %s %s %d bytes done\n", r.Coll, r.Type, r.Op, r.Bytes)
		}
	}
}

func printFooter(w io.Writer, f *benchFlags, rows []bench.Row) error {
	ok := true
	var err error
	switch f.format {
	case "table":
		ok = bench.WriteFooter(w, rows)
	case "csv":
		err = bench.WriteCSV(w, rows)
	case "json":
		err = bench.WriteJSON(w, rows)
	}
	if err == nil && f.csv != "" && w != io.Discard {
		err = writePointsFile(f.csv, bench.Points(rows, f.label))
	}
	if err == nil && !ok {
		err = errChecksFailed
	}
	return err
}
