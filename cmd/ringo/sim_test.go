package main

import (
	"bytes"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"

	"github.com/ringo-ccl/ringo/bench"
	"github.com/ringo-ccl/ringo/sim"
)

// TestSimSweep: a sweep prints a row per size with the tuner's choice, and
// -csv writes the same predictions as ringo plot reads them.
func TestSimSweep(t *testing.T) {
	csv := filepath.Join(t.TempDir(), "sim.csv")
	var out bytes.Buffer
	if err := runSim([]string{"-b", "64K", "-e", "64M", "-f", "4", "-csv", csv, "-label", "sim default"}, &out); err != nil {
		t.Fatal(err)
	}
	var rows []string
	for _, l := range strings.Split(out.String(), "\n") {
		if l != "" && !strings.HasPrefix(l, "#") {
			rows = append(rows, l)
		}
	}
	if len(rows) != 6 || !strings.Contains(rows[0], " LL ") || !strings.Contains(rows[5], " Simple  64 ") {
		t.Fatalf("want 6 rows, LL at 64 KiB and Simple on 64 channels at 64 MiB:\n%s", out.String())
	}
	f, err := os.Open(csv)
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	pts, err := bench.ReadPoints(f)
	if err != nil || len(pts) != 6 || pts[5].Bytes != 64<<20 || pts[5].Label != "sim default" || !(pts[5].BusBW > 200) {
		t.Fatalf("%+v %v", pts, err)
	}
}

// TestSimCompare: against a measured table, each size gets its error and a
// verdict, and the summary names the worst size from -from up.
func TestSimCompare(t *testing.T) {
	dir := t.TempDir()
	var sim bytes.Buffer
	if err := runSim([]string{"-b", "1M", "-e", "4M", "-csv", filepath.Join(dir, "p.csv")}, &sim); err != nil {
		t.Fatal(err)
	}
	pts, _ := bench.ReadPoints(must(os.Open(filepath.Join(dir, "p.csv"))))
	// "Measure" 1 MiB 10% slower than predicted (the prediction's busbw is
	// 10% high), 2 MiB 2× faster (50% low); 4 MiB is missing.
	var table bytes.Buffer
	bench.WriteHeader(&table)
	for i, scale := range []float64{1.1, 0.5} {
		us := pts[i].TimeUs * scale
		m := bench.Measure{TimeUs: us, AlgBW: float64(pts[i].Bytes) / us / 1e3, BusBW: float64(pts[i].Bytes) / us / 1e3}
		bench.WriteRow(&table, bench.Row{Bytes: pts[i].Bytes, Count: pts[i].Count, Type: "float", Op: "sum", Root: -1, OutOfPlace: m, InPlace: m})
	}
	measured := filepath.Join(dir, "measured.txt")
	os.WriteFile(measured, table.Bytes(), 0o644)
	var out bytes.Buffer
	if err := runSim([]string{"-b", "1M", "-e", "4M", "-compare", measured, "-from", "1M"}, &out); err != nil {
		t.Fatal(err)
	}
	s := out.String()
	for _, want := range []string{"   +10.0      ok", "   -50.0    MISS", "        -         -       -       -\n", "# worst error from 1048576 B up: -50.0% at 2097152 B; within ±15% at 1 of 2 sizes"} {
		if !strings.Contains(s, want) {
			t.Errorf("no %q in\n%s", want, s)
		}
	}
}

func must[T any](v T, err error) T {
	if err != nil {
		panic(err)
	}
	return v
}

func TestSimCalibrateAndErrors(t *testing.T) {
	if testing.Short() {
		t.Skip("calibration takes seconds")
	}
	var out bytes.Buffer
	if err := runSim([]string{"-calibrate", "../../sim/h200x2-tune.json"}, &out); err != nil {
		t.Fatal(err)
	}
	m, err := sim.Parse(out.Bytes())
	if err != nil || !slices.Equal(m.Protocols, sim.Default().Protocols) {
		t.Fatalf("ringo sim -calibrate sim/h200x2-tune.json differs from sim/h200x2.json (%v):\n%s", err, out.String())
	}
	for _, args := range [][]string{
		{"-b", "1x"},
		{"-coll", "scan"},
		{"-coll", "all_reduce,alltoall"}, // the model has ring collectives only
		{"-ranks", "0"},
		{"-channels", "65"},
		{"-proto", "LL256"},
		{"-variant", "tree"},
		{"-model", "/nonexistent.json"},
		{"-tune", "/nonexistent.json"},
		{"-compare", "x.txt", "-coll", "all"},
		{"-compare", "/nonexistent.txt"},
		{"-variant", "oneshot", "-ranks", "3"},
		{"extra"},
	} {
		if err := runSim(args, &out); err == nil {
			t.Errorf("ringo sim %v succeeded", args)
		}
	}
}
