package main

import (
	"context"
	"errors"
	"flag"
	"fmt"
	"os"
	"strings"
	"sync"

	"github.com/ringo-ccl/ringo"
	"github.com/ringo-ccl/ringo/bench"
	"github.com/ringo-ccl/ringo/internal/env"
)

// parseSize parses a non-negative byte count with a K, M or G suffix.
func parseSize(s string) (int64, error) {
	n, err := env.ParseSize(s)
	if err == nil && n < 0 {
		err = fmt.Errorf("%q is negative", s)
	}
	return n, err
}

// errChecksFailed makes the process exit non-zero when #wrong is not 0, as
// nccl-tests does.
var errChecksFailed = errors.New("results were wrong (see #wrong)")

func benchMain(args []string) error {
	fs := flag.NewFlagSet("bench", flag.ContinueOnError)
	o := bench.Defaults()
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
	ranks := fs.Int("ranks", 4, "ranks, as goroutines of this process")
	channels := fs.Int("channels", 0, "channels per collective (0: NCCL_MIN/MAX_NCHANNELS or 1)")
	proto := fs.String("proto", "", "protocols allowed, NCCL_PROTO syntax (LL, Simple, ^LL); empty: by size")
	format := fs.String("format", "table", "output: table, csv or json")
	fs.SetOutput(os.Stderr)
	if err := fs.Parse(args); err != nil {
		return err
	}
	var err error
	if o.MinBytes, err = parseSize(*minB); err != nil {
		return fmt.Errorf("-b: %w", err)
	}
	if o.MaxBytes, err = parseSize(*maxB); err != nil {
		return fmt.Errorf("-e: %w", err)
	}
	if o.StepBytes, err = parseSize(*step); err != nil {
		return fmt.Errorf("-i: %w", err)
	}
	if o.Colls, err = bench.ParseColls(*colls); err != nil {
		return fmt.Errorf("-coll: %w", err)
	}
	if o.Types, err = bench.ParseTypes(*dtype); err != nil {
		return fmt.Errorf("-d: %w", err)
	}
	if o.Ops, err = bench.ParseOps(*opName); err != nil {
		return fmt.Errorf("-o: %w", err)
	}
	if *format != "table" && *format != "csv" && *format != "json" {
		return fmt.Errorf("-format %q: want table, csv or json", *format)
	}
	if *ranks < 1 {
		return fmt.Errorf("-ranks %d: need at least 1", *ranks)
	}
	if err := o.Validate(*ranks); err != nil {
		return err
	}
	comms, err := ringo.NewLocal(*ranks, &ringo.Config{Channels: *channels, Protocol: *proto})
	if err != nil {
		return err
	}
	defer func() {
		for _, c := range comms {
			c.Close()
		}
	}()

	out := os.Stdout
	if *format == "table" {
		fmt.Fprintf(out, "# ringo bench: %d ranks in one process (host memory, loopback transport), %s\n", *ranks, strings.Join(os.Args[1:], " "))
		fmt.Fprintf(out, "# nThread 1 nRanks %d minBytes %d maxBytes %d step: %s warmup iters: %d iters: %d validation: %d\n",
			*ranks, o.MinBytes, o.MaxBytes, stepDesc(&o), o.Warmup, o.Iters, o.Check)
		bench.WriteHeader(out)
	}
	progress := func(r bench.Row) {
		if *format == "table" {
			bench.WriteRow(out, r)
		} else {
			fmt.Fprintf(os.Stderr, "ringo bench: %s %s %d bytes done\n", r.Coll, r.Type, r.Bytes)
		}
	}
	rows, err := runLocal(comms, o, progress)
	if err != nil {
		return err
	}
	ok := true
	switch *format {
	case "table":
		ok = bench.WriteFooter(out, rows)
	case "csv":
		err = bench.WriteCSV(out, rows)
	case "json":
		err = bench.WriteJSON(out, rows)
	}
	if err == nil && !ok {
		err = errChecksFailed
	}
	return err
}

// runLocal runs the sweep on every in-process rank and returns rank 0's rows.
func runLocal(comms []*ringo.Comm, o bench.Options, progress func(bench.Row)) ([]bench.Row, error) {
	ctx := context.Background()
	results := make([][]bench.Row, len(comms))
	errs := make([]error, len(comms))
	var wg sync.WaitGroup
	for r, c := range comms {
		wg.Add(1)
		go func() {
			defer wg.Done()
			var cb func(bench.Row)
			if r == 0 {
				cb = progress
			}
			results[r], errs[r] = bench.RunRank(ctx, c, o, cb)
			if errs[r] != nil {
				c.Abort() // release the ranks waiting on this one
			}
		}()
	}
	wg.Wait()
	return results[0], errors.Join(errs...)
}

func stepDesc(o *bench.Options) string {
	if o.StepFactor > 1 {
		return fmt.Sprintf("%d(factor)", o.StepFactor)
	}
	return fmt.Sprintf("%d(bytes)", o.StepBytes)
}
