package ringo

import (
	"time"

	"github.com/ringo-ccl/ringo/internal/config"
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
	// slots). 0: NCCL_BUFFSIZE, else, for host ranks in separate processes,
	// DefaultLocalBuffSize where every host's /dev/shm has twice the room
	// their segments take at that size (each rank measures it when the
	// communicator is made, and all decide alike from every rank's
	// report), DefaultBuffSize where not; DefaultLocalBuffSize for
	// NewLocal's ranks, DefaultGPUBuffSize for GPU ranks. Every rank must
	// set it alike, or leave it alike to the environment.
	BuffSize int

	// LLBuffSize is the LL FIFO of each connection in bytes. 0:
	// NCCL_LL_BUFFSIZE, else DefaultLLBuffSize.
	LLBuffSize int

	// LL128BuffSize is the LL128 FIFO of each GPU connection in bytes, a
	// multiple of 1024. 0: NCCL_LL128_BUFFSIZE, else
	// DefaultGPULL128BuffSize.
	LL128BuffSize int

	// Timeout bounds every call whose context has no deadline, counted
	// from the call's first wait for a peer that does not end at once. 0:
	// RINGO_TIMEOUT, else DefaultTimeout. Negative: no bound.
	Timeout time.Duration

	// StopGrace is how long a GPU rank's kernels keep waiting after a peer
	// is lost (or another rank revokes the communicator) before they stop,
	// unless Err reports the loss first, or the rank aborts or closes. 0:
	// they stop at once, and a Wait returns the loss at once. For callers
	// that poll a collective's completion (an event) and the
	// communicator's error in turn: a kernel stopped before the error was
	// read completes the event as if the collective had succeeded. The C
	// ABI sets it (PyTorch polls that way) to 300 ms. RINGO_STOP_GRACE, where
	// set, overrides it. Negative is an error.
	StopGrace time.Duration

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
	DefaultBuffSize      = config.DefaultBuffSize      // ranks in separate processes where /dev/shm is short
	DefaultLocalBuffSize = config.DefaultLocalBuffSize // NewLocal's (heap), and processes' where /dev/shm has room
	DefaultLLBuffSize    = config.DefaultLLBuffSize
	DefaultGPUBuffSize   = config.DefaultGPUBuffSize   // NCCL_BUFFSIZE's default
	DefaultGPULLBuffSize = config.DefaultGPULLBuffSize // NCCL_LL_BUFFSIZE's default
	// DefaultGPULL128BuffSize is NCCL_LL128_BUFFSIZE's default: 8 slots of
	// 4800 lines, 576000 data bytes each.
	DefaultGPULL128BuffSize = config.DefaultGPULL128BuffSize
	DefaultGPUChannels      = config.DefaultGPUChannels // measured best on 2×H200 NV18 (BENCHMARKS.md)
	DefaultTimeout          = config.DefaultTimeout
)

// resolve validates cfg (nil: nothing asked) for n ranks and fills in what
// it leaves open from the environment and d (config.Resolve).
func resolve(cfg *Config, n int, d config.Defaults) (config.Settings, error) {
	var r config.Request
	if c := cfg; c != nil {
		r = config.Request{Channels: c.Channels, Protocol: c.Protocol, BuffSize: c.BuffSize, LLBuffSize: c.LLBuffSize,
			LL128BuffSize: c.LL128BuffSize, Timeout: c.Timeout, StopGrace: c.StopGrace, Ring: c.Ring, Variant: c.Variant, Group: c.Group,
			Sub: c.sub, SubChannels: c.subChannels}
	}
	return config.Resolve(r, n, d)
}

// configOf returns a copy of cfg (the zero Config for nil).
func configOf(cfg *Config) Config {
	if cfg == nil {
		return Config{}
	}
	c := *cfg
	c.Ring = append([]int(nil), cfg.Ring...)
	return c
}
