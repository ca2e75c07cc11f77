package sim

import (
	_ "embed"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"math"
	"os"

	"github.com/ringo-ccl/ringo/ring"
	"github.com/ringo-ccl/ringo/tune"
)

// ErrInvalidModel is wrapped by every error that rejects a Model.
var ErrInvalidModel = errors.New("invalid cost model")

// Params are the costs of one protocol.
type Params struct {
	Proto string `json:"proto"` // "LL", "LL128", "Simple"

	// LaunchUs is the fixed cost of a collective, paid once: the host's
	// enqueue, the kernel's launch and exit.
	LaunchUs float64 `json:"launch_us"`
	// BlockUs is the launch's cost per block of its grid: one block per
	// channel of the plan, empty channels included.
	BlockUs float64 `json:"block_us"`
	// AlphaUs is the fixed cost of every slice a channel moves (α): waiting
	// for its flag or credit, the block's barriers, the fence before the
	// tail is published.
	AlphaUs float64 `json:"alpha_us"`
	// ChannelGBs is the most one channel (one thread block) moves, GB/s of
	// payload: the rate of a slice that only receives or copies locally, and
	// the cap of one that sends.
	ChannelGBs float64 `json:"channel_gbs"`
	// LinkGBs is a directed link's capacity, GB/s of payload, shared evenly
	// by the channels whose connections carry data over it.
	LinkGBs float64 `json:"link_gbs"`
	// BuffBytes is the FIFO of one connection (all NSteps slots) of the
	// plans the parameters were calibrated with; ringo sim plans with it.
	BuffBytes int `json:"buff_bytes"`
}

// Model is the cost model of one kind of machine: per protocol, the
// parameters of the alpha-beta simulation. Every ordered pair of ranks is
// joined by its own directed link (a full mesh, as NVLink joins 2 GPUs).
type Model struct {
	Machine   string   `json:"machine"`
	Ranks     int      `json:"ranks"` // the rank count it was calibrated with
	From      string   `json:"from"`  // what it was derived from, and how
	Protocols []Params `json:"protocols"`
}

//go:embed h200x2.json
var h200x2 []byte

// h200x2Tune is what the built-in model is calibrated from: a tuner model
// of 2×H200 that keeps its measured points (ringo tune -n 50), measured
// apart from the tuner's own built-in model.
//
//go:embed h200x2-tune.json
var h200x2Tune []byte

// Default returns the built-in model: 2×H200 joined by NVLink, calibrated
// by Calibrate from h200x2-tune.json (`ringo sim -calibrate
// sim/h200x2-tune.json`).
func Default() *Model {
	m, err := Parse(h200x2)
	if err != nil {
		panic("sim: the built-in model does not parse: " + err.Error())
	}
	return m
}

// Parse reads a model written by Encode and validates it.
func Parse(b []byte) (*Model, error) {
	var m Model
	if err := json.Unmarshal(b, &m); err != nil {
		return nil, fmt.Errorf("sim: %w: %w", ErrInvalidModel, err)
	}
	if err := m.Validate(); err != nil {
		return nil, err
	}
	return &m, nil
}

// Load reads a model file.
func Load(path string) (*Model, error) {
	b, err := os.ReadFile(path)
	if err != nil {
		return nil, fmt.Errorf("sim: %w", err)
	}
	m, err := Parse(b)
	if err != nil {
		return nil, fmt.Errorf("%s: %w", path, err)
	}
	return m, nil
}

// Encode writes m as indented JSON.
func (m *Model) Encode(w io.Writer) error {
	enc := json.NewEncoder(w)
	enc.SetIndent("", "  ")
	return enc.Encode(m)
}

// Validate reports the first thing wrong with m, wrapping ErrInvalidModel.
func (m *Model) Validate() error {
	if len(m.Protocols) == 0 {
		return fmt.Errorf("sim: %w: model %q has no protocols", ErrInvalidModel, m.Machine)
	}
	seen := map[string]bool{}
	for _, p := range m.Protocols {
		if err := p.validate(); err != nil {
			return err
		}
		if seen[p.Proto] {
			return fmt.Errorf("sim: %w: protocol %s appears twice", ErrInvalidModel, p.Proto)
		}
		seen[p.Proto] = true
	}
	return nil
}

func (p *Params) validate() error {
	bad := func(field string, v float64, want string) error {
		return fmt.Errorf("sim: %w: %s: %s %v, need %s", ErrInvalidModel, p.Proto, field, v, want)
	}
	if _, err := tune.ProtocolOf(p.Proto); err != nil {
		return fmt.Errorf("sim: %w: proto: %w", ErrInvalidModel, err)
	}
	finite := func(v float64) bool { return !math.IsNaN(v) && !math.IsInf(v, 0) }
	switch {
	case !finite(p.BlockUs) || p.BlockUs < 0:
		return bad("block_us", p.BlockUs, "≥ 0")
	case !finite(p.LaunchUs) || p.LaunchUs < 0:
		return bad("launch_us", p.LaunchUs, "≥ 0")
	case !finite(p.AlphaUs) || p.AlphaUs < 0:
		return bad("alpha_us", p.AlphaUs, "≥ 0")
	case !finite(p.ChannelGBs) || p.ChannelGBs <= 0:
		return bad("channel_gbs", p.ChannelGBs, "> 0")
	case !finite(p.LinkGBs) || p.LinkGBs <= 0:
		return bad("link_gbs", p.LinkGBs, "> 0")
	case p.BuffBytes < 0:
		return bad("buff_bytes", float64(p.BuffBytes), "≥ 0")
	}
	return nil
}

// Params returns the parameters of protocol p.
func (m *Model) Params(p ring.Protocol) (*Params, error) {
	for i := range m.Protocols {
		if m.Protocols[i].Proto == p.String() {
			return &m.Protocols[i], nil
		}
	}
	return nil, fmt.Errorf("sim: %w: model %q has no %v parameters", ErrInvalidModel, m.Machine, p)
}
