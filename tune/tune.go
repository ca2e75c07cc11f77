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
	// Us is the measured all-reduce time (µs) at each size of
	// Sweep(Proto), the points the line was fitted to; absent from models
	// written before ringo tune kept them.
	Us []float64 `json:"us,omitempty"`
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
		p, err := ProtocolOf(e.Proto)
		if err != nil {
			return nil, err
		}
		if e.Channels < 1 || e.Channels > ring.MaxChannels || !(e.LatencyUs >= 0) || !(e.BusBW > 0) {
			return nil, fmt.Errorf("tune: bad entry %+v", e)
		}
		if n, sizes := len(e.Us), len(Sweep(p)); n != 0 && n != sizes {
			return nil, fmt.Errorf("tune: %s entry of %d channels has %d measured times, its sweep %d sizes", e.Proto, e.Channels, n, sizes)
		}
		for _, us := range e.Us {
			if !(us > 0) {
				return nil, fmt.Errorf("tune: %s entry of %d channels has a measured time of %v µs", e.Proto, e.Channels, us)
			}
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

// Sweep returns the all-reduce sizes (bytes of float32) at which `ringo
// tune` measures protocol p: 8 B by factors of 4 up to 1 GiB, and only up
// to 4 MiB for LL, whose time grows fast (a geometric sweep: package sim
// simulates the same sizes).
func Sweep(p ring.Protocol) []int64 {
	top := int64(1 << 30)
	if p == ring.LL {
		top = 4 << 20
	}
	var s []int64
	for b := int64(8); b <= top; b *= 4 {
		s = append(s, b)
	}
	return s
}

// ProtocolOf parses a protocol name.
func ProtocolOf(s string) (ring.Protocol, error) {
	p, err := ring.ParseProtocol(s)
	if err != nil {
		return 0, fmt.Errorf("tune: %w", err)
	}
	return p, nil
}

// Predict returns e's time in microseconds for bytes of collective c on n
// ranks, from its line. (Choosing by the measured points instead, Entry.Us,
// was tried and measured worse on 2×H200: the minimum of noisy points picks
// the noise — 8–10 µs from 8 B to 256 B where the line's choice took 6–7.)
func (e *Entry) Predict(c ring.Collective, n int, bytes int64) float64 {
	return e.LatencyUs + float64(bytes)*c.BusFactor(n)/(e.BusBW*1e3)
}

// Choice is the tuner's pick.
type Choice struct {
	Proto       ring.Protocol
	Channels    int
	PredictedUs float64
}

// MinChannelBytes is the least a collective must move per channel for the
// tuner to spread it over more than two channels (or the fewest allowed, if
// more): NCCL's thread thresholds (bytes per thread: LL 8 × ranks on a
// ring, LL128 8, Simple 64) times the 512 threads that move data. The line
// fits are least reliable there — a channel with a few words to move costs
// its block's launch and flag round trips, which a fit over the whole sweep
// underestimates (measured on 2×H200: LL over 32 channels took 10–12 µs
// from 16 to 64 KiB where its fit said 8.3–8.6, and 8 channels 8.5–9).
// Two, not one: there one channel was measured slower than two at every
// small size (LL 9.7–10.1 µs against 7.6–7.7 in both tuning runs).
func MinChannelBytes(p ring.Protocol, n int) int64 {
	const threads = 512
	switch p {
	case ring.LL:
		return int64(8 * max(n, 1) * threads)
	case ring.LL128:
		return 8 * threads
	}
	return 64 * threads
}

// Choose returns the protocol and channel count with the smallest
// predicted time among the allowed protocols, with between minChannels and
// maxChannels channels, and no more than leave every channel
// MinChannelBytes (beyond minChannels). A protocol measured only outside
// that range is predicted by its entry with the nearest channel count and
// run with the nearest count in range. ok is false when no allowed protocol
// was measured.
func (m *Model) Choose(c ring.Collective, n int, bytes int64, allowed [3]bool, minChannels, maxChannels int) (Choice, bool) {
	best, ok := Choice{PredictedUs: math.Inf(1)}, false
	for p := range allowed {
		if !allowed[p] {
			continue
		}
		var in, near *Entry // best entry in range; entry nearest the range
		dist := math.MaxInt
		// The most channels this message keeps busy.
		busy := max(minChannels, min(2, maxChannels), int(min(bytes/MinChannelBytes(ring.Protocol(p), n), int64(maxChannels))))
		for i := range m.Entries {
			e := &m.Entries[i]
			if e.Proto != ring.Protocol(p).String() {
				continue
			}
			if e.Channels >= minChannels && e.Channels <= min(maxChannels, busy) {
				if in == nil || e.Predict(c, n, bytes) < in.Predict(c, n, bytes) {
					in = e
				}
				continue
			}
			d := minChannels - e.Channels
			if e.Channels > busy {
				d = e.Channels - busy
			}
			if d < dist {
				near, dist = e, d
			}
		}
		e, ch := in, 0
		if e != nil {
			ch = e.Channels
		} else if near != nil {
			e, ch = near, min(max(near.Channels, minChannels), busy)
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
