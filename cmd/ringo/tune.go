package main

import (
	"context"
	"flag"
	"fmt"
	"math"
	"os"
	"strconv"
	"strings"

	"github.com/ringo-ccl/ringo"
	"github.com/ringo-ccl/ringo/bench"
	"github.com/ringo-ccl/ringo/internal/cuda"
	"github.com/ringo-ccl/ringo/ring"
	"github.com/ringo-ccl/ringo/tune"
)

// tuneMain measures the GPU cost model: for each protocol and channel
// count, an all-reduce sweep, fitted to time = latency + bytes/bandwidth;
// the model goes to -o (RINGO_TUNE_FILE then makes ringo use it). With
// -base, the entries of protocols not measured come from that model.
func tuneMain(args []string) error {
	fs := flag.NewFlagSet("tune", flag.ContinueOnError)
	gpuList := fs.String("gpus", "0,1", "GPU ordinals, one rank each")
	chList := fs.String("channels", "1,2,4,8,16,32,64", "channel counts to measure")
	protoList := fs.String("protos", "LL,LL128,Simple", "protocols to measure")
	out := fs.String("o", "", "write the model here (default: standard output)")
	iters := fs.Int("n", 10, "timed iterations per size")
	base := fs.String("base", "", "keep this model's entries of the protocols not measured")
	fs.SetOutput(os.Stderr)
	if err := fs.Parse(args); err != nil {
		return err
	}
	if err := checkOutputs(outputFlag{"-o", *out}); err != nil { // before the measurements, not after
		return err
	}
	gpus, err := intList(*gpuList)
	if err != nil {
		return fmt.Errorf("-gpus: %w", err)
	}
	chans, err := intList(*chList)
	if err != nil {
		return fmt.Errorf("-channels: %w", err)
	}
	var protos []ring.Protocol
	for _, f := range strings.Split(*protoList, ",") {
		p, err := tune.ProtocolOf(strings.TrimSpace(f))
		if err != nil {
			return fmt.Errorf("-protos: %w", err)
		}
		protos = append(protos, p)
	}
	n := len(gpus)
	name, err := cuda.DeviceName(gpus[0])
	if err != nil {
		return err
	}
	m := &tune.Model{Machine: fmt.Sprintf("%d× %s, measured by ringo tune", n, name), Ranks: n}
	if *base != "" {
		b, err := tune.Load(*base)
		if err != nil {
			return fmt.Errorf("-base: %w", err)
		}
		if b.Ranks != n {
			return fmt.Errorf("-base: %s was measured with %d ranks, not %d", *base, b.Ranks, n)
		}
	kept:
		for _, e := range b.Entries {
			for _, p := range protos {
				if e.Proto == p.String() {
					continue kept
				}
			}
			m.Entries = append(m.Entries, e)
		}
		if len(m.Entries) > 0 {
			m.Machine = fmt.Sprintf("%s; %s measured by ringo tune", b.Machine, *protoList)
		}
	}
	ctx := context.Background()
	for _, proto := range protos {
		o := bench.Defaults()
		sizes := tune.Sweep(proto)
		o.MinBytes, o.MaxBytes, o.StepFactor, o.Iters, o.Warmup, o.Check = sizes[0], sizes[len(sizes)-1], 4, *iters, 3, 0
		for _, ch := range chans {
			rows, err := sweepGPUs(ctx, gpus, &ringo.Config{Channels: ch, Protocol: proto.String()}, o, nil)
			if err != nil {
				return fmt.Errorf("%v with %d channels: %w", proto, ch, err)
			}
			var x, y []float64
			for _, r := range rows {
				x = append(x, float64(r.Bytes)*ring.AllReduce.BusFactor(n))
				y = append(y, r.OutOfPlace.TimeUs)
			}
			lat, bw, err := tune.Fit(x, y)
			if err != nil {
				return fmt.Errorf("%v with %d channels: %w", proto, ch, err)
			}
			for i := range y {
				y[i] = math.Round(y[i]*1000) / 1000
			}
			m.Entries = append(m.Entries, tune.Entry{Proto: proto.String(), Channels: ch, LatencyUs: lat, BusBW: bw, Us: y})
			fmt.Fprintf(os.Stderr, "ringo tune: %-6v %2d channels: %6.2f µs + bytes / %6.1f GB/s\n", proto, ch, lat, bw)
		}
	}
	if *out == "" {
		return m.Encode(os.Stdout)
	}
	return m.Write(*out)
}

func intList(s string) ([]int, error) {
	var out []int
	for _, f := range strings.Split(s, ",") {
		v, err := strconv.Atoi(strings.TrimSpace(f))
		if err != nil || v < 0 {
			return nil, fmt.Errorf("%q is not a list of non-negative integers", s)
		}
		out = append(out, v)
	}
	return out, nil
}
