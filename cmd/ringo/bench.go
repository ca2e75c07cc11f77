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
	"github.com/ringo-ccl/ringo/bootstrap"
	"github.com/ringo-ccl/ringo/internal/env"
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

// envShmDisable is the library's NCCL_SHM_DISABLE, read here to say which
// transport rank processes run over.
var envShmDisable = env.Var{Name: "SHM_DISABLE", NCCL: true}

// benchFlags are the parsed command line.
type benchFlags struct {
	o     bench.Options
	gpus  []int
	procs bool // with gpus: one process per GPU
	rankFlags
	ring    []int  // -ring: the ring order; nil: the default
	variant string // -variant: the plan generator
	format  string
	csv     string // also write rank 0's rows here as bench.Point CSV
	label   string // the CSV rows' series label
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
	graphUsage := "with -gpus: capture each size's -n calls into a CUDA graph and time this many replays of it; checks replay a graph of one call (nccl-tests' -G; 0: no graphs)"
	fs.IntVar(&o.Graph, "G", 0, graphUsage)
	fs.IntVar(&o.Graph, "graph", 0, graphUsage+"; the same as -G")
	fs.BoolVar(&o.Windows, "R", false, "register every rank's send and receive buffers as windows (nccl-tests' -R 2): with -gpus, Comm.RegisterWindow, which direct all-reduces between processes read in place; without, ringo.HostAlloc's memory and RegisterHostWindow, which the collectives between processes read and write in place")
	dtype := fs.String("d", "float", "datatype: int8 uint8 int32 uint32 int64 uint64 half float double bfloat16 f8e4m3 f8e5m2, or all")
	opName := fs.String("o", "sum", "op: sum prod min max avg mulsum, or all")
	fs.IntVar(&o.Root, "r", 0, "root of broadcast, reduce, gather and scatter")
	colls := fs.String("coll", "all_reduce", "collectives: all_reduce reduce_scatter all_gather broadcast reduce sendrecv alltoall gather scatter (comma list), or all (the five ring collectives)")
	gpus := fs.String("gpus", "", "GPU ordinals, one rank each, in this process (e.g. 0,1; repeats allowed): benchmark GPU memory")
	fs.BoolVar(&f.procs, "procs", false, "with -gpus: one process per GPU (CUDA IPC; shared memory with NCCL_P2P_DISABLE=1), as torchrun runs them")
	fs.Int64Var(&o.Unalign, "u", 0, "misalign every buffer by this many elements")
	f.rankFlags.register(fs, 2)
	ringText := fs.String("ring", "", "ring order: ranks in order (e.g. 0,2,1,3, as ringo topo prints it) or reversed; empty: the default")
	fs.StringVar(&f.variant, "variant", "", "plan generator: ring, oneshot, bidirectional, bf16wire, fp32wire; empty: RINGO_VARIANT or ring")
	fs.BoolVar(&o.Error, "error", false, "check with random inputs and report each size's relative RMS error against the exact sum (all-reduce sums of float, half, bfloat16)")
	fs.StringVar(&f.format, "format", "table", "output: table, csv or json")
	fs.StringVar(&f.csv, "csv", "", "also write the out-of-place results to this file as CSV (size_bytes,…,label), as ringo plot reads it")
	fs.StringVar(&f.label, "label", "ringo", "series label of the -csv rows")
	if err := parseFlags(fs, args); err != nil {
		return nil, err
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
		if f.gpus, err = parseGPUs(*gpus); err != nil {
			return nil, err
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
	case f.procs && len(f.gpus) == 0:
		return nil, fmt.Errorf("-procs needs -gpus")
	}
	return f, f.rankFlags.check()
}

// rankFlags say how a command's ranks run: bench's and soak's flags.
type rankFlags struct {
	ranks     int
	transport string
	channels  int
	proto     string
}

// register defines the flags in fs, -ranks defaulting to ranks.
func (r *rankFlags) register(fs *flag.FlagSet, ranks int) {
	fs.IntVar(&r.ranks, "ranks", ranks, "ranks to start on this host (ignored when a launcher's environment names the job)")
	fs.StringVar(&r.transport, "transport", "shm", "shm: one process per rank over shared memory; socket: one process per rank over TCP sockets (RINGO_SHM_DISABLE=1); loopback: ranks as goroutines of this process")
	fs.IntVar(&r.channels, "channels", 0, "channels per collective (0: NCCL_MIN/MAX_NCHANNELS or 1)")
	fs.StringVar(&r.proto, "proto", "", "protocols allowed, NCCL_PROTO syntax (LL, Simple, ^LL); empty: by size")
}

// check reports a transport or a number of ranks that cannot run.
func (r *rankFlags) check() error {
	switch {
	case r.transport != "shm" && r.transport != "socket" && r.transport != "loopback":
		return fmt.Errorf("-transport %q: want shm, socket or loopback", r.transport)
	case r.ranks < 1:
		return fmt.Errorf("-ranks %d: need at least 1", r.ranks)
	}
	return nil
}

// parseGPUs parses a -gpus list.
func parseGPUs(s string) ([]int, error) {
	gpus, err := intList(s)
	if err != nil {
		return nil, fmt.Errorf("-gpus %q: want GPU ordinals like 0,1", s)
	}
	return gpus, nil
}

// spawnEnv is what the rank processes of -transport add to their
// environment.
func (r *rankFlags) spawnEnv() []string {
	if r.transport == "socket" {
		return []string{"RINGO_SHM_DISABLE=1"}
	}
	return nil
}

// parseFlags parses args into fs, with usage on stderr; positional
// arguments are errors.
func parseFlags(fs *flag.FlagSet, args []string) error {
	fs.SetOutput(os.Stderr)
	if err := fs.Parse(args); err != nil {
		return err
	}
	if fs.NArg() > 0 {
		return fmt.Errorf("unexpected argument %q", fs.Arg(0))
	}
	return nil
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
	if id := os.Getenv(envBenchID); id != "" && len(f.gpus) > 0 {
		return benchGPUChild(ctx, f, cfg, id)
	}
	if ok, err := asRankProcess(ctx, cfg, func(c *ringo.Comm, how string) error { return runRank(ctx, f, c, how) }); ok {
		return err
	}
	if err := f.o.Validate(f.ranks); err != nil {
		return err
	}
	// Every rank runs on this machine: as goroutines here, or as processes
	// started here.
	if err := f.preflight(f.ranks, f.ranks, f.gpus); err != nil {
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

// asRankProcess runs run on this process's rank of a host communicator,
// with how the ranks run, when the process is a rank process — started by
// spawnRanks, or by a launcher (bootstrap.LaunchFromEnv) — and reports
// whether it is one.
func asRankProcess(ctx context.Context, cfg *ringo.Config, run func(c *ringo.Comm, how string) error) (bool, error) {
	c, how, err := hostRankFromEnv(ctx, cfg)
	if err != nil || c == nil {
		return err != nil, err
	}
	defer c.Close()
	return true, run(c, how)
}

// hostRankFromEnv returns this process's rank of a host communicator when
// the process is a rank process, and how the ranks run; nil when it is
// not one.
func hostRankFromEnv(ctx context.Context, cfg *ringo.Config) (*ringo.Comm, string, error) {
	if idText := os.Getenv(envBenchID); idText != "" {
		id, rank, n, err := childRank(idText)
		if err != nil {
			return nil, "", err
		}
		initCtx, cancel := context.WithTimeout(ctx, time.Minute)
		defer cancel()
		c, err := ringo.NewComm(initCtx, id, n, rank, cfg)
		how := "processes, shared memory"
		if off, _ := envShmDisable.Flag(); off { // a bad value failed NewComm
			how = "processes, sockets"
		}
		return c, how, err
	}
	if _, ok, err := bootstrap.LaunchFromEnv(); err != nil || !ok {
		return nil, "", err
	}
	c, err := ringo.NewCommFromEnv(ctx, cfg)
	return c, "launcher", err
}

// benchGPUChild is one GPU rank started by benchSpawn: the GPU
// communicator, and a host one to agree on timings.
func benchGPUChild(ctx context.Context, f *benchFlags, cfg *ringo.Config, idText string) error {
	id, rank, n, err := childRank(idText)
	if err != nil {
		return err
	}
	initCtx, cancel := context.WithTimeout(ctx, time.Minute)
	defer cancel()
	gid, err := ringo.UniqueIDFromString(os.Getenv(envBenchGPUID))
	if err != nil {
		return fmt.Errorf("%s: %w", envBenchGPUID, err)
	}
	if err := f.o.Validate(n); err != nil {
		return err
	}
	if err := f.rankPreflight(n, rank, f.gpus[rank:rank+1]); err != nil {
		return err
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
	if err := f.o.Validate(c.Size()); err != nil {
		return err
	}
	if err := f.rankPreflight(c.Size(), c.Rank(), nil); err != nil {
		return err
	}
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

// preflight refuses, before anything starts, a sweep whose buffers do not
// fit — hostRanks of n ranks in this machine's memory, one rank per entry of
// gpus in that GPU's — or whose output file cannot be written.
func (f *benchFlags) preflight(n, hostRanks int, gpus []int) error {
	if err := checkMemory(&f.o, n, hostRanks, gpus); err != nil {
		return err
	}
	return checkOutputs(outputFlag{"-csv", f.csv})
}

// rankPreflight is preflight for a rank process, one rank (on gpus, when a
// GPU rank): only rank 0 writes the output file.
func (f *benchFlags) rankPreflight(n, rank int, gpus []int) error {
	if rank != 0 {
		return checkMemory(&f.o, n, 1, gpus)
	}
	return f.preflight(n, 1, gpus)
}

// benchLoopback runs every rank as a goroutine of this process.
func benchLoopback(ctx context.Context, f *benchFlags, cfg *ringo.Config) error {
	var rows []bench.Row
	err := runLocal(f.ranks, cfg, func(r int, c *ringo.Comm) error {
		var cb func(bench.Row)
		if r == 0 {
			printHeader(os.Stdout, f, f.ranks, "goroutines of one process, loopback")
			cb = progress(os.Stdout, f)
		}
		res, err := bench.RunRank(ctx, c, f.o, cb)
		if r == 0 {
			rows = res
		}
		return err
	})
	if err != nil {
		return err
	}
	return printFooter(os.Stdout, f, rows)
}

// runLocal runs run on every rank of a communicator of n ranks in this
// process (ringo.NewLocal), each in a goroutine (eachRank), and closes
// them.
func runLocal(n int, cfg *ringo.Config, run func(r int, c *ringo.Comm) error) error {
	comms, err := ringo.NewLocal(n, cfg)
	if err != nil {
		return err
	}
	defer closeAll(comms)
	return eachRank(n, func(r int) error { return run(r, comms[r]) }, func(r int) { comms[r].Abort() })
}

// eachRank runs run(r) for every rank r of n, each in a goroutine, and
// returns their errors joined; a rank whose run fails is aborted
// (abort(r)), which releases the ranks waiting on it.
func eachRank(n int, run func(r int) error, abort func(r int)) error {
	errs := make([]error, n)
	var wg sync.WaitGroup
	for r := range n {
		wg.Add(1)
		go func() {
			defer wg.Done()
			if errs[r] = run(r); errs[r] != nil {
				abort(r)
			}
		}()
	}
	wg.Wait()
	return errors.Join(errs...)
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
	var rows []bench.Row
	err := eachGPURank(gpus, cfg, func(r int, c, agg *ringo.Comm) error {
		var cb func(bench.Row)
		if r == 0 {
			cb = row
		}
		res, err := bench.RunGPURank(ctx, c, agg, o, cb)
		if r == 0 {
			rows = res
		}
		return err
	})
	return rows, err
}

// eachGPURank runs run for one rank per GPU of gpus, as goroutines of this
// process, each with its GPU communicator and its rank of a host
// communicator of the same ranks (to agree on timings and samples); a rank
// that fails aborts the others.
func eachGPURank(gpus []int, cfg *ringo.Config, run func(r int, c, agg *ringo.Comm) error) error {
	comms, err := ringo.NewLocalGPUs(gpus, cfg)
	if err != nil {
		return err
	}
	defer closeAll(comms)
	aggs, err := ringo.NewLocal(len(gpus), nil)
	if err != nil {
		return err
	}
	defer closeAll(aggs)
	return eachRank(len(comms), func(r int) error { return run(r, comms[r], aggs[r]) }, func(r int) {
		comms[r].Abort()
		aggs[r].Abort()
	})
}

// closeAll closes every communicator of comms.
func closeAll(comms []*ringo.Comm) {
	for _, c := range comms {
		c.Close()
	}
}

// childRank returns the communicator's UniqueID (idText, the value of
// envBenchID), this process's rank and the number of ranks, as spawnRanks
// set them.
func childRank(idText string) (id ringo.UniqueID, rank, n int, err error) {
	if id, err = ringo.UniqueIDFromString(idText); err != nil {
		return id, 0, 0, err
	}
	rank, err1 := strconv.Atoi(os.Getenv(envBenchRank))
	n, err2 := strconv.Atoi(os.Getenv(envBenchRanks))
	if err := errors.Join(err1, err2); err != nil {
		return id, 0, 0, fmt.Errorf("%s/%s: %w", envBenchRank, envBenchRanks, err)
	}
	return id, rank, n, nil
}

// benchSpawn starts one process per rank, with -gpus rank r on GPU r of the
// list (spawnRanks).
func benchSpawn(f *benchFlags, args []string) error {
	env := f.spawnEnv()
	if len(f.gpus) > 0 {
		gid, err := ringo.NewUniqueID()
		if err != nil {
			return err
		}
		env = append(env, envBenchGPUID+"="+gid.String())
	}
	return spawnRanks("bench", f.ranks, env, args)
}

// spawnRanks starts one process per rank of n, running this program's
// command with args and env added to the environment, joined through a
// bootstrap root served by this process (childRank reads their
// environment), and waits for them. When a rank fails, the others learn it
// through the bootstrap; any still running 10 s later are killed.
func spawnRanks(command string, n int, env, args []string) error {
	id, err := ringo.NewUniqueID()
	if err != nil {
		return err
	}
	env = append([]string{envBenchID + "=" + id.String(), fmt.Sprintf("%s=%d", envBenchRanks, n)}, env...)
	self, err := os.Executable()
	if err != nil {
		return err
	}
	procs := make([]*exec.Cmd, n)
	for r := range procs {
		cmd := exec.Command(self, append([]string{command}, args...)...)
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
	return waitRanks(procs, killGrace)
}

// killGrace is how long spawnRanks lets the other ranks end by themselves
// after one fails.
const killGrace = 10 * time.Second

// waitRanks waits for the rank processes procs (rank r is procs[r]) to
// exit and reports those that failed; once one has failed, any still
// running grace later are killed, and their exits collected too.
func waitRanks(procs []*exec.Cmd, grace time.Duration) error {
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
	for left := len(procs); left > 0; {
		select {
		case e := <-exits:
			left--
			if e.err != nil {
				failed = append(failed, fmt.Sprintf("rank %d: %v", e.rank, e.err))
				if deadline == nil {
					deadline = time.After(grace)
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
		return fmt.Errorf("%d of %d ranks failed: %s", len(failed), len(procs), strings.Join(failed, "; "))
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

// progress prints each row of a table as it is measured, after a comment
// naming its collective where the sweep has several, or a progress line
// on stderr for the formats that print at the end.
func progress(w io.Writer, f *benchFlags) func(bench.Row) {
	coll := ""
	return func(r bench.Row) {
		if f.format == "table" {
			if len(f.o.Colls) > 1 && r.Coll != coll {
				fmt.Fprintf(w, "# %s\n", r.Coll)
				coll = r.Coll
			}
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
