package tune

import (
	"math"
	"path/filepath"
	"testing"

	"github.com/ringo-ccl/ringo/ring"
)

func TestFitRecoversALine(t *testing.T) {
	var x, y []float64
	for b := 1.0; b <= 1<<30; b *= 4 {
		x = append(x, b)
		y = append(y, 7.5+b/(250*1e3))
	}
	lat, bw, err := Fit(x, y)
	if err != nil || math.Abs(lat-7.5) > 1e-6 || math.Abs(bw-250) > 1e-6 {
		t.Fatalf("fit %v µs %v GB/s (%v), want 7.5 and 250", lat, bw, err)
	}
	if _, _, err := Fit([]float64{1, 1}, []float64{2, 2}); err == nil {
		t.Fatal("fit of one size")
	}
	if _, _, err := Fit([]float64{1, 2}, []float64{5, 4}); err == nil {
		t.Fatal("fit of shrinking times")
	}
}

func TestChoose(t *testing.T) {
	m := &Model{Entries: []Entry{
		{Proto: "LL", Channels: 8, LatencyUs: 5, BusBW: 40},
		{Proto: "Simple", Channels: 16, LatencyUs: 15, BusBW: 300},
		{Proto: "Simple", Channels: 64, LatencyUs: 20, BusBW: 350},
	}}
	all := [3]bool{true, true, true}
	cases := []struct {
		bytes int64
		proto ring.Protocol
		ch    int
	}{
		{8, ring.LL, 2},         // too little for more than two channels (LL: 8 KiB each on 2 ranks)
		{40 << 10, ring.LL, 5},  // five channels' worth
		{256 << 10, ring.LL, 8}, // enough for the measured 8
		{4 << 20, ring.Simple, 16}, {1 << 30, ring.Simple, 64},
	}
	for _, c := range cases {
		got, ok := m.Choose(ring.AllReduce, 2, c.bytes, all, 1, 64)
		if !ok || got.Proto != c.proto || got.Channels != c.ch {
			t.Errorf("%d bytes: %+v, want %v with %d channels", c.bytes, got, c.proto, c.ch)
		}
	}
	if got, _ := m.Choose(ring.AllReduce, 2, 8, [3]bool{ring.Simple: true}, 1, 64); got.Proto != ring.Simple {
		t.Errorf("LL excluded: %+v", got)
	}
	if got, _ := m.Choose(ring.AllReduce, 2, 1<<30, all, 1, 32); got.Channels != 16 {
		t.Errorf("max 32 channels: %+v", got)
	}
	if _, ok := m.Choose(ring.AllReduce, 2, 8, [3]bool{ring.LL128: true}, 1, 64); ok {
		t.Error("chose with no allowed protocol measured")
	}
	if got, _ := m.Choose(ring.AllReduce, 2, 64<<10, [3]bool{ring.Simple: true}, 1, 64); got.Channels != 2 {
		t.Errorf("Simple, 64 KiB: %+v, want 2 channels (32 KiB each)", got)
	}
	if MinChannelBytes(ring.LL, 4) != 16<<10 || MinChannelBytes(ring.LL128, 2) != 4<<10 || MinChannelBytes(ring.Simple, 2) != 32<<10 {
		t.Error("MinChannelBytes is not NCCL's thresholds × 512 threads")
	}
	// Forced to 3 channels: Simple's nearest measurement predicts, the
	// count is the forced one.
	if got, _ := m.Choose(ring.AllReduce, 2, 1<<30, [3]bool{ring.Simple: true}, 3, 3); got.Channels != 3 || got.Proto != ring.Simple {
		t.Errorf("forced 3 channels: %+v", got)
	}
}

func TestDefaultAndRoundTrip(t *testing.T) {
	m := Default()
	p := filepath.Join(t.TempDir(), "m.json")
	if err := m.Write(p); err != nil {
		t.Fatal(err)
	}
	back, err := Load(p)
	if err != nil || len(back.Entries) != len(m.Entries) {
		t.Fatalf("round trip: %v", err)
	}
	for _, bad := range []string{`{}`, `{"entries":[{"proto":"Fast","channels":1,"latency_us":1,"busbw_gbs":1}]}`,
		`{"entries":[{"proto":"LL","channels":0,"latency_us":1,"busbw_gbs":1}]}`, `not json`,
		`{"entries":[{"proto":"LL","channels":1,"latency_us":1,"busbw_gbs":1,"us":[1,2]}]}`,
		`{"entries":[{"proto":"LL","channels":1,"latency_us":1,"busbw_gbs":1,"us":[1,2,3,4,5,6,7,8,9,-1]}]}`} {
		if _, err := Parse([]byte(bad)); err == nil {
			t.Errorf("accepted %s", bad)
		}
	}
}
