package plot

import (
	"bytes"
	"encoding/xml"
	"io"
	"strings"
	"testing"
)

func sweep(scale float64) Series {
	s := Series{Label: "ringo <LL> & \"Simple\""}
	for b := 8.0; b <= 8<<30; b *= 2 {
		s.X = append(s.X, b)
		s.Y = append(s.Y, scale*b/(b+1<<20))
	}
	return s
}

// TestSVGIsWellFormed: the chart parses as XML, has one polyline per series
// and one marker per point, labels the size axis from 8 B to 8 GiB, and is
// the same bytes every time.
func TestSVGIsWellFormed(t *testing.T) {
	c := &Chart{Title: "all_reduce, 2×H200 <busbw>", Series: []Series{sweep(350), sweep(150), {Label: "one", X: []float64{0, 4096}, Y: []float64{1, 2}}}}
	var a, b bytes.Buffer
	if err := c.WriteSVG(&a); err != nil {
		t.Fatal(err)
	}
	if err := c.WriteSVG(&b); err != nil || !bytes.Equal(a.Bytes(), b.Bytes()) {
		t.Fatalf("second rendering differs (%v)", err)
	}
	counts := map[string]int{}
	var text []string
	d := xml.NewDecoder(bytes.NewReader(a.Bytes()))
	for {
		tok, err := d.Token()
		if err == io.EOF {
			break
		}
		if err != nil {
			t.Fatalf("not well-formed XML: %v\n%s", err, a.String())
		}
		switch tok := tok.(type) {
		case xml.StartElement:
			counts[tok.Name.Local]++
		case xml.CharData:
			if s := strings.TrimSpace(string(tok)); s != "" {
				text = append(text, s)
			}
		}
	}
	if counts["svg"] != 1 || counts["polyline"] != 3 {
		t.Fatalf("elements %v, want 1 svg and 3 polylines", counts)
	}
	points := 2*31 + 1 // size 0 is left out
	if want := points + 3; counts["circle"] != want {
		t.Fatalf("%d circles, want %d (a marker per point, one per legend entry)", counts["circle"], want)
	}
	all := strings.Join(text, "|")
	for _, want := range []string{"8 B", "8 GiB", "4 KiB", "128 MiB", "all_reduce, 2×H200 <busbw>", `ringo <LL> & "Simple"`, "bus bandwidth (GB/s)"} {
		if !strings.Contains(all, want) {
			t.Errorf("no text %q in %s", want, all)
		}
	}
}

func TestSVGErrors(t *testing.T) {
	for _, c := range []*Chart{
		{},
		{Series: []Series{{Label: "a", X: []float64{1, 2}, Y: []float64{1}}}},
		{Series: []Series{{Label: "zero", X: []float64{0}, Y: []float64{1}}}},
	} {
		if err := c.WriteSVG(io.Discard); err == nil {
			t.Errorf("%+v rendered", c)
		}
	}
}

func TestAxes(t *testing.T) {
	for b, want := range map[float64]string{8: "8 B", 1024: "1 KiB", 1536: "1.5 KiB", 64 << 20: "64 MiB", 8 << 30: "8 GiB"} {
		if got := SizeLabel(b); got != want {
			t.Errorf("SizeLabel(%v) = %q, want %q", b, got, want)
		}
	}
	ticks, lo, hi := log2Ticks(8, 8<<30, 14)
	if lo != 8 || hi != 8<<30 || len(ticks) > 14 || ticks[0] != 8 || ticks[len(ticks)-1] != 8<<30 {
		t.Errorf("log2 ticks %v from %v to %v", ticks, lo, hi)
	}
	yt, top := linearTicks(353.4)
	if top != 400 || len(yt) != 9 || yt[1] != 50 {
		t.Errorf("linear ticks %v to %v", yt, top)
	}
}
