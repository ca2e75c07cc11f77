// Package tune is ringo's tuner: a cost model that predicts how long a
// collective takes with each protocol and channel count, and picks the
// fastest. As NCCL's does (src/graph/tuning.cc), it models a ring collective
// as time = latency + bytes / bandwidth, with bandwidth in nccl-tests' bus
// bandwidth terms; unlike NCCL's, its constants are measured on the machine
// (`ringo tune` fits them to a sweep and writes a file) rather than derived
// from link speeds. Built-in defaults were measured on 2×H200 joined by
// NVLink (NV18).
package tune

import (
	_ "embed"
	"encoding/json"
	"fmt"
	"io"
	"math"
	"os"
	"sort"

	"github.com/ringo-ccl/ringo/ring"
)

// Entry is the fitted cost of one protocol at one channel count.
type Entry struct {
	Proto     string  `json:"proto"` // "LL", "LL128", "Simple"
	Channels  int     `json:"channels"`
	LatencyUs float64 `json:"latency_us"` // time of an empty collective
	BusBW     float64 `json:"busbw_gbs"`  // bus bandwidth it tends to, GB/s
}

// Model is a set of entries for one kind of machine.
type Model struct {
	Machine string  `json:"machine"`
	Ranks   int     `json:"ranks"` // the rank count it was measured with
	Entries []Entry `json:"entries"`
}

//go:embed h200x2.json
var h200x2 []byte

// Default returns the built-in model (2×H200, NVLink).
func Default() *Model {
	m, err := Parse(h200x2)
	if err != nil {
		panic("tune: the built-in model does not parse: " + err.Error())
	}
	return m
}

// Parse reads a model written by Write, checking every entry.
func Parse(b []byte) (*Model, error) {
	var m Model
	if err := json.Unmarshal(b, &m); err != nil {
		return nil, fmt.Errorf("tune: %w", err)
	}
	if len(m.Entries) == 0 {
		return nil, fmt.Errorf("tune: model %q has no entries", m.Machine)
	}
	for _, e := range m.Entries {
		if _, err := ProtocolOf(e.Proto); err != nil {
			return nil, err
		}
		if e.Channels < 1 || e.Channels > ring.MaxChannels || !(e.LatencyUs >= 0) || !(e.BusBW > 0) {
			return nil, fmt.Errorf("tune: bad entry %+v", e)
		}
	}
	sort.Slice(m.Entries, func(i, j int) bool {
		a, b := m.Entries[i], m.Entries[j]
		if a.Proto != b.Proto {
			return a.Proto < b.Proto
		}
		return a.Channels < b.Channels
	})
	return &m, nil
}

// Load reads a model file.
func Load(path string) (*Model, error) {
	b, err := os.ReadFile(path)
	if err != nil {
		return nil, fmt.Errorf("tune: %w", err)
	}
	return Parse(b)
}

// Encode writes m as indented JSON.
func (m *Model) Encode(w io.Writer) error {
	enc := json.NewEncoder(w)
	enc.SetIndent("", "  ")
	return enc.Encode(m)
}

// Write stores m as indented JSON in a file.
func (m *Model) Write(path string) error {
	f, err := os.Create(path)
	if err != nil {
		return err
	}
	if err := m.Encode(f); err != nil {
		f.Close()
		return err
	}
	return f.Close()
}

// ProtocolOf parses a protocol name.
func ProtocolOf(s string) (ring.Protocol, error) {
	for p := ring.LL; p <= ring.Simple; p++ {
		if p.String() == s {
			return p, nil
		}
	}
	return 0, fmt.Errorf("tune: unknown protocol %q", s)
}

// busFactor converts a collective's bytes (of the larger buffer) into bus
// bytes, as nccl-tests' bus bandwidth counts them.
func busFactor(c ring.Collective, n int) float64 {
	switch c {
	case ring.AllReduce:
		return 2 * float64(n-1) / float64(n)
	case ring.AllGather, ring.ReduceScatter:
		return float64(n-1) / float64(n)
	}
	return 1
}

// Predict returns e's time in microseconds for bytes of collective c on n
// ranks.
func (e *Entry) Predict(c ring.Collective, n int, bytes int64) float64 {
	return e.LatencyUs + float64(bytes)*busFactor(c, n)/(e.BusBW*1e3)
}

// Choice is the tuner's pick.
type Choice struct {
	Proto       ring.Protocol
	Channels    int
	PredictedUs float64
}

// Choose returns the protocol and channel count with the smallest
// predicted time among the allowed protocols, with between minChannels and
// maxChannels channels. A protocol measured only outside that range is
// predicted by its entry with the nearest channel count and run with the
// nearest count in range. ok is false when no allowed protocol was measured.
func (m *Model) Choose(c ring.Collective, n int, bytes int64, allowed [3]bool, minChannels, maxChannels int) (Choice, bool) {
	best, ok := Choice{PredictedUs: math.Inf(1)}, false
	for p := range allowed {
		if !allowed[p] {
			continue
		}
		var in, near *Entry // best entry in range; entry nearest the range
		dist := math.MaxInt
		for i := range m.Entries {
			e := &m.Entries[i]
			if e.Proto != ring.Protocol(p).String() {
				continue
			}
			if e.Channels >= minChannels && e.Channels <= maxChannels {
				if in == nil || e.Predict(c, n, bytes) < in.Predict(c, n, bytes) {
					in = e
				}
				continue
			}
			d := minChannels - e.Channels
			if e.Channels > maxChannels {
				d = e.Channels - maxChannels
			}
			if d < dist {
				near, dist = e, d
			}
		}
		e, ch := in, 0
		if e != nil {
			ch = e.Channels
		} else if near != nil {
			e, ch = near, min(max(near.Channels, minChannels), maxChannels)
		} else {
			continue
		}
		if t := e.Predict(c, n, bytes); t < best.PredictedUs {
			best, ok = Choice{Proto: ring.Protocol(p), Channels: ch, PredictedUs: t}, true
		}
	}
	return best, ok
}

// Fit returns the latency and bus bandwidth that best predict times (µs)
// measured at bus bytes (bytes × the collective's bus factor): the line
// time = latency + busBytes/bandwidth minimizing the relative error, so that
// small sizes, where latency dominates, weigh as much as large ones.
func Fit(busBytes, us []float64) (latencyUs, busBW float64, err error) {
	if len(busBytes) != len(us) || len(us) < 2 {
		return 0, 0, fmt.Errorf("tune: need at least 2 points, got %d", len(us))
	}
	var sw, sx, sy, sxx, sxy float64
	for i := range us {
		if !(us[i] > 0) {
			return 0, 0, fmt.Errorf("tune: time %v at %v bytes", us[i], busBytes[i])
		}
		w := 1 / (us[i] * us[i])
		sw += w
		sx += w * busBytes[i]
		sy += w * us[i]
		sxx += w * busBytes[i] * busBytes[i]
		sxy += w * busBytes[i] * us[i]
	}
	den := sw*sxx - sx*sx
	if den <= 0 {
		return 0, 0, fmt.Errorf("tune: all points at one size")
	}
	slope := (sw*sxy - sx*sy) / den // µs per bus byte
	lat := (sy - slope*sx) / sw
	if slope <= 0 {
		return 0, 0, fmt.Errorf("tune: time does not grow with size")
	}
	return max(lat, 0), 1 / slope / 1e3, nil
}
