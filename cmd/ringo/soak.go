package main

import (
	"context"
	"flag"
	"fmt"
	"io"
	"os"

	"github.com/ringo-ccl/ringo"
	"github.com/ringo-ccl/ringo/bench"
)

// soakFlags are the parsed command line of "ringo soak".
type soakFlags struct {
	o    bench.SoakOptions
	gpus []int // -gpus: one rank per GPU, in this process
	rankFlags
}

func parseSoakFlags(args []string) (*soakFlags, error) {
	fs := flag.NewFlagSet("soak", flag.ContinueOnError)
	f := &soakFlags{o: bench.DefaultSoak()}
	o := &f.o
	fs.IntVar(&o.N, "n", o.N, "collectives in all, the warm-up included")
	f.rankFlags.register(fs, 4)
	maxB := fs.String("max", "64K", "largest buffer of a collective in bytes (K, M, G suffixes)")
	fs.Uint64Var(&o.Seed, "seed", o.Seed, "seed of the draws and of every collective's data")
	fs.IntVar(&o.Every, "every", o.Every, "report every this many collectives")
	fs.IntVar(&o.Warmup, "warmup", o.Warmup, "collectives before the first report, the figures the last is judged against")
	fs.DurationVar(&o.Timeout, "timeout", o.Timeout, "limit of each collective: a rank that exceeds it stops with an error")
	gpus := fs.String("gpus", "", "GPU ordinals, one rank each, in this process (e.g. 0,1): the buffers in GPU memory")
	fs.BoolVar(&o.Windows, "R", false, "host ranks: the buffers in ringo.HostAlloc's memory, registered as windows (RegisterHostWindow)")
	if err := parseFlags(fs, args); err != nil {
		return nil, err
	}
	if o.Windows && *gpus != "" {
		return nil, fmt.Errorf("-R places host ranks' buffers: not with -gpus")
	}
	if *gpus != "" {
		var err error
		if f.gpus, err = parseGPUs(*gpus); err != nil {
			return nil, err
		}
		f.ranks = len(f.gpus)
	}
	if err := parseSizes(sizeFlag{"-max", *maxB, &o.MaxBytes}); err != nil {
		return nil, err
	}
	return f, f.rankFlags.check()
}

// soakMain runs "ringo soak": random collectives, each checked bit-exactly,
// with the heap, goroutines, file descriptors and shared memory segments
// reported every -every collectives and judged at the end (bench.Verdict).
func soakMain(args []string) error {
	f, err := parseSoakFlags(args)
	if err != nil {
		return err
	}
	cfg := &ringo.Config{Channels: f.channels, Protocol: f.proto}
	ctx := context.Background()
	// A rank process: started by a parent "ringo soak", or by a launcher.
	hostSoak := func(c *ringo.Comm) func(func(bench.Sample)) (bench.SoakResult, error) {
		return func(s func(bench.Sample)) (bench.SoakResult, error) { return bench.SoakRank(ctx, c, f.o, s) }
	}
	if ok, err := asRankProcess(ctx, cfg, func(c *ringo.Comm, how string) error { return soakRank(f, c, how, hostSoak(c)) }); ok {
		return err
	}
	if err := f.o.Validate(f.ranks); err != nil {
		return err
	}
	switch {
	case len(f.gpus) > 0:
		return soakGPUs(ctx, f, cfg)
	case f.transport != "loopback":
		return spawnRanks("soak", f.ranks, f.spawnEnv(), args)
	}
	return runLocal(f.ranks, cfg, func(_ int, c *ringo.Comm) error {
		return soakRank(f, c, "goroutines of one process, loopback", hostSoak(c))
	})
}

// soakGPUs runs the soak with one rank per GPU of f.gpus as goroutines of
// this process, with a host communicator of the same ranks for the samples.
func soakGPUs(ctx context.Context, f *soakFlags, cfg *ringo.Config) error {
	how := fmt.Sprintf("GPUs %v, one process", f.gpus)
	return eachGPURank(f.gpus, cfg, func(_ int, c, agg *ringo.Comm) error {
		return soakRank(f, c, how, func(s func(bench.Sample)) (bench.SoakResult, error) {
			return bench.SoakGPURank(ctx, c, agg, f.o, s)
		})
	})
}

// soakRank runs the soak on one rank; rank 0 prints the table and the
// verdict and returns the verdict's error. Every rank reports its first
// wrong collective on stderr.
func soakRank(f *soakFlags, c *ringo.Comm, how string, soak func(func(bench.Sample)) (bench.SoakResult, error)) error {
	out := io.Discard
	if c.Rank() == 0 {
		out = os.Stdout
	}
	o := &f.o
	fmt.Fprintf(out, "# ringo soak: %d ranks (%s), %d collectives of up to %d bytes, seed %d, channels %d, proto %q\n",
		c.Size(), how, o.N, o.MaxBytes, o.Seed, f.channels, f.proto)
	fmt.Fprintf(out, "# each drawn at random (collective, datatype, op, count, root, in place or not) and every output element checked bit-exactly\n")
	fmt.Fprintf(out, "# first report after a warm-up of %d; figures after runtime.GC(), summed over the ranks' processes: heap = HeapAlloc, inuse = HeapInuse, sys = Sys; fds = /proc/self/fd entries; shm = /dev/shm/ringo-* entries of the host\n", o.Warmup)
	bench.WriteSoakHeader(out)
	res, err := soak(func(s bench.Sample) { bench.WriteSoakSample(out, s) })
	if res.FirstWrong != "" {
		fmt.Fprintf(os.Stderr, "ringo soak: first wrong: %s\n", res.FirstWrong)
	}
	if err != nil || c.Rank() != 0 {
		return err
	}
	lines, err := bench.Verdict(res.Samples)
	fmt.Fprintf(out, "# verdict, the last report against the first:\n")
	for _, l := range lines {
		fmt.Fprintf(out, "#   %s\n", l)
	}
	if err == nil {
		fmt.Fprintln(out, "# soak OK")
	}
	return err
}
