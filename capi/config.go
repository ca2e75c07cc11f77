package main

import (
	"encoding/binary"
	"fmt"
	"math"
	"strconv"
	"strings"
	"time"
	"unsafe"

	"github.com/ringo-ccl/ringo"
	"github.com/ringo-ccl/ringo/internal/env"
)

// The layout of ncclConfig_t as nccl.h (NCCL 2.27) declares it on a 64-bit
// little-endian machine; nccl_abi.c checks these offsets against the header
// at compile time.
const (
	cfgOffSize          = 0  // size_t
	cfgOffMagic         = 8  // unsigned int
	cfgOffVersion       = 12 // unsigned int
	cfgOffBlocking      = 16 // int (2.14)
	cfgOffCGAClusterSz  = 20 // int (2.17)
	cfgOffMinCTAs       = 24 // int (2.17)
	cfgOffMaxCTAs       = 28 // int (2.17)
	cfgOffNetName       = 32 // const char* (2.17)
	cfgOffSplitShare    = 40 // int (2.18)
	cfgOffTrafficClass  = 44 // int (2.25)
	cfgOffCommName      = 48 // const char* (2.27)
	cfgOffCollnetEnable = 56 // int (2.27)
	cfgOffCTAPolicy     = 60 // int (2.27)
	cfgOffShrinkShare   = 64 // int (2.27)
	cfgOffNVLSCTAs      = 68 // int (2.27)
	configSize          = 72 // sizeof(ncclConfig_t)

	configMagic = 0xcafebeef    // NCCL_API_MAGIC
	undefInt    = math.MinInt32 // NCCL_CONFIG_UNDEF_INT
	maxCString  = 256           // longest netName or commName kept
)

// ncclVersion is NCCL_VERSION(x, y, z) for x.y ≥ 2.9.
func ncclVersion(x, y, z uint32) uint32 { return x*10000 + y*100 + z }

// commConfig is a parsed ncclConfig_t: int fields hold undefInt when unset.
type commConfig struct {
	Blocking       int32
	CGAClusterSize int32
	MinCTAs        int32
	MaxCTAs        int32
	NetName        string
	SplitShare     int32
	TrafficClass   int32
	CommName       string
	CollnetEnable  int32
	CTAPolicy      int32
	ShrinkShare    int32
	NVLSCTAs       int32
}

// defaultConfig is NCCL_CONFIG_INITIALIZER's configuration: everything unset.
func defaultConfig() commConfig {
	return commConfig{
		Blocking: undefInt, CGAClusterSize: undefInt, MinCTAs: undefInt, MaxCTAs: undefInt,
		SplitShare: undefInt, TrafficClass: undefInt, CollnetEnable: undefInt,
		CTAPolicy: undefInt, ShrinkShare: undefInt, NVLSCTAs: undefInt,
	}
}

// initializerBytes is NCCL_CONFIG_INITIALIZER of our header, byte for byte.
func initializerBytes() [configSize]byte {
	var b [configSize]byte
	ne := binary.NativeEndian
	ne.PutUint64(b[cfgOffSize:], configSize)
	ne.PutUint32(b[cfgOffMagic:], configMagic)
	ne.PutUint32(b[cfgOffVersion:], versionCode)
	for _, off := range []int{cfgOffBlocking, cfgOffCGAClusterSz, cfgOffMinCTAs, cfgOffMaxCTAs, cfgOffSplitShare,
		cfgOffTrafficClass, cfgOffCollnetEnable, cfgOffCTAPolicy, cfgOffShrinkShare, cfgOffNVLSCTAs} {
		ne.PutUint32(b[off:], 1<<31) // INT_MIN's bits
	}
	return b
}

// readConfig copies the user's ncclConfig_t at p as NCCL does: its size
// field first, then min(size, sizeof our ncclConfig_t) bytes. p is never
// written.
func readConfig(p unsafe.Pointer) []byte {
	size := *(*uint64)(p)
	n := min(size, configSize)
	out := make([]byte, n)
	copy(out, unsafe.Slice((*byte)(p), n))
	return out
}

// parseConfig decodes raw, the bytes readConfig copied, following NCCL's
// parseCommConfig: the bytes are laid over NCCL_CONFIG_INITIALIZER with a
// zero magic (so a size too small to hold the magic is refused), a magic
// other than 0xcafebeef is ncclInvalidArgument, every field newer than the
// config's version is reset to its default, and the values NCCL checks are
// checked. cstr reads the C string that the pointer field at offset off
// (netName, commName) points to; it is called only for non-NULL pointers the
// caller's size covers.
func parseConfig(fn string, raw []byte, cstr func(off int) string) (commConfig, error) {
	b := initializerBytes()
	ne := binary.NativeEndian
	ne.PutUint32(b[cfgOffMagic:], 0)
	copy(b[:], raw)
	if m := ne.Uint32(b[cfgOffMagic:]); m != configMagic {
		return commConfig{}, invalidArg("%s: config: magic %#x is not 0xcafebeef: initialise ncclConfig_t with NCCL_CONFIG_INITIALIZER", fn, m)
	}
	i32 := func(off int) int32 { return int32(ne.Uint32(b[off:])) }
	str := func(off int) string {
		if off+8 <= len(raw) && ne.Uint64(b[off:]) != 0 && cstr != nil {
			return cstr(off)
		}
		return ""
	}
	c := commConfig{
		Blocking: i32(cfgOffBlocking), CGAClusterSize: i32(cfgOffCGAClusterSz),
		MinCTAs: i32(cfgOffMinCTAs), MaxCTAs: i32(cfgOffMaxCTAs),
		SplitShare: i32(cfgOffSplitShare), TrafficClass: i32(cfgOffTrafficClass),
		CollnetEnable: i32(cfgOffCollnetEnable), CTAPolicy: i32(cfgOffCTAPolicy),
		ShrinkShare: i32(cfgOffShrinkShare), NVLSCTAs: i32(cfgOffNVLSCTAs),
	}
	// Reset what the caller's header did not have. NCCL resets all of these
	// but splitShare and commName; resetting those too changes nothing for
	// a config made by NCCL_CONFIG_INITIALIZER of any version.
	v := ne.Uint32(b[cfgOffVersion:])
	d := defaultConfig()
	if v < ncclVersion(2, 14, 0) {
		c.Blocking = d.Blocking
	}
	if v < ncclVersion(2, 17, 0) {
		c.CGAClusterSize, c.MinCTAs, c.MaxCTAs = d.CGAClusterSize, d.MinCTAs, d.MaxCTAs
	} else {
		c.NetName = str(cfgOffNetName)
	}
	if v < ncclVersion(2, 18, 0) {
		c.SplitShare = d.SplitShare
	}
	if v < ncclVersion(2, 25, 0) {
		c.TrafficClass = d.TrafficClass
	}
	if v < ncclVersion(2, 27, 0) {
		c.CollnetEnable, c.CTAPolicy, c.ShrinkShare, c.NVLSCTAs = d.CollnetEnable, d.CTAPolicy, d.ShrinkShare, d.NVLSCTAs
	} else {
		c.CommName = str(cfgOffCommName)
	}
	return c, c.check(fn)
}

// check validates what NCCL validates.
func (c *commConfig) check(fn string) error {
	set := func(v int32) bool { return v != undefInt }
	bad := func(field string, v int32, valid string) error {
		return invalidArg("%s: config: %s %d is invalid (valid: %s, or NCCL_CONFIG_UNDEF_INT)", fn, field, v, valid)
	}
	switch {
	case set(c.Blocking) && c.Blocking != 0 && c.Blocking != 1:
		return bad("blocking", c.Blocking, "0, 1")
	case set(c.CGAClusterSize) && c.CGAClusterSize < 0:
		return bad("cgaClusterSize", c.CGAClusterSize, "≥ 0")
	case set(c.MinCTAs) && c.MinCTAs <= 0:
		return bad("minCTAs", c.MinCTAs, "> 0")
	case set(c.MaxCTAs) && c.MaxCTAs <= 0:
		return bad("maxCTAs", c.MaxCTAs, "> 0")
	case set(c.MinCTAs) && set(c.MaxCTAs) && c.MinCTAs > c.MaxCTAs:
		return invalidArg("%s: config: minCTAs %d > maxCTAs %d", fn, c.MinCTAs, c.MaxCTAs)
	case set(c.SplitShare) && c.SplitShare != 0 && c.SplitShare != 1:
		return bad("splitShare", c.SplitShare, "0, 1")
	case set(c.CollnetEnable) && c.CollnetEnable != 0 && c.CollnetEnable != 1:
		return bad("collnetEnable", c.CollnetEnable, "0, 1")
	case set(c.CTAPolicy) && (c.CTAPolicy < 0 || c.CTAPolicy > 2):
		return bad("CTAPolicy", c.CTAPolicy, "0, 1, 2")
	case set(c.ShrinkShare) && c.ShrinkShare != 0 && c.ShrinkShare != 1:
		return bad("shrinkShare", c.ShrinkShare, "0, 1")
	case set(c.NVLSCTAs) && c.NVLSCTAs <= 0:
		return bad("nvlsCTAs", c.NVLSCTAs, "> 0")
	}
	return nil
}

// newConfig returns the configuration of a communicator that fn makes: the
// ncclConfig_t at cfgp, or inherited when cfgp is NULL (NCCL: a split,
// shrink or grow without a config takes its parent's, an init
// NCCL_CONFIG_INITIALIZER's), with NCCL_COMM_BLOCKING applied.
func newConfig(fn string, inherited commConfig, cfgp unsafe.Pointer) (commConfig, error) {
	cfg := inherited
	if cfgp != nil {
		var err error
		if cfg, err = parseConfig(fn, readConfig(cfgp), configString(cfgp)); err != nil {
			return commConfig{}, err
		}
	}
	return cfg, cfg.blockingEnv(fn)
}

var envCommBlocking = env.Var{Name: "COMM_BLOCKING", NCCL: true}

// blockingEnv sets Blocking from NCCL_COMM_BLOCKING (RINGO_COMM_BLOCKING
// first) when that is 0 or 1, as NCCL's envConfigOverride does. NCCL
// ignores any other number, and so does ringo, with a warning; text is an
// error (internal/env's rule).
func (c *commConfig) blockingEnv(fn string) error {
	v, name, ok := envCommBlocking.Lookup()
	if !ok {
		return nil
	}
	v = strings.TrimSpace(v)
	n, err := strconv.ParseInt(v, 10, 64)
	switch {
	case err != nil:
		return fmt.Errorf("%s: %w", fn, env.Invalid(name, v, "want 0 (non-blocking) or 1 (blocking)"))
	case n == 0 || n == 1:
		c.Blocking = int32(n)
	default:
		env.Fallback(name, v, "the config's blocking", "not 0 or 1 (NCCL ignores it too)")
	}
	return nil
}

// nonblocking reports whether a communicator made with c is non-blocking
// (config.blocking 0; unset is NCCL's default, 1).
func (c *commConfig) nonblocking() bool { return c.Blocking == 0 }

// ringo returns the ringo configuration of a communicator made with c:
// none of NCCL's fields has a ringo counterpart (ringo reads its channels
// and protocols from NCCL_MIN_NCHANNELS, NCCL_MAX_NCHANNELS and
// NCCL_PROTO), so ringo's defaults and environment apply, with
// StopGrace: NCCL leaves the kernels of a communicator that lost a peer
// running until the application aborts it, so a collective the lost rank
// never joined cannot complete before the application has seen the error;
// ringo stops them once ncclCommGetAsyncError (or a refused call) has
// reported the loss, or lossStopGrace later, for callers that never read
// it. Stopping at once let PyTorch take such an all-reduce for a success
// on one H200 (issue 21).
func (c *commConfig) ringo() *ringo.Config { return &ringo.Config{StopGrace: lossStopGrace} }

// lossStopGrace bounds how long kernels wait for the application to read
// a lost peer's error (ringo.Config.StopGrace; RINGO_STOP_GRACE overrides
// it): PyTorch's watchdog reads it every 100 ms, its blocking wait every
// 10 ms. A PyTorch rank blocked in a synchronize reads it only at its next
// call: its all-reduce then ends after this grace, without an error, and
// the next call fails — so the grace is what such a rank adds to the
// recovery (on one H200: 1 s took kill → first collective on the shrunk
// communicator to 1.05–1.07 s, 300 ms to 0.39–0.46 s; BENCHMARKS.md,
// issue 21).
const lossStopGrace = 300 * time.Millisecond

// configString returns cstr for parseConfig over the ncclConfig_t at p.
func configString(p unsafe.Pointer) func(off int) string {
	return func(off int) string { return goStringN(*(*unsafe.Pointer)(unsafe.Add(p, off)), maxCString) }
}

// goStringN reads the NUL-terminated C string at p, at most n bytes of it.
func goStringN(p unsafe.Pointer, n int) string {
	if p == nil {
		return ""
	}
	var b []byte
	for i := range n {
		c := *(*byte)(unsafe.Add(p, i))
		if c == 0 {
			break
		}
		b = append(b, c)
	}
	return string(b)
}
