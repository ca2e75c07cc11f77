package main

import (
	"bufio"
	"fmt"
	"os"
	"strconv"
	"strings"

	"github.com/ringo-ccl/ringo/bench"
	"github.com/ringo-ccl/ringo/internal/cuda"
	"github.com/ringo-ccl/ringo/internal/env"
)

// Checks made before a sweep starts, so that what would fail at its end,
// or kill the process part-way, is refused at once with the numbers.

// outputFlag is a flag naming a file a command writes when it ends.
type outputFlag struct{ name, path string }

// checkOutputs opens each file for writing, creating it when absent, so
// that a path that cannot be written is reported before the sweep instead
// of after it. An empty path is no file.
func checkOutputs(flags ...outputFlag) error {
	for _, f := range flags {
		if f.path == "" {
			continue
		}
		file, err := os.OpenFile(f.path, os.O_WRONLY|os.O_CREATE, 0o644)
		if err != nil {
			return fmt.Errorf("%s: %w", f.name, err)
		}
		file.Close()
	}
	return nil
}

// checkMemory refuses a sweep of o over n ranks whose buffers do not fit:
// those of hostRanks ranks in this machine's available memory (MemAvailable;
// a GPU rank has host buffers too), and those of the ranks on each GPU of
// gpus (one rank per entry) in that GPU's free memory.
func checkMemory(o *bench.Options, n, hostRanks int, gpus []int) error {
	per := o.RankBytes(n)
	need := func(ranks int, of string) string {
		return fmt.Sprintf("-e %s: %d ranks need %s of %s (%s each: a send and a receive buffer of the largest size)",
			env.FormatSize(o.MaxBytes), ranks, sizeText(per*int64(ranks)), of, sizeText(per))
	}
	if avail, err := memAvailable(); err == nil && per*int64(hostRanks) > avail {
		return fmt.Errorf("%s, and %s is available (MemAvailable in /proc/meminfo)", need(hostRanks, "host memory"), sizeText(avail))
	}
	ranksOn := map[int]int{}
	for _, g := range gpus {
		ranksOn[g]++
	}
	for g, ranks := range ranksOn {
		free, err := cuda.FreeMemory(g)
		if err != nil {
			continue // the communicator's creation reports a GPU it cannot use
		}
		if per*int64(ranks) > free {
			return fmt.Errorf("%s, and %s of it is free", need(ranks, fmt.Sprintf("GPU %d's memory", g)), sizeText(free))
		}
	}
	return nil
}

// memAvailable returns MemAvailable from /proc/meminfo, in bytes.
func memAvailable() (int64, error) {
	f, err := os.Open("/proc/meminfo")
	if err != nil {
		return 0, err
	}
	defer f.Close()
	sc := bufio.NewScanner(f)
	for sc.Scan() {
		if rest, ok := strings.CutPrefix(sc.Text(), "MemAvailable:"); ok {
			kb, err := strconv.ParseInt(strings.TrimSuffix(strings.TrimSpace(rest), " kB"), 10, 64)
			if err != nil {
				return 0, fmt.Errorf("/proc/meminfo: MemAvailable %q", rest)
			}
			return kb << 10, nil
		}
	}
	if err := sc.Err(); err != nil {
		return 0, err
	}
	return 0, fmt.Errorf("/proc/meminfo has no MemAvailable")
}

// sizeText writes a byte count in binary units with one decimal: 64.0 GiB.
func sizeText(n int64) string {
	units := []string{"B", "KiB", "MiB", "GiB", "TiB", "PiB"}
	v, u := float64(n), 0
	for v >= 1024 && u < len(units)-1 {
		v, u = v/1024, u+1
	}
	if u == 0 {
		return fmt.Sprintf("%d B", n)
	}
	return fmt.Sprintf("%.1f %s", v, units[u])
}
