package main

import (
	"bytes"
	"encoding/xml"
	"io"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"

	"github.com/ringo-ccl/ringo/bench"
)

// TestPlotInputs: CSV series (one per label), an nccl-tests table named
// after its file, and label=path, on one chart.
func TestPlotInputs(t *testing.T) {
	dir := t.TempDir()
	csv := filepath.Join(dir, "both.csv")
	f := must(os.Create(csv))
	bench.WritePoints(f, []bench.Point{
		{Bytes: 1024, TimeUs: 8, BusBW: 0.1, Label: "LL"}, {Bytes: 1 << 20, TimeUs: 20, BusBW: 50, Label: "LL"},
		{Bytes: 1024, TimeUs: 12, BusBW: 0.08, Label: "Simple"}, {Bytes: 1 << 20, TimeUs: 15, BusBW: 70, Label: "Simple"},
	})
	f.Close()
	nccl := "../../bench/results/2026-11-30-h200x2/nccl.txt"
	out := filepath.Join(dir, "out.svg")
	if err := plotMain([]string{"-o", out, "-title", "2×H200", csv, nccl, "ringo=../../bench/results/2026-11-30-h200x2/ringo.txt"}); err != nil {
		t.Fatal(err)
	}
	svg := must(os.ReadFile(out))
	d := xml.NewDecoder(bytes.NewReader(svg))
	polylines := 0
	for {
		tok, err := d.Token()
		if err == io.EOF {
			break
		}
		if err != nil {
			t.Fatalf("not XML: %v", err)
		}
		if se, ok := tok.(xml.StartElement); ok && se.Name.Local == "polyline" {
			polylines++
		}
	}
	if polylines != 4 {
		t.Fatalf("%d polylines, want 4", polylines)
	}
	for _, label := range []string{">LL<", ">Simple<", ">nccl<", ">ringo<", "8 GiB"} {
		if !bytes.Contains(svg, []byte(label)) {
			t.Errorf("no %s in the chart", label)
		}
	}
	for _, args := range [][]string{{csv}, {"-o", out}, {"-o", out, "-metric", "speed", csv}, {"-o", out, "/nonexistent"}} {
		if err := plotMain(args); err == nil {
			t.Errorf("ringo plot %v succeeded", args)
		}
	}
}

// TestBenchCSV: ringo bench -csv writes the out-of-place results as points.
func TestBenchCSV(t *testing.T) {
	bin := buildRingo(t)
	csv := filepath.Join(t.TempDir(), "bench.csv")
	out, err := exec.Command(bin, "bench", "--transport", "loopback", "--ranks", "2", "-b", "1K", "-e", "4K", "-csv", csv, "-label", "host").CombinedOutput()
	if err != nil {
		t.Fatalf("%v\n%s", err, out)
	}
	pts, err := bench.ReadPoints(must(os.Open(csv)))
	if err != nil || len(pts) != 3 || pts[2].Bytes != 4096 || pts[2].Label != "host" || !(pts[2].TimeUs > 0) || !strings.Contains(string(out), "4096") {
		t.Fatalf("%+v %v\n%s", pts, err, out)
	}
}
