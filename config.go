package ringo

import (
	"crypto/sha256"
	"encoding/json"
	"fmt"
	"math"
	"strings"
	"time"

	"github.com/ringo-ccl/ringo/internal/cuda/nvtx"
	"github.com/ringo-ccl/ringo/internal/env"
	"github.com/ringo-ccl/ringo/network"
	"github.com/ringo-ccl/ringo/p2p"
	"github.com/ringo-ccl/ringo/rdma"
	"github.com/ringo-ccl/ringo/ring"
	"github.com/ringo-ccl/ringo/trace"
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
	// "LL128", "Simple", "LL,Simple", "^LL". "": NCCL_PROTO, else ringo
	// picks by message size. The host path has Simple and LL; the GPU path
	// also LL128, used by default only over NVLink between distinct GPUs of
	// one compute capability (a selection that includes LL128 forces it on
	// any GPU-memory link, as NCCL_PROTO does in NCCL).
	Protocol string

	// BuffSize is the Simple FIFO of each connection in bytes (all 8
	// slots). 0: NCCL_BUFFSIZE, else DefaultBuffSize.
	BuffSize int

	// LLBuffSize is the LL FIFO of each connection in bytes. 0:
	// NCCL_LL_BUFFSIZE, else DefaultLLBuffSize.
	LLBuffSize int

	// LL128BuffSize is the LL128 FIFO of each GPU connection in bytes, a
	// multiple of 1024. 0: NCCL_LL128_BUFFSIZE, else
	// DefaultGPULL128BuffSize.
	LL128BuffSize int

	// Timeout bounds every call whose context has no deadline. 0:
	// RINGO_TIMEOUT, else DefaultTimeout. Negative: no bound.
	Timeout time.Duration

	// Ring is the ring order, a permutation of the ranks. nil: 0, 1, …, n−1.
	Ring []int

	// Variant names the plan generator (package ring): "ring" (NCCL's
	// Ring algorithm), "oneshot" (all-reduce of two ranks in one exchange)
	// "bidirectional" (odd channels run the ring backwards), "bf16wire"
	// (float32 all-reduce sums travel as bfloat16), "fp32wire" (float16
	// and bfloat16 all-reduce sums travel as float32) or "hierarchical"
	// (all-reduce as a reduce-scatter inside groups of Group consecutive
	// ring ranks, an all-reduce across groups, an all-gather inside, each
	// group and column a communicator of its own). "": RINGO_VARIANT, else
	// "ring".
	Variant string

	// Group is the hierarchical variant's ranks per group; it must divide
	// the rank count. 0: RINGO_GROUP, else the smallest divisor of the
	// rank count that is at least its square root.
	Group int

	sub bool // a hierarchical communicator's group or column: not traced (its parent is)
	// subChannels caps such a communicator's channels at its parent's:
	// the groups' (or columns') kernels on a GPU run at once, as the
	// parent's ranks' do, which the parent's channels were fitted to.
	subChannels int
}

// Defaults for host communicators; GPU communicators take NCCL's.
const (
	DefaultBuffSize      = 1 << 20
	DefaultLLBuffSize    = 256 << 10
	DefaultGPUBuffSize   = 4 << 20   // NCCL_BUFFSIZE's default
	DefaultGPULLBuffSize = 512 << 10 // NCCL_LL_BUFFSIZE's default
	// DefaultGPULL128BuffSize is NCCL_LL128_BUFFSIZE's default: 8 slots of
	// 4800 lines, 576000 data bytes each.
	DefaultGPULL128BuffSize = 4915200
	DefaultGPUChannels      = 64 // measured best on 2×H200 NV18 (BENCHMARKS.md)
	DefaultTimeout          = 5 * time.Minute
)

// defaults are what a kind of communicator assumes for what the
// configuration and the environment leave open.
type defaults struct {
	channels          int
	simple, ll, ll128 int
	protos            [3]bool // protocols the executor has, indexed by ring.Protocol
	what              string  // "the host path", "the GPU path"
	gpu               bool    // choose with the tuner's cost model
}

var (
	hostDefaults = defaults{channels: 1, simple: DefaultBuffSize, ll: DefaultLLBuffSize,
		protos: [3]bool{ring.LL: true, ring.Simple: true}, what: "the host path"}
	gpuDefaults = defaults{channels: DefaultGPUChannels, simple: DefaultGPUBuffSize, ll: DefaultGPULLBuffSize,
		ll128: DefaultGPULL128BuffSize, protos: [3]bool{ring.LL: true, ring.LL128: true, ring.Simple: true},
		what: "the GPU path", gpu: true}
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
	envLL128Buff   = env.Var{Name: "LL128_BUFFSIZE", NCCL: true}
	envTimeout     = env.Var{Name: "TIMEOUT"}
	envAlgo        = env.Var{Name: "ALGO", NCCL: true}
	envTuneFile    = env.Var{Name: "TUNE_FILE"}
	envP2PRead     = env.Var{Name: "P2P_READ_ENABLE", NCCL: true}
	envP2PDisable  = env.Var{Name: "P2P_DISABLE", NCCL: true}
	envShmDisable  = env.Var{Name: "SHM_DISABLE", NCCL: true}
	envVariant     = env.Var{Name: "VARIANT"}
	envGroup       = env.Var{Name: "GROUP"}
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
	protoFrom   string      // what chose protos ("Config.Protocol", "NCCL_PROTO"); "": the defaults
	sizes       transport.Sizes
	ll128Size   int // the LL128 FIFO of a GPU connection
	timeout     time.Duration
	ring        ring.Ring
	ringGiven   bool // ring came from Config.Ring, not the default
	variant     ring.Variant
	group       int  // the hierarchical variant's ranks per group
	check       bool // RINGO_CHECK=1 (transport.CheckData): ranks in separate processes compare every call; the net wires checksum data
	untraced    bool // Config.sub: RINGO_TRACE does not apply
	p2pOff      bool // NCCL_P2P_DISABLE=1: GPUs do not reach each other's memory
	shmOff      bool // NCCL_SHM_DISABLE=1: ranks of one host do not share memory
	p2pRead     bool // NCCL_P2P_READ_ENABLE=1: GPU Simple slots at the sender, read by the receiver

	channelsGiven bool // channels came from Config.Channels
	channelsMax   int  // otherwise: NCCL_MAX_NCHANNELS or MaxChannels
}

// resolve validates cfg for n ranks and fills in what it leaves open. A
// setting of the environment that cannot be used is an error naming it
// (env.Error), or a warning and a fallback where NCCL falls back (package
// env's rule).
func resolve(cfg *Config, n int, d defaults) (settings, error) {
	var c Config
	if cfg != nil {
		c = *cfg
	}
	bad := func(format string, a ...any) (settings, error) {
		return settings{}, fmt.Errorf("%w: config: %s", ErrInvalidArgument, fmt.Sprintf(format, a...))
	}
	var s settings
	var err error

	switch {
	case c.Channels < 0 || c.Channels > ring.MaxChannels:
		return bad("Channels %d outside 1…%d", c.Channels, ring.MaxChannels)
	case c.Channels > 0:
		s.channels, s.minChannels, s.channelsGiven = c.Channels, c.Channels, true
	default:
		// NCCL clamps both: a minimum into 0…64, a maximum into 1…64.
		lo, err := envChannelsMin.Clamp(1, 0, ring.MaxChannels)
		if err != nil {
			return settings{}, err
		}
		hi, err := envChannelsMax.Clamp(ring.MaxChannels, 1, ring.MaxChannels)
		if err != nil {
			return settings{}, err
		}
		lo = max(lo, 1)
		s.channels = min(max(d.channels, lo), hi)
		s.minChannels = min(lo, s.channels)
		s.channelsMax = hi
	}
	if c.subChannels > 0 && s.channels > c.subChannels {
		s.channels, s.minChannels = c.subChannels, min(s.minChannels, c.subChannels)
	}
	if c.subChannels > 0 { // nor may a net transport raise them past it
		s.channelsMax = min(s.channelsMax, c.subChannels)
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
		s.protos, s.protoFrom = u, "Config.Protocol"
	default:
		s.protos = d.protos
		if v, name, ok := envProto.Lookup(); ok {
			set, err := env.ParseList(v, protoNames, "allreduce")
			if err != nil { // NCCL fails too
				return settings{}, env.Invalid(name, v, "%v", err)
			}
			// A valid selection this kind of communicator cannot run
			// (LL128 on the host): the variable is the process's, and
			// other communicators may run it.
			if u, any := usable(set); any {
				s.protos, s.protoFrom = u, name
			} else {
				env.Fallback(name, v, d.protoList(), "leaves no protocol %s has", d.what)
			}
		}
	}

	// NCCL takes any number for these, unchecked; a FIFO must hold whole
	// lines in each of its NSteps slots.
	const maxBuff = 1 << 30
	// sizeOf is a FIFO's size: the Config's field when set, else the
	// variable's (NCCL takes any number there, unchecked; a FIFO must hold
	// whole lines in each of its NSteps slots), else def.
	sizeOf := func(field int, v env.Var, def, line int) (int, error) {
		if field != 0 {
			return field, nil
		}
		return v.Size(def, ring.NSteps*line, maxBuff, ring.NSteps*line)
	}
	if s.sizes.Simple, err = sizeOf(c.BuffSize, envBuffSize, d.simple, 16); err != nil {
		return settings{}, err
	}
	if s.sizes.LL, err = sizeOf(c.LLBuffSize, envLLBuffSize, d.ll, 16); err != nil {
		return settings{}, err
	}
	if s.sizes.Simple > maxBuff || s.sizes.LL > maxBuff {
		return bad("buffer sizes %d/%d exceed %d", s.sizes.Simple, s.sizes.LL, maxBuff)
	}
	if err := s.sizes.Validate(); err != nil {
		return bad("%v", err)
	}
	switch {
	case c.LL128BuffSize != 0 && d.ll128 == 0:
		return bad("LL128BuffSize %d: %s has no LL128", c.LL128BuffSize, d.what)
	case c.LL128BuffSize < 0 || c.LL128BuffSize > maxBuff || c.LL128BuffSize%(ring.NSteps*128) != 0:
		return bad("LL128BuffSize %d is not a multiple of %d in 1…%d", c.LL128BuffSize, ring.NSteps*128, maxBuff)
	case d.ll128 > 0:
		if s.ll128Size, err = sizeOf(c.LL128BuffSize, envLL128Buff, d.ll128, 128); err != nil {
			return settings{}, err
		}
	}

	s.timeout = c.Timeout
	if c.Timeout == 0 {
		if s.timeout, err = envTimeout.Duration(DefaultTimeout); err != nil {
			return settings{}, err
		}
	}
	s.untraced = c.sub
	if err := s.readSwitches(); err != nil {
		return settings{}, err
	}

	if d.gpu {
		s.model = tune.Default()
		if path, name, ok := envTuneFile.Lookup(); ok {
			if s.model, err = tune.Load(path); err != nil {
				return settings{}, env.Invalid(name, path, "%v", err)
			}
		}
	}

	switch {
	case c.Variant != "":
		v, err := parseVariant(c.Variant, n)
		if err != nil {
			return bad("Variant: %v", err)
		}
		s.variant = v
	default:
		if val, name, ok := envVariant.Lookup(); ok {
			v, err := ring.ParseVariant(val)
			if err != nil {
				return settings{}, env.Invalid(name, val, "%v", err)
			}
			// A variant that cannot plan for this communicator's ranks
			// falls back: the variable is the process's, and other
			// communicators may use it.
			if err := v.ValidFor(n); err != nil {
				env.Fallback(name, val, "ring", "%v", err)
			} else {
				s.variant = v
			}
		}
	}

	s.group = ring.DefaultGroupSize(n)
	switch {
	case c.Group != 0:
		if c.Group < 1 || n%c.Group != 0 {
			return bad("Group: groups of %d ranks do not divide %d ranks", c.Group, n)
		}
		s.group = c.Group
	default:
		g, err := envGroup.Int(0, 1, math.MaxInt32)
		if err != nil {
			return settings{}, err
		}
		if g > 0 {
			if val, name, _ := envGroup.Lookup(); n%g != 0 {
				env.Fallback(name, val, fmt.Sprintf("groups of %d", s.group), "does not divide %d ranks", n)
			} else {
				s.group = g
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

// readSwitches reads the on/off settings, and checks the variables read
// later (on first use) whose bad values must fail a communicator's init:
// NCCL_NET, the NCCL_IB_* numbers, NCCL_ALGO, RINGO_TRACE,
// NCCL_NVTX_DISABLE.
func (s *settings) readSwitches() error {
	var err error
	for _, f := range []struct {
		to  *bool
		get func() (bool, error)
	}{
		{&s.check, transport.CheckData},
		{&s.p2pOff, envP2PDisable.Flag},
		{&s.shmOff, envShmDisable.Flag},
		{&s.p2pRead, envP2PRead.Flag},
		{new(bool), nvtx.Disabled},
	} {
		if *f.to, err = f.get(); err != nil {
			return err
		}
	}
	if _, err := network.Wire(); err != nil { // as NCCL, whatever the transports
		return err
	}
	if _, err := rdma.ParamsFromEnv(); err != nil { // whether or not RDMA carries the data
		return err
	}
	if !s.untraced {
		if err := trace.Check(); err != nil {
			return err
		}
	}
	if v, name, ok := envAlgo.Lookup(); ok {
		set, err := env.ParseList(v, algoNames, "allreduce")
		switch {
		case err != nil: // NCCL fails too
			return env.Invalid(name, v, "%v", err)
		case !set[1]: // valid for NCCL, which has the others
			env.Fallback(name, v, "Ring", "excludes Ring, the only algorithm ringo has")
		}
	}
	return nil
}

// parseVariant reads a variant's name and checks that it can plan for n
// ranks.
func parseVariant(name string, n int) (ring.Variant, error) {
	v, err := ring.ParseVariant(name)
	if err != nil {
		return 0, err
	}
	return v, v.ValidFor(n)
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

// fingerprint is the part of the settings every rank must share: what
// the connections' layout (layout, and placeLL128's choice, which an
// explicit protocol selection changes) and each call's plan (the channel
// range and the GPU cost model) depend on.
func (s *settings) fingerprint() string {
	model := ""
	if s.model != nil {
		b, _ := json.Marshal(s.model)
		sum := sha256.Sum256(b)
		model = fmt.Sprintf("%s/%x", s.model.Machine, sum[:8])
	}
	return fmt.Sprintf("channels=%d..%d protos=%v protoset=%v buffsize=%d llbuffsize=%d ll128buffsize=%d p2pread=%v ring=%v variant=%v group=%d model=%s",
		s.minChannels, s.channels, s.protos, s.protoFrom != "", s.sizes.Simple, s.sizes.LL, s.ll128Size, s.p2pRead, s.ring.Order, s.variant, s.group, model)
}

// gpuChoice picks the protocol (one of protos) and channel count of a GPU
// collective moving bytes (of its larger buffer) with the cost model.
func (s *settings) gpuChoice(coll ring.Collective, n int, bytes int64, protos [3]bool) (ring.Protocol, int) {
	if ch, ok := s.model.Choose(coll, n, bytes, protos, s.minChannels, s.channels); ok {
		return ch.Proto, ch.Channels
	}
	for _, p := range []ring.Protocol{ring.Simple, ring.LL128} {
		if protos[p] {
			return p, s.channels
		}
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
	switch p {
	case ring.LL:
		return s.sizes.LL
	case ring.LL128:
		return s.ll128Size
	}
	return s.sizes.Simple
}

// layout is the GPU connections' layout the settings ask for.
func (s *settings) layout() p2p.Layout {
	l := p2p.Layout{Channels: s.channels, SimpleBytes: s.sizes.Simple, LLBytes: s.sizes.LL, Read: s.p2pRead,
		Variant: s.variant}
	if s.protos[ring.LL128] {
		l.LL128Bytes = s.ll128Size
	}
	return l
}

// ll128Link is what a GPU communicator's connections mean for LL128.
type ll128Link struct {
	hostMemory bool   // FIFOs in host memory (shared memory, a net transport): LL128 cannot run
	unsafe     string // otherwise, why a 128-byte line may arrive torn ("" where it cannot)
}

// placeLL128 decides whether a GPU communicator keeps LL128 once its
// connections are known: where it is safe; where it is not but a selection
// (Config.Protocol, NCCL_PROTO) names it and the FIFOs are GPU memory, with
// a warning, as NCCL does; never over host memory. A Config.Protocol left
// with no protocol is an error; NCCL_PROTO falls back to the others.
func (s *settings) placeLL128(l ll128Link) error {
	if !s.protos[ring.LL128] {
		return nil
	}
	switch {
	case l.unsafe == "" && !l.hostMemory:
		env.Info(env.SubInit|env.SubTuning, "LL128 on: NVLink between distinct GPUs of one compute capability")
		return nil
	case !l.hostMemory && s.protoFrom != "":
		env.Warnf("%s forces LL128 where %s: a 128-byte line may arrive torn and results be wrong", s.protoFrom, l.unsafe)
		return nil
	}
	why := l.unsafe
	if l.hostMemory {
		why = "the connections' FIFOs are in host memory"
	}
	s.protos[ring.LL128] = false
	env.Info(env.SubInit|env.SubTuning, "LL128 off: %s", why)
	if s.protos != [3]bool{} {
		if s.protoFrom != "" {
			env.Warnf("%s selects LL128, but %s; not using it", s.protoFrom, why)
		}
		return nil
	}
	if s.protoFrom == "Config.Protocol" {
		return fmt.Errorf("%w: config: Protocol selects only LL128, but %s", ErrInvalidArgument, why)
	}
	s.protos = gpuDefaults.protos
	s.protos[ring.LL128] = false
	env.Warnf("%s selects only LL128, but %s; using LL, Simple", s.protoFrom, why)
	return nil
}
