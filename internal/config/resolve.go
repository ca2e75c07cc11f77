package config

import (
	"fmt"
	"math"
	"strings"
	"time"

	"github.com/ringo-ccl/ringo/internal/cuda/nvtx"
	"github.com/ringo-ccl/ringo/internal/env"
	"github.com/ringo-ccl/ringo/internal/errs"
	"github.com/ringo-ccl/ringo/kernels"
	"github.com/ringo-ccl/ringo/network"
	"github.com/ringo-ccl/ringo/rdma"
	"github.com/ringo-ccl/ringo/ring"
	"github.com/ringo-ccl/ringo/shm"
	"github.com/ringo-ccl/ringo/trace"
	"github.com/ringo-ccl/ringo/transport"
	"github.com/ringo-ccl/ringo/tune"
)

// Request is what a communicator's maker asks for: the public Config's
// fields (ringo.Config documents them), and what a hierarchical
// communicator's parent passes its group and column communicators. The
// zero value asks for nothing: every setting comes from the environment or
// the defaults.
type Request struct {
	Channels      int
	Protocol      string
	BuffSize      int
	LLBuffSize    int
	LL128BuffSize int
	Timeout       time.Duration
	StopGrace     time.Duration
	Ring          []int
	Variant       string
	Group         int

	Sub         bool // a hierarchical communicator's group or column: not traced (its parent is)
	SubChannels int  // if > 0, the most channels (the parent's)
}

// Defaults of the settings; the root package exports them under the same
// names.
const (
	// DefaultBuffSize is the Simple FIFO of host ranks in separate
	// processes where some host's /dev/shm lacks room for
	// DefaultLocalBuffSize (Settings.FitShm).
	DefaultBuffSize = 1 << 20
	// DefaultLocalBuffSize is host ranks' of one process (NewLocal), whose
	// FIFOs are heap memory, not /dev/shm: 4 MiB took 2 such ranks'
	// all-reduce busbw from 3.1–4.2 to 5.7–8.7 GB/s at 4–16 MiB, no
	// clear change below (the 2-core VM; BENCHMARKS.md, issue 25). Ranks
	// of separate processes gain as much, and take it too where every
	// host's /dev/shm, which containers often cap at 64 MiB, has room
	// (Settings.FitShm); elsewhere DefaultBuffSize.
	DefaultLocalBuffSize    = 4 << 20
	DefaultLLBuffSize       = 256 << 10
	DefaultGPUBuffSize      = 4 << 20   // NCCL_BUFFSIZE's default
	DefaultGPULLBuffSize    = 512 << 10 // NCCL_LL_BUFFSIZE's default
	DefaultGPULL128BuffSize = 4915200   // NCCL_LL128_BUFFSIZE's default: 8 slots of 4800 lines, 576000 data bytes each
	DefaultGPUChannels      = 64        // measured best on 2×H200 NV18 (BENCHMARKS.md)
	DefaultTimeout          = 5 * time.Minute
	DefaultP2PLLThreshold   = 16384 // NCCL_P2P_LL_THRESHOLD's default: point-to-point messages of at most this many bytes go by LL
	DefaultP2PChannels      = 32    // NCCL_MAX_P2P_NCHANNELS's default: the channels a GPU point-to-point call shares among its peers
	// DefaultDirectMax is RINGO_DIRECT_MAX's default: GPU all-reduces of
	// at most these bytes run by direct reads where the ranks reach each
	// other's memory (measured on one H200, BENCHMARKS "Direct all-reduce").
	DefaultDirectMax = 256 << 10
	// DefaultTwoShotMax is RINGO_TWOSHOT_MAX's default: GPU all-reduces
	// above RINGO_DIRECT_MAX and up to these bytes run by direct reads in
	// two shots where the ranks reach each other's memory.
	DefaultTwoShotMax = 4 << 20
	// DefaultGatherDirectMin is RINGO_GATHER_DIRECT_MIN's default for
	// communicators of more than two ranks: their reduce-scatters and
	// all-gathers read directly from a whole buffer of this size (on one
	// H200 with 4 ranks sharing it the ring's three steps were 1–2 µs
	// quicker to 128 KiB, the direct kernels 18–33 % quicker at 2 MiB;
	// BENCHMARKS "Direct reduce-scatter and all-gather"). Two ranks: 0.
	DefaultGatherDirectMin = 1 << 20
	// DefaultP2PStripe is RINGO_P2P_STRIPE's default: where ranks of one
	// process share one GPU, each sends a large message in tiles dealt to
	// its parts in turn, so that the tiles the GPU's blocks copy at once —
	// one of each part of every rank's message — span about this many
	// bytes together (a tile is this over the ranks and the message's
	// parts: ring.P2PSpec.Stripe). On one H200, with tiles spanning 4 MiB
	// so, 2 ranks' send/recv (64 parts, 32-KiB tiles) went from 823–825 to
	// 853–863 GB/s at 64 MiB and 931 to 975–977 at 256 MiB; 4 ranks' (16
	// parts, 64-KiB tiles) from 430–433 to 458–459 at 64 MiB, all-to-all
	// from 338 to 355 at 256 MiB. Spanning 2 MiB was slower than whole
	// parts (2 ranks: 733–736 GB/s at 64 MiB; 4 ranks: 378–380), and 8 or
	// 16 MiB gained less (2 ranks: 839–845, 828–836; 4 ranks: 431–434)
	// (BENCHMARKS "Point-to-point in tiles").
	DefaultP2PStripe = 4 << 20
)

// Defaults are what a kind of communicator assumes for what the
// configuration and the environment leave open.
type Defaults struct {
	channels          int
	simple, ll, ll128 int
	roomySimple       int     // if > simple, the Simple FIFO where /dev/shm has room for it (Settings.FitShm)
	protos            [3]bool // protocols the executor has, indexed by ring.Protocol
	what              string  // "the host path", "the GPU path"
	gpu               bool    // choose with the tuner's cost model
}

// Host and GPU are the defaults of host and GPU communicators; LocalHost
// is Host for ranks of one process, with larger Simple FIFOs. Host's ranks,
// in separate processes, take LocalHost's Simple FIFOs too where every
// host's /dev/shm has room for them (Settings.FitShm).
var (
	Host = Defaults{channels: 1, simple: DefaultBuffSize, roomySimple: DefaultLocalBuffSize, ll: DefaultLLBuffSize,
		protos: [3]bool{ring.LL: true, ring.Simple: true}, what: "the host path"}
	LocalHost = Host.withSimple(DefaultLocalBuffSize)
	GPU       = Defaults{channels: DefaultGPUChannels, simple: DefaultGPUBuffSize, ll: DefaultGPULLBuffSize,
		ll128: DefaultGPULL128BuffSize, protos: [3]bool{ring.LL: true, ring.LL128: true, ring.Simple: true},
		what: "the GPU path", gpu: true}
)

// withSimple returns d with Simple FIFOs of bytes, whatever the room.
func (d Defaults) withSimple(bytes int) Defaults {
	d.simple, d.roomySimple = bytes, 0
	return d
}

// llMaxBytes is the largest message (bytes per rank buffer) for which the
// automatic choice takes LL over Simple. On the host every LL word carries
// 4 bytes of data, so LL only wins while the message is a few hundred
// bytes: ranks as goroutines of one process (the ring's FIFOs; processes
// of one host take the board below 64 KiB) took 1.06–1.22 µs by LL against
// 1.25–1.30 by Simple from 64 to 256 B at 2 ranks, as long at 512 B, and
// 4.7–5.1 against 6.2–6.9 µs at 4 ranks on 2 cores (the 2-core VM,
// BENCHMARKS.md, issue 25). Each LL word was an XCHG until then, and 64 B
// the limit.
const llMaxBytes = 256

var (
	envChannelsMin = env.Var{Name: "MIN_NCHANNELS", NCCL: true}
	envChannelsMax = env.Var{Name: "MAX_NCHANNELS", NCCL: true}
	envProto       = env.Var{Name: "PROTO", NCCL: true}
	envBuffSize    = env.Var{Name: "BUFFSIZE", NCCL: true}
	envLLBuffSize  = env.Var{Name: "LL_BUFFSIZE", NCCL: true}
	envLL128Buff   = env.Var{Name: "LL128_BUFFSIZE", NCCL: true}
	envP2PLL       = env.Var{Name: "P2P_LL_THRESHOLD", NCCL: true}
	envP2PChannels = env.Var{Name: "MAX_P2P_NCHANNELS", NCCL: true}
	envDirectMax   = env.Var{Name: "DIRECT_MAX"}
	envTwoShotMax  = env.Var{Name: "TWOSHOT_MAX"}
	envP2PStripe   = env.Var{Name: "P2P_STRIPE"}
	envGatherMin   = env.Var{Name: "GATHER_DIRECT_MIN"}
	envLaunchOrder = env.Var{Name: "LAUNCH_ORDER"}
	envTimeout     = env.Var{Name: "TIMEOUT"}
	envStopGrace   = env.Var{Name: "STOP_GRACE"}
	envAlgo        = env.Var{Name: "ALGO", NCCL: true}
	envTuneFile    = env.Var{Name: "TUNE_FILE"}
	envP2PRead     = env.Var{Name: "P2P_READ_ENABLE", NCCL: true}
	envP2PDisable  = env.Var{Name: "P2P_DISABLE", NCCL: true}
	envP2PDirect   = env.Var{Name: "P2P_DIRECT_DISABLE", NCCL: true}
	envPDLDisable  = env.Var{Name: "PDL_DISABLE"}
	envShmDisable  = env.Var{Name: "SHM_DISABLE", NCCL: true}
	envCMA         = env.Var{Name: "CMA"}
	envVariant     = env.Var{Name: "VARIANT"}
	envGroup       = env.Var{Name: "GROUP"}
)

// algoNames are NCCL's algorithms; ringo has Ring.
var algoNames = []string{"Tree", "Ring", "CollNetDirect", "CollNetChain", "NVLS", "NVLSTree", "PAT"}

var protoNames = []string{ring.LL.String(), ring.LL128.String(), ring.Simple.String()}

// Settings are a Request resolved against the environment and defaults.
type Settings struct {
	Channels    int // the most channels a collective uses (connections exist for these)
	MinChannels int
	Model       *tune.Model // the GPU path's cost model; nil on the host
	Protos      [3]bool     // allowed, indexed by ring.Protocol
	ProtoFrom   string      // what chose protos ("Config.Protocol", "NCCL_PROTO"); "": the defaults
	Sizes       transport.Sizes
	// RoomySimple, where > 0, is the Simple FIFO that host ranks in
	// separate processes take instead of Sizes.Simple where every host's
	// /dev/shm has room for it (FitShm decides, once the ranks have
	// exchanged what they have free); 0 where neither Config.BuffSize nor
	// NCCL_BUFFSIZE leaves the size open, and for other communicators.
	RoomySimple      int
	LL128Size        int  // the LL128 FIFO of a GPU connection
	P2PLLMax         int  // NCCL_P2P_LL_THRESHOLD: GPU point-to-point messages of at most these bytes go by LL (P2PLL)
	P2PChannels      int  // NCCL_MAX_P2P_NCHANNELS: the channels a GPU point-to-point call shares among its peers
	P2PChannelsGiven bool // NCCL_MAX_P2P_NCHANNELS is set (SharedP2P leaves it)
	Timeout          time.Duration
	StopGrace        time.Duration // a GPU rank's kernels wait this long after a loss before they stop (Procs.StopGrace)
	Ring             ring.Ring
	RingGiven        bool // ring came from Config.Ring, not the default
	Variant          ring.Variant
	Group            int            // the hierarchical variant's ranks per group
	Check            bool           // RINGO_CHECK=1 (transport.CheckData): ranks in separate processes compare every call; the net wires checksum data
	Untraced         bool           // Request.Sub: RINGO_TRACE does not apply
	P2POff           bool           // NCCL_P2P_DISABLE=1: GPUs do not reach each other's memory
	SHMOff           bool           // NCCL_SHM_DISABLE=1: ranks of one host do not share memory
	CMA              shm.AttachMode // RINGO_CMA: whether host ranks of one host read each other's buffers (shm.Attach)
	P2PRead          bool           // NCCL_P2P_READ_ENABLE=1: GPU Simple slots at the sender, read by the receiver
	DirectOff        bool           // NCCL_P2P_DIRECT_DISABLE=1: GPU ranks of one process send through FIFOs, not into each other's buffers
	OverlapOff       bool           // RINGO_PDL_DISABLE=1: a GPU call's kernel does not overlap the end of the one before it on its stream (device.New)
	DirectMax        int            // RINGO_DIRECT_MAX: GPU all-reduces of at most these bytes read the peers' inputs directly where they can (0: never, and in a hierarchical variant's phases)
	TwoShotMax       int            // RINGO_TWOSHOT_MAX: and those above DirectMax up to these bytes, in two shots (not above DirectMax: never)
	P2PStripe        int            // RINGO_P2P_STRIPE: ranks of one process sharing one GPU send large messages in tiles that, copied at once, span this many bytes together (ring.P2PSpec.Stripe: this over the ranks); 0: in whole parts
	GatherDirectMin  int            // RINGO_GATHER_DIRECT_MIN: reduce-scatters and all-gathers whose whole buffer is at least this (and at most DirectStage) read directly
	Unordered        bool           // RINGO_LAUNCH_ORDER=0: ranks of one process sharing a GPU enqueue their collectives without waiting for each other (calls.Table)

	ChannelsGiven bool // channels came from Config.Channels
	ChannelsMax   int  // otherwise: NCCL_MAX_NCHANNELS or MaxChannels
}

// Resolve validates c for n ranks and fills in what it leaves open. A
// setting of the environment that cannot be used is an error naming it
// (env.Error), or a warning and a fallback where NCCL falls back (package
// env's rule). Errors of c wrap errs.errs.ErrInvalidArgument.
func Resolve(c Request, n int, d Defaults) (Settings, error) {
	bad := func(format string, a ...any) (Settings, error) {
		return Settings{}, fmt.Errorf("%w: config: %s", errs.ErrInvalidArgument, fmt.Sprintf(format, a...))
	}
	var s Settings
	var err error

	switch {
	case c.Channels < 0 || c.Channels > ring.MaxChannels:
		return bad("Channels %d outside 1…%d", c.Channels, ring.MaxChannels)
	case c.Channels > 0:
		s.Channels, s.MinChannels, s.ChannelsGiven = c.Channels, c.Channels, true
	default:
		// NCCL clamps both: a minimum into 0…64, a maximum into 1…64.
		lo, err := envChannelsMin.Clamp(1, 0, ring.MaxChannels)
		if err != nil {
			return Settings{}, err
		}
		hi, err := envChannelsMax.Clamp(ring.MaxChannels, 1, ring.MaxChannels)
		if err != nil {
			return Settings{}, err
		}
		lo = max(lo, 1)
		s.Channels = min(max(d.channels, lo), hi)
		s.MinChannels = min(lo, s.Channels)
		s.ChannelsMax = hi
	}
	if c.SubChannels > 0 && s.Channels > c.SubChannels {
		s.Channels, s.MinChannels = c.SubChannels, min(s.MinChannels, c.SubChannels)
	}
	if c.SubChannels > 0 { // nor may a net transport raise them past it
		s.ChannelsMax = min(s.ChannelsMax, c.SubChannels)
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
		s.Protos, s.ProtoFrom = u, "Config.Protocol"
	default:
		s.Protos = d.protos
		if v, name, ok := envProto.Lookup(); ok {
			set, err := env.ParseList(v, protoNames, "allreduce")
			if err != nil { // NCCL fails too
				return Settings{}, env.Invalid(name, v, "%v", err)
			}
			// A valid selection this kind of communicator cannot run
			// (LL128 on the host): the variable is the process's, and
			// other communicators may run it.
			if u, any := usable(set); any {
				s.Protos, s.ProtoFrom = u, name
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
	if s.Sizes.Simple, err = sizeOf(c.BuffSize, envBuffSize, d.simple, 16); err != nil {
		return Settings{}, err
	}
	if s.Sizes.LL, err = sizeOf(c.LLBuffSize, envLLBuffSize, d.ll, 16); err != nil {
		return Settings{}, err
	}
	if _, _, set := envBuffSize.Lookup(); c.BuffSize == 0 && !set && d.roomySimple > s.Sizes.Simple {
		s.RoomySimple = d.roomySimple // an explicit size always wins, unchanged
	}
	if s.Sizes.Simple > maxBuff || s.Sizes.LL > maxBuff {
		return bad("buffer sizes %d/%d exceed %d", s.Sizes.Simple, s.Sizes.LL, maxBuff)
	}
	if err := s.Sizes.Validate(); err != nil {
		return bad("%v", err)
	}
	switch {
	case c.LL128BuffSize != 0 && d.ll128 == 0:
		return bad("LL128BuffSize %d: %s has no LL128", c.LL128BuffSize, d.what)
	case c.LL128BuffSize < 0 || c.LL128BuffSize > maxBuff || c.LL128BuffSize%(ring.NSteps*128) != 0:
		return bad("LL128BuffSize %d is not a multiple of %d in 1…%d", c.LL128BuffSize, ring.NSteps*128, maxBuff)
	case d.ll128 > 0:
		if s.LL128Size, err = sizeOf(c.LL128BuffSize, envLL128Buff, d.ll128, 128); err != nil {
			return Settings{}, err
		}
	}

	if s.P2PLLMax, err = envP2PLL.Int(DefaultP2PLLThreshold, 0, 1<<30); err != nil {
		return Settings{}, err
	}
	if s.P2PChannels, err = envP2PChannels.Int(DefaultP2PChannels, 1, ring.MaxChannels); err != nil {
		return Settings{}, err
	}
	_, _, s.P2PChannelsGiven = envP2PChannels.Lookup()
	if s.DirectMax, err = envDirectMax.Size(DefaultDirectMax, 0, kernels.DirectMaxBytes, 1); err != nil {
		return Settings{}, err
	}
	if s.TwoShotMax, err = envTwoShotMax.Size(DefaultTwoShotMax, 0, kernels.TwoShotMaxBytes, 1); err != nil {
		return Settings{}, err
	}
	if s.P2PStripe, err = envP2PStripe.Size(DefaultP2PStripe, 0, 16<<20, 1); err != nil {
		return Settings{}, err
	}
	gatherMin := 0
	if n > 2 {
		gatherMin = DefaultGatherDirectMin
	}
	if s.GatherDirectMin, err = envGatherMin.Size(gatherMin, 0, kernels.TwoShotMaxBytes, 1); err != nil {
		return Settings{}, err
	}
	order, err := envLaunchOrder.Int(1, 0, 1)
	if err != nil {
		return Settings{}, err
	}
	s.Unordered = order == 0
	if c.Sub {
		// The hierarchical variant is three ring phases: its group and
		// column communicators never read their peers' inputs directly.
		// (With direct all-reduces in its columns, 4 ranks sharing one
		// GPU hung in every run: BENCHMARKS "Direct reduce-scatter and
		// all-gather; the hierarchical variant's phases on rings".)
		s.DirectMax, s.TwoShotMax = 0, 0
	}

	s.Timeout = c.Timeout
	if c.Timeout == 0 {
		if s.Timeout, err = envTimeout.Duration(DefaultTimeout); err != nil {
			return Settings{}, err
		}
	}
	if c.StopGrace < 0 {
		return bad("StopGrace %v is negative", c.StopGrace)
	}
	// RINGO_STOP_GRACE, where set, overrides the caller's (the C ABI
	// sets 1 s): how long to leave PyTorch to read a loss.
	if s.StopGrace, err = envStopGrace.Duration(c.StopGrace); err != nil {
		return Settings{}, err
	}
	if v, name, _ := envStopGrace.Lookup(); s.StopGrace < 0 {
		return Settings{}, env.Invalid(name, v, "want a duration of 0 or more")
	}
	s.Untraced = c.Sub
	if err := s.readSwitches(); err != nil {
		return Settings{}, err
	}

	if d.gpu {
		s.Model = tune.Default()
		if path, name, ok := envTuneFile.Lookup(); ok {
			if s.Model, err = tune.Load(path); err != nil {
				return Settings{}, env.Invalid(name, path, "%v", err)
			}
		}
	}

	switch {
	case c.Variant != "":
		v, err := parseVariant(c.Variant, n)
		if err != nil {
			return bad("Variant: %v", err)
		}
		s.Variant = v
	default:
		if val, name, ok := envVariant.Lookup(); ok {
			v, err := ring.ParseVariant(val)
			if err != nil {
				return Settings{}, env.Invalid(name, val, "%v", err)
			}
			// A variant that cannot plan for this communicator's ranks
			// falls back: the variable is the process's, and other
			// communicators may use it.
			if err := v.ValidFor(n); err != nil {
				env.Fallback(name, val, "ring", "%v", err)
			} else {
				s.Variant = v
			}
		}
	}

	s.Group = ring.DefaultGroupSize(n)
	switch {
	case c.Group != 0:
		if c.Group < 1 || n%c.Group != 0 {
			return bad("Group: groups of %d ranks do not divide %d ranks", c.Group, n)
		}
		s.Group = c.Group
	default:
		g, err := envGroup.Int(0, 1, math.MaxInt32)
		if err != nil {
			return Settings{}, err
		}
		if g > 0 {
			if val, name, _ := envGroup.Lookup(); n%g != 0 {
				env.Fallback(name, val, fmt.Sprintf("groups of %d", s.Group), "does not divide %d ranks", n)
			} else {
				s.Group = g
			}
		}
	}

	if c.Ring == nil {
		s.Ring = ring.Identity(n)
	} else {
		s.Ring, s.RingGiven = ring.Ring{Order: append([]int(nil), c.Ring...)}, true
		if s.Ring.Size() != n {
			return bad("Ring has %d ranks, communicator %d", s.Ring.Size(), n)
		}
		if err := s.Ring.Validate(); err != nil {
			return bad("Ring: %v", err)
		}
	}
	return s, nil
}

// readSwitches reads the on/off settings, and checks the variables read
// later (on first use) whose bad values must fail a communicator's init:
// NCCL_NET, the NCCL_IB_* numbers, NCCL_ALGO, RINGO_TRACE,
// NCCL_NVTX_DISABLE.
func (s *Settings) readSwitches() error {
	var err error
	for _, f := range []struct {
		to  *bool
		get func() (bool, error)
	}{
		{&s.Check, transport.CheckData},
		{&s.P2POff, envP2PDisable.Flag},
		{&s.SHMOff, envShmDisable.Flag},
		{&s.P2PRead, envP2PRead.Flag},
		{&s.DirectOff, envP2PDirect.Flag},
		{&s.OverlapOff, envPDLDisable.Flag},
		{new(bool), nvtx.Disabled},
	} {
		if *f.to, err = f.get(); err != nil {
			return err
		}
	}
	cma, err := envCMA.Int(-1, 0, 1)
	if err != nil {
		return err
	}
	s.CMA = map[int]shm.AttachMode{-1: shm.AttachAuto, 0: shm.AttachOff, 1: shm.AttachOn}[cma]
	if _, err := network.Wire(); err != nil { // as NCCL, whatever the transports
		return err
	}
	if _, err := rdma.ParamsFromEnv(); err != nil { // whether or not RDMA carries the data
		return err
	}
	if !s.Untraced {
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
func (d Defaults) protoList() string {
	var names []string
	for p, ok := range d.protos {
		if ok {
			names = append(names, ring.Protocol(p).String())
		}
	}
	return strings.Join(names, ", ")
}
