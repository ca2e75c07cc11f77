package ringo

import (
	"fmt"
	"strings"
	"time"

	"github.com/ringo-ccl/ringo/internal/env"
	"github.com/ringo-ccl/ringo/ring"
	"github.com/ringo-ccl/ringo/transport"
	"github.com/ringo-ccl/ringo/tune"
)

// Config tunes a communicator. The zero value (or a nil *Config) takes every
// setting from the environment or its default; a non-zero field overrides
// the environment.
type Config struct {
	// Channels is the number of parallel rings each collective is split
	// over, 1…64. 0: the default (1 on the host), clamped to
	// NCCL_MIN_NCHANNELS…NCCL_MAX_NCHANNELS when those are set.
	Channels int

	// Protocol restricts the protocols in NCCL_PROTO's syntax: "LL",
	// "Simple", "LL,Simple", "^LL". "": NCCL_PROTO, else ringo picks by
	// message size. The host path has Simple and LL.
	Protocol string

	// BuffSize is the Simple FIFO of each connection in bytes (all 8
	// slots). 0: NCCL_BUFFSIZE, else DefaultBuffSize.
	BuffSize int

	// LLBuffSize is the LL FIFO of each connection in bytes. 0:
	// NCCL_LL_BUFFSIZE, else DefaultLLBuffSize.
	LLBuffSize int

	// Timeout bounds every call whose context has no deadline. 0:
	// RINGO_TIMEOUT, else DefaultTimeout. Negative: no bound.
	Timeout time.Duration

	// Ring is the ring order, a permutation of the ranks. nil: 0, 1, …, n−1.
	Ring []int
}

// Defaults for host communicators; GPU communicators take NCCL's.
const (
	DefaultBuffSize      = 1 << 20
	DefaultLLBuffSize    = 256 << 10
	DefaultGPUBuffSize   = 4 << 20   // NCCL_BUFFSIZE's default
	DefaultGPULLBuffSize = 512 << 10 // NCCL_LL_BUFFSIZE's default
	DefaultGPUChannels   = 64        // measured best on 2×H200 NV18 (BENCHMARKS.md)
	DefaultTimeout       = 5 * time.Minute
)

// defaults are what a kind of communicator assumes for what the
// configuration and the environment leave open.
type defaults struct {
	channels   int
	simple, ll int
	protos     [3]bool // protocols the executor has, indexed by ring.Protocol
	what       string  // "the host path", "the GPU path"
	gpu        bool    // choose with the tuner's cost model
}

var (
	hostDefaults = defaults{channels: 1, simple: DefaultBuffSize, ll: DefaultLLBuffSize,
		protos: [3]bool{ring.LL: true, ring.Simple: true}, what: "the host path"}
	gpuDefaults = defaults{channels: DefaultGPUChannels, simple: DefaultGPUBuffSize, ll: DefaultGPULLBuffSize,
		protos: [3]bool{ring.LL: true, ring.Simple: true}, what: "the GPU path", gpu: true}
)

// llMaxBytes is the largest message (bytes per rank buffer) for which the
// automatic choice takes LL over Simple. On the host every LL word costs an
// atomic store for 4 bytes of data, so LL only wins while the message is a
// few words (measured: 2.4 µs against 3.4 µs at 8 B, even at 64 B, 4× slower
// at 4 KiB; 2 ranks on 2 cores, BENCHMARKS.md).
const llMaxBytes = 64

var (
	envChannelsMin = env.Var{Name: "MIN_NCHANNELS", NCCL: true}
	envChannelsMax = env.Var{Name: "MAX_NCHANNELS", NCCL: true}
	envProto       = env.Var{Name: "PROTO", NCCL: true}
	envBuffSize    = env.Var{Name: "BUFFSIZE", NCCL: true}
	envLLBuffSize  = env.Var{Name: "LL_BUFFSIZE", NCCL: true}
	envTimeout     = env.Var{Name: "TIMEOUT"}
	envAlgo        = env.Var{Name: "ALGO", NCCL: true}
	envTuneFile    = env.Var{Name: "TUNE_FILE"}
)

// algoNames are NCCL's algorithms; ringo has Ring.
var algoNames = []string{"Tree", "Ring", "CollNetDirect", "CollNetChain", "NVLS", "NVLSTree", "PAT"}

var protoNames = []string{ring.LL.String(), ring.LL128.String(), ring.Simple.String()}

// settings is a Config resolved against the environment and defaults.
type settings struct {
	channels    int // the most channels a collective uses (connections exist for these)
	minChannels int
	model       *tune.Model // the GPU path's cost model; nil on the host
	protos      [3]bool     // allowed, indexed by ring.Protocol
	sizes       transport.Sizes
	timeout     time.Duration
	ring        ring.Ring
	ringGiven   bool // ring came from Config.Ring, not the default

	channelsGiven bool // channels came from Config.Channels
	channelsMax   int  // otherwise: NCCL_MAX_NCHANNELS or MaxChannels
}

// resolve validates cfg for n ranks and fills in what it leaves open.
func resolve(cfg *Config, n int, d defaults) (settings, error) {
	var c Config
	if cfg != nil {
		c = *cfg
	}
	bad := func(format string, a ...any) (settings, error) {
		return settings{}, fmt.Errorf("%w: config: %s", ErrInvalidArgument, fmt.Sprintf(format, a...))
	}
	var s settings

	lo := envChannelsMin.Int(1, 1, ring.MaxChannels)
	hi := envChannelsMax.Int(ring.MaxChannels, 1, ring.MaxChannels)
	switch {
	case c.Channels < 0 || c.Channels > ring.MaxChannels:
		return bad("Channels %d outside 1…%d", c.Channels, ring.MaxChannels)
	case c.Channels > 0:
		s.channels, s.minChannels, s.channelsGiven = c.Channels, c.Channels, true
	default:
		s.channels = min(max(d.channels, lo), hi)
		s.minChannels = min(lo, s.channels)
		s.channelsMax = hi
	}

	// usable keeps the protocols of set that this kind of executor has.
	usable := func(set []bool) (u [3]bool, any bool) {
		for p := range u {
			u[p] = set[p] && d.protos[p]
			any = any || u[p]
		}
		return u, any
	}
	switch {
	case c.Protocol != "":
		set, err := env.ParseList(c.Protocol, protoNames, "allreduce")
		if err != nil {
			return bad("Protocol: %v", err)
		}
		u, ok := usable(set)
		if !ok {
			return bad("Protocol %q leaves no protocol %s has (%s)", c.Protocol, d.what, d.protoList())
		}
		s.protos = u
	default:
		s.protos = d.protos
		if v, name, ok := envProto.Lookup(); ok {
			set, err := env.ParseList(v, protoNames, "allreduce")
			u, any := [3]bool{}, false
			if err == nil {
				u, any = usable(set)
			}
			switch {
			case err != nil:
				env.Warnf("%s=%q: %v; using %s", name, v, err, d.protoList())
			case !any:
				env.Warnf("%s=%q leaves no protocol %s has; using %s", name, v, d.what, d.protoList())
			default:
				s.protos = u
			}
		}
	}

	const maxBuff = 1 << 30
	s.sizes.Simple = envBuffSize.Int(d.simple, ring.NSteps*16, maxBuff)
	s.sizes.LL = envLLBuffSize.Int(d.ll, ring.NSteps*16, maxBuff)
	if c.BuffSize != 0 {
		s.sizes.Simple = c.BuffSize
	}
	if c.LLBuffSize != 0 {
		s.sizes.LL = c.LLBuffSize
	}
	if s.sizes.Simple > maxBuff || s.sizes.LL > maxBuff {
		return bad("buffer sizes %d/%d exceed %d", s.sizes.Simple, s.sizes.LL, maxBuff)
	}
	if err := s.sizes.Validate(); err != nil {
		return bad("%v", err)
	}

	s.timeout = envTimeout.Duration(DefaultTimeout)
	if c.Timeout != 0 {
		s.timeout = c.Timeout
	}

	if v, name, ok := envAlgo.Lookup(); ok {
		set, err := env.ParseList(v, algoNames, "allreduce")
		switch {
		case err != nil:
			env.Warnf("%s=%q: %v; using Ring", name, v, err)
		case !set[1]:
			env.Warnf("%s=%q excludes Ring, the only algorithm ringo has; using Ring", name, v)
		}
	}

	if d.gpu {
		s.model = tune.Default()
		if path, name, ok := envTuneFile.Lookup(); ok {
			m, err := tune.Load(path)
			if err != nil {
				env.Warnf("%s=%q: %v; using the built-in model (%s)", name, path, err, s.model.Machine)
			} else {
				s.model = m
			}
		}
	}

	if c.Ring == nil {
		s.ring = ring.Identity(n)
	} else {
		s.ring, s.ringGiven = ring.Ring{Order: append([]int(nil), c.Ring...)}, true
		if s.ring.Size() != n {
			return bad("Ring has %d ranks, communicator %d", s.ring.Size(), n)
		}
		if err := s.ring.Validate(); err != nil {
			return bad("Ring: %v", err)
		}
	}
	return s, nil
}

// protoList names the protocols d has.
func (d defaults) protoList() string {
	var names []string
	for p, ok := range d.protos {
		if ok {
			names = append(names, ring.Protocol(p).String())
		}
	}
	return strings.Join(names, ", ")
}

// fingerprint is the part of the settings every rank must share.
func (s *settings) fingerprint() string {
	return fmt.Sprintf("channels=%d protos=%v buffsize=%d llbuffsize=%d ring=%v", s.channels, s.protos, s.sizes.Simple, s.sizes.LL, s.ring.Order)
}

// gpuChoice picks the protocol and channel count of a GPU collective moving
// bytes (of its larger buffer) with the cost model.
func (s *settings) gpuChoice(coll ring.Collective, n int, bytes int64) (ring.Protocol, int) {
	if ch, ok := s.model.Choose(coll, n, bytes, s.protos, s.minChannels, s.channels); ok {
		return ch.Proto, ch.Channels
	}
	if s.protos[ring.Simple] {
		return ring.Simple, s.channels
	}
	return ring.LL, s.channels
}

// protocol picks the protocol of a call moving bytes per rank buffer.
func (s *settings) protocol(bytes int64) ring.Protocol {
	switch {
	case !s.protos[ring.Simple]:
		return ring.LL
	case !s.protos[ring.LL]:
		return ring.Simple
	case bytes <= llMaxBytes:
		return ring.LL
	}
	return ring.Simple
}

// buffSize is the FIFO size of protocol p.
func (s *settings) buffSize(p ring.Protocol) int {
	if p == ring.LL {
		return s.sizes.LL
	}
	return s.sizes.Simple
}
