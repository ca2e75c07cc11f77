package config

import (
	"fmt"
	"io"
	"os"
	"path/filepath"
	"testing"
	"time"

	"github.com/ringo-ccl/ringo/internal/env"
	"github.com/ringo-ccl/ringo/internal/errs"
	"github.com/ringo-ccl/ringo/kernels"
	"github.com/ringo-ccl/ringo/p2p"
	"github.com/ringo-ccl/ringo/ring"
	"github.com/ringo-ccl/ringo/tune"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// stderrOf returns what f writes on standard error (ringo's warnings).
func stderrOf(t *testing.T, f func()) string {
	t.Helper()
	r, w, err := os.Pipe()
	require.NoError(t, err)
	old := os.Stderr
	os.Stderr = w
	defer func() { os.Stderr = old }()
	f()
	w.Close()
	b, _ := io.ReadAll(r)
	return string(b)
}

// TestPlaceLL128: LL128 stays where it is safe, goes quietly where it is
// not and nothing asked for it, is forced (with a warning) where a
// selection names it and the FIFOs are GPU memory, and never runs over host
// memory — a Config asking for LL128 alone there is an error, NCCL_PROTO
// falls back with a warning naming it.
func TestPlaceLL128(t *testing.T) {
	nvlink := LL128Link{}
	pcie := LL128Link{Unsafe: "GPUs 0 and 1 are not joined by NVLink"}
	shm := LL128Link{HostMemory: true}
	all := [3]bool{true, true, true}
	noLL128 := [3]bool{ring.LL: true, ring.Simple: true}
	cases := []struct {
		name     string
		env      string // NCCL_PROTO
		proto    string // Config.Protocol
		link     LL128Link
		want     [3]bool
		warn     string
		errMatch string
	}{
		{"default, NVLink", "", "", nvlink, all, "", ""},
		{"default, PCIe", "", "", pcie, noLL128, "", ""},
		{"default, shared memory", "", "", shm, noLL128, "", ""},
		{"Config forces, PCIe", "", "LL128", pcie, [3]bool{ring.LL128: true}, "Config.Protocol forces LL128 where GPUs 0 and 1", ""},
		{"env forces, PCIe", "LL128,Simple", "", pcie, [3]bool{ring.LL128: true, ring.Simple: true}, "NCCL_PROTO forces LL128", ""},
		{"env excludes", "^LL128", "", nvlink, noLL128, "", ""},
		{"Config LL128 only, shared memory", "", "LL128", shm, [3]bool{}, "", "Protocol selects only LL128, but the connections' FIFOs are in host memory"},
		{"env LL128 only, shared memory", "LL128", "", shm, noLL128, "NCCL_PROTO selects only LL128, but the connections' FIFOs are in host memory; using LL, Simple", ""},
		{"env LL128 and LL, shared memory", "LL128,LL", "", shm, [3]bool{ring.LL: true}, "NCCL_PROTO selects LL128, but", ""},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			t.Setenv("NCCL_PROTO", c.env)
			if c.env == "" {
				os.Unsetenv("NCCL_PROTO")
			}
			s, err := Resolve(Request{Protocol: c.proto}, 2, GPU)
			require.NoError(t, err)
			warn := stderrOf(t, func() { err = s.PlaceLL128(c.link) })
			if c.errMatch != "" {
				require.ErrorIs(t, err, errs.ErrInvalidArgument)
				assert.Contains(t, err.Error(), c.errMatch)
				return
			}
			require.NoError(t, err)
			assert.Equal(t, c.want, s.Protos, "protocols")
			if c.warn == "" {
				assert.Empty(t, warn)
			} else {
				assert.Contains(t, warn, c.warn)
			}
			l := s.Layout()
			assert.Equal(t, s.Protos[ring.LL128], l.LL128Bytes > 0, "layout has %d LL128 bytes with protocols %v", l.LL128Bytes, s.Protos)
		})
	}
}

// TestLL128BuffSize: NCCL_LL128_BUFFSIZE and Config.LL128BuffSize set the
// LL128 FIFO, in whole 1024-byte steps of 8 slots; bad values are a
// warning (environment) or an error (Config); the host path has none.
// TestP2PLLThreshold: NCCL_P2P_LL_THRESHOLD sets which GPU point-to-point
// messages go by LL, under a Simple plan only, with LL allowed; a value
// that is not a byte count in range is an error naming it.
func TestP2PLLThreshold(t *testing.T) {
	s, err := Resolve(Request{}, 2, GPU)
	require.NoError(t, err)
	max, buff := s.P2PLL(ring.Simple)
	assert.Equal(t, int64(DefaultP2PLLThreshold), max)
	assert.Equal(t, DefaultGPULLBuffSize, buff, "LL halves use the LL FIFO")
	max, _ = s.P2PLL(ring.LL)
	assert.Zero(t, max, "a plan of LL has no other protocol")
	t.Setenv("NCCL_P2P_LL_THRESHOLD", "0")
	s, err = Resolve(Request{}, 2, GPU)
	require.NoError(t, err)
	max, _ = s.P2PLL(ring.Simple)
	assert.Zero(t, max, "0: every message by Simple")
	t.Setenv("NCCL_P2P_LL_THRESHOLD", "4096")
	s, err = Resolve(Request{Protocol: "Simple"}, 2, GPU)
	require.NoError(t, err)
	max, _ = s.P2PLL(ring.Simple)
	assert.Zero(t, max, "LL not allowed")
	a, err := Resolve(Request{}, 2, GPU)
	require.NoError(t, err)
	t.Setenv("NCCL_P2P_LL_THRESHOLD", "8192")
	b, err := Resolve(Request{}, 2, GPU)
	require.NoError(t, err)
	assert.NotEqual(t, a.Fingerprint(), b.Fingerprint(), "ranks must agree on the threshold")
	for _, bad := range []string{"-1", "lots", "2000000000"} {
		t.Setenv("NCCL_P2P_LL_THRESHOLD", bad)
		_, err = Resolve(Request{}, 2, GPU)
		assert.ErrorContains(t, err, "NCCL_P2P_LL_THRESHOLD", bad)
	}
}

func TestLL128BuffSize(t *testing.T) {
	s, err := Resolve(Request{}, 2, GPU)
	require.NoError(t, err)
	assert.Equal(t, DefaultGPULL128BuffSize, s.LL128Size)
	assert.Equal(t, DefaultGPULL128BuffSize, s.BuffSize(ring.LL128))
	t.Setenv("NCCL_LL128_BUFFSIZE", "1M")
	s, err = Resolve(Request{}, 2, GPU)
	require.NoError(t, err)
	assert.Equal(t, 1<<20, s.LL128Size, "NCCL_LL128_BUFFSIZE=1M")
	t.Setenv("NCCL_LL128_BUFFSIZE", "1000")
	_, err = Resolve(Request{}, 2, GPU)
	require.ErrorIs(t, err, errs.ErrInvalidArgument)
	assert.Contains(t, err.Error(), `NCCL_LL128_BUFFSIZE="1000": want a multiple of 1024 bytes in [1K, 1G]`)
	for _, bad := range []int{-1024, 1000, 2 << 30} {
		_, err := Resolve(Request{LL128BuffSize: bad}, 2, GPU)
		if assert.Error(t, err, "LL128BuffSize %d", bad) {
			assert.Contains(t, err.Error(), "LL128BuffSize")
		}
	}
	_, err = Resolve(Request{LL128BuffSize: 8192}, 2, Host)
	if assert.Error(t, err, "LL128BuffSize on the host") {
		assert.Contains(t, err.Error(), "the host path has no LL128")
	}
}

// TestVariantFromEnv: RINGO_VARIANT picks the plan generator; a name that
// does not parse is an error naming the variable; a variant the rank count
// cannot run is a warning naming it, and the ring is used (the variable is
// the process's, and another communicator may run it).
func TestVariantFromEnv(t *testing.T) {
	cases := []struct {
		val  string
		n    int
		want ring.Variant
		warn string
	}{
		{"oneshot", 2, ring.OneShot, ""},
		{"OneShot", 2, ring.OneShot, ""},
		{"ring", 4, ring.RingVariant, ""},
		{"oneshot", 3, ring.RingVariant, `RINGO_VARIANT="oneshot": variant oneshot needs 2 ranks`},
	}
	t.Setenv("RINGO_VARIANT", "tree")
	_, err := Resolve(Request{}, 2, Host)
	require.ErrorIs(t, err, errs.ErrInvalidArgument)
	assert.Contains(t, err.Error(), `RINGO_VARIANT="tree": unknown variant "tree" (valid:`)
	for _, c := range cases {
		t.Setenv("RINGO_VARIANT", c.val)
		var s Settings
		var err error
		warn := stderrOf(t, func() { s, err = Resolve(Request{}, c.n, Host) })
		require.NoError(t, err, "RINGO_VARIANT=%s, %d ranks", c.val, c.n)
		assert.Equal(t, c.want, s.Variant, "RINGO_VARIANT=%s, %d ranks", c.val, c.n)
		if c.warn == "" {
			assert.Empty(t, warn, "RINGO_VARIANT=%s, %d ranks", c.val, c.n)
		} else {
			assert.Contains(t, warn, c.warn)
		}
	}
}

// TestResolveGroup: RINGO_GROUP that does not divide the ranks warns and
// keeps the default.
func TestResolveGroup(t *testing.T) {
	s, err := Resolve(Request{Variant: "hierarchical"}, 4, Host)
	require.NoError(t, err)
	assert.Equal(t, 2, s.Group)
	assert.Equal(t, ring.Hierarchical, s.Variant)
	t.Setenv("RINGO_VARIANT", "hierarchical")
	t.Setenv("RINGO_GROUP", "3")
	warn := stderrOf(t, func() { s, err = Resolve(Request{}, 4, Host) })
	require.NoError(t, err)
	assert.Equal(t, 2, s.Group)
	assert.Equal(t, ring.Hierarchical, s.Variant, "RINGO_VARIANT")
	assert.Contains(t, warn, `RINGO_GROUP="3": does not divide 4 ranks; using groups of 2`)
}

// TestResolveSubRing: a hierarchical variant's group and column
// communicators run their phases on rings, never by direct reads, whatever
// RINGO_DIRECT_MAX and RINGO_TWOSHOT_MAX say; other communicators keep them.
func TestResolveSubRing(t *testing.T) {
	t.Setenv("RINGO_DIRECT_MAX", "65536")
	t.Setenv("RINGO_TWOSHOT_MAX", "1048576")
	s, err := Resolve(Request{Sub: true, SubChannels: 4}, 2, GPU)
	require.NoError(t, err)
	assert.Zero(t, s.DirectMax)
	assert.Zero(t, s.TwoShotMax)
	assert.False(t, s.DirectFor(2))
	assert.Zero(t, s.Direct(ring.AllReduce, 8, 2))
	s, err = Resolve(Request{}, 2, GPU)
	require.NoError(t, err)
	assert.Equal(t, 65536, s.DirectMax)
	assert.Equal(t, 1048576, s.TwoShotMax)
	assert.Equal(t, kernels.OneShot, s.Direct(ring.AllReduce, 8, 2))
}

// TestResolveGatherDirect: reduce-scatters and all-gathers read directly
// from the first byte with 2 ranks, from a whole buffer of
// DefaultGatherDirectMin with more, up to the staging size.
func TestResolveGatherDirect(t *testing.T) {
	s, err := Resolve(Request{}, 2, GPU)
	require.NoError(t, err)
	assert.Zero(t, s.GatherDirectMin)
	assert.Equal(t, kernels.DirectReduceScatter, s.Direct(ring.ReduceScatter, 1, 2))
	s, err = Resolve(Request{}, 4, GPU)
	require.NoError(t, err)
	assert.Equal(t, DefaultGatherDirectMin, s.GatherDirectMin)
	assert.Zero(t, s.Direct(ring.ReduceScatter, DefaultGatherDirectMin/4-1, 4))
	assert.Equal(t, kernels.DirectReduceScatter, s.Direct(ring.ReduceScatter, DefaultGatherDirectMin/4, 4))
	assert.Equal(t, kernels.DirectAllGather, s.Direct(ring.AllGather, DefaultTwoShotMax/4, 4))
	assert.Zero(t, s.Direct(ring.AllGather, DefaultTwoShotMax/4+1, 4), "above the staging size")
}

// TestResolveEnv: package env's one rule, variable by variable. A value
// that cannot be used fails resolve (every communicator's init) with an
// error naming the variable, the value and what it accepts; where NCCL
// falls back (clamped channel counts) or the value is valid but not for
// this kind of communicator, resolve warns, naming it, and carries on.
func TestResolveEnv(t *testing.T) {
	const flag = "want an integer in [0, 1]"
	cases := []struct {
		name, value string
		gpu         bool
		err         string // the error's text after NAME="value":
		warn        string // else the warning's
		check       func(t *testing.T, s Settings)
	}{
		{name: "NCCL_BUFFSIZE", value: "1", err: "want a multiple of 128 bytes in [128, 1G] (K, M, G suffixes)"},
		{name: "NCCL_BUFFSIZE", value: "131", err: "want a multiple of 128 bytes in [128, 1G]"},
		{name: "NCCL_BUFFSIZE", value: "lots", err: "want a multiple of 128 bytes"},
		{name: "RINGO_BUFFSIZE", value: "2G", err: "want a multiple of 128 bytes"},
		{name: "NCCL_BUFFSIZE", value: "2M", check: func(t *testing.T, s Settings) { assert.Equal(t, 2<<20, s.Sizes.Simple) }},
		{name: "NCCL_LL_BUFFSIZE", value: "100", err: "want a multiple of 128 bytes"},
		{name: "NCCL_LL128_BUFFSIZE", value: "1000", gpu: true, err: "want a multiple of 1024 bytes in [1K, 1G]"},
		{name: "NCCL_MIN_NCHANNELS", value: "x", err: "want an integer in [0, 64]"},
		{name: "NCCL_MIN_NCHANNELS", value: "99", warn: "outside [0, 64]; using 64",
			check: func(t *testing.T, s Settings) { assert.Equal(t, 64, s.Channels) }},
		{name: "NCCL_MAX_NCHANNELS", value: "many", err: "want an integer in [1, 64]"},
		{name: "NCCL_MAX_NCHANNELS", value: "0", gpu: true, warn: "outside [1, 64]; using 1",
			check: func(t *testing.T, s Settings) { assert.Equal(t, 1, s.Channels) }},
		{name: "NCCL_PROTO", value: "Fast", err: `unknown name "Fast" (valid: LL, LL128, Simple)`},
		{name: "NCCL_PROTO", value: "LL128", warn: "leaves no protocol the host path has; using LL, Simple",
			check: func(t *testing.T, s Settings) { assert.Equal(t, Host.protos, s.Protos) }},
		{name: "NCCL_ALGO", value: "Fast", err: `unknown name "Fast"`},
		{name: "NCCL_ALGO", value: "Tree", warn: "excludes Ring, the only algorithm ringo has; using Ring"},
		{name: "NCCL_P2P_DISABLE", value: "yes", err: flag},
		{name: "NCCL_SHM_DISABLE", value: "2", err: flag},
		{name: "NCCL_P2P_READ_ENABLE", value: "true", err: flag},
		{name: "NCCL_P2P_READ_ENABLE", value: "1", gpu: true, check: func(t *testing.T, s Settings) { assert.True(t, s.Layout().Read) }},
		{name: "NCCL_MAX_P2P_NCHANNELS", value: "0", err: "want an integer in [1, 64]"},
		{name: "NCCL_MAX_P2P_NCHANNELS", value: "64", gpu: true, check: func(t *testing.T, s Settings) {
			assert.Equal(t, 64, s.P2PChannels)
			assert.True(t, s.P2PChannelsGiven, "SharedP2P leaves a budget the environment set")
			d := s
			d.P2PChannels = DefaultP2PChannels
			assert.NotEqual(t, d.Fingerprint(), s.Fingerprint(), "ranks in processes must agree on their point-to-point channels")
		}},
		{name: "NCCL_P2P_DIRECT_DISABLE", value: "yes", err: flag},
		{name: "NCCL_P2P_DIRECT_DISABLE", value: "1", gpu: true, check: func(t *testing.T, s Settings) {
			assert.True(t, s.DirectOff)
			assert.False(t, s.DirectFor(2), "nothing set up")
			d := s
			d.DirectOff = false
			assert.NotEqual(t, d.Fingerprint(), s.Fingerprint(), "ranks in processes must agree on whether all-reduces read directly")
		}},
		{name: "RINGO_PDL_DISABLE", value: "on", err: flag},
		{name: "RINGO_PDL_DISABLE", value: "1", gpu: true, check: func(t *testing.T, s Settings) {
			assert.True(t, s.OverlapOff)
			d := s
			d.OverlapOff = false
			assert.Equal(t, d.Fingerprint(), s.Fingerprint(), "each rank's launches are its own: ranks need not agree")
		}},
		{name: "RINGO_P2P_STRIPE", value: "32M", err: "want a multiple of 1 bytes in [0, 16M] (K, M, G suffixes)"},
		{name: "RINGO_P2P_STRIPE", value: "1M", gpu: true, check: func(t *testing.T, s Settings) {
			assert.Equal(t, 1<<20, s.P2PStripe)
			d := s
			d.P2PStripe = DefaultP2PStripe
			assert.Equal(t, d.Fingerprint(), s.Fingerprint(), "only ranks of one process go in tiles: processes need not agree")
		}},
		{name: "RINGO_P2P_STRIPE", value: "0", gpu: true, check: func(t *testing.T, s Settings) { assert.Zero(t, s.P2PStripe) }},
		{name: "RINGO_DIRECT_MAX", value: "2M", err: "want a multiple of 1 bytes in [0, 1M] (K, M, G suffixes)"},
		{name: "RINGO_DIRECT_MAX", value: "-1", err: "want a multiple of 1 bytes in [0, 1M]"},
		{name: "RINGO_DIRECT_MAX", value: "64K", gpu: true, check: func(t *testing.T, s Settings) {
			assert.Equal(t, 64<<10, s.DirectMax)
			assert.True(t, s.DirectFor(2))
			assert.True(t, s.DirectFor(8))
			assert.False(t, s.DirectFor(1), "a world of one has no peers")
			assert.False(t, s.DirectFor(9), "more ranks than the kernel takes")
			assert.Equal(t, kernels.OneShot, s.Direct(ring.AllReduce, 64<<10, 2))
			assert.Equal(t, kernels.TwoShot, s.Direct(ring.AllReduce, 64<<10+1, 2), "above the limit: two shots")
			assert.Equal(t, kernels.TwoShot, s.Direct(ring.AllReduce, DefaultTwoShotMax, 2))
			assert.Zero(t, s.Direct(ring.AllReduce, DefaultTwoShotMax+1, 2), "above RINGO_TWOSHOT_MAX: the ring")
			assert.Zero(t, s.Direct(ring.Broadcast, 8, 2), "no broadcast, reduce or point-to-point")
			assert.Equal(t, kernels.DirectReduceScatter, s.Direct(ring.ReduceScatter, DefaultTwoShotMax/4, 4), "the whole buffer at most the staging buffer")
			assert.Zero(t, s.Direct(ring.ReduceScatter, DefaultTwoShotMax/4+1, 4))
			assert.Equal(t, kernels.DirectAllGather, s.Direct(ring.AllGather, 1, 2), "2 ranks: from the first byte")
			assert.Zero(t, s.Direct(ring.AllGather, DefaultTwoShotMax/2+1, 2))
			assert.Equal(t, int64(DefaultTwoShotMax), s.DirectStage(), "staging for the largest call")
			d := s
			d.DirectMax = DefaultDirectMax
			assert.NotEqual(t, d.Fingerprint(), s.Fingerprint(), "ranks must agree on which all-reduces read directly")
		}},
		{name: "RINGO_DIRECT_MAX", value: "0", gpu: true, check: func(t *testing.T, s Settings) {
			assert.Equal(t, kernels.TwoShot, s.Direct(ring.AllReduce, 8, 2), "two shots from the first byte")
			assert.True(t, s.DirectFor(2))
		}},
		{name: "RINGO_GATHER_DIRECT_MIN", value: "17M", err: "want a multiple of 1 bytes in [0, 16M]"},
		{name: "RINGO_GATHER_DIRECT_MIN", value: "64K", gpu: true, check: func(t *testing.T, s Settings) {
			assert.Equal(t, 64<<10, s.GatherDirectMin)
			assert.Zero(t, s.Direct(ring.AllGather, 32<<10-1, 2), "below it, even with 2 ranks")
			assert.Equal(t, kernels.DirectAllGather, s.Direct(ring.AllGather, 32<<10, 2))
			d := s
			d.GatherDirectMin = 0
			assert.NotEqual(t, d.Fingerprint(), s.Fingerprint(), "ranks must agree on which reduce-scatters read directly")
		}},
		{name: "RINGO_LAUNCH_ORDER", value: "2", err: "want an integer in [0, 1]"},
		{name: "RINGO_LAUNCH_ORDER", value: "0", gpu: true, check: func(t *testing.T, s Settings) { assert.True(t, s.Unordered) }},
		{name: "RINGO_LAUNCH_ORDER", value: "1", gpu: true, check: func(t *testing.T, s Settings) { assert.False(t, s.Unordered) }},
		{name: "RINGO_TWOSHOT_MAX", value: "17M", err: "want a multiple of 1 bytes in [0, 16M]"},
		{name: "RINGO_TWOSHOT_MAX", value: "1M", gpu: true, check: func(t *testing.T, s Settings) {
			assert.Equal(t, 1<<20, s.TwoShotMax)
			assert.Equal(t, kernels.OneShot, s.Direct(ring.AllReduce, DefaultDirectMax, 2))
			assert.Equal(t, kernels.TwoShot, s.Direct(ring.AllReduce, 1<<20, 2))
			assert.Zero(t, s.Direct(ring.AllReduce, 1<<20+1, 2))
			assert.Equal(t, int64(1<<20), s.DirectStage())
			d := s
			d.TwoShotMax = DefaultTwoShotMax
			assert.NotEqual(t, d.Fingerprint(), s.Fingerprint(), "ranks must agree on which all-reduces run in two shots")
			d.TwoShotMax, d.DirectMax = 0, 0
			assert.False(t, d.DirectFor(2), "neither: nothing set up")
			assert.Zero(t, d.Direct(ring.ReduceScatter, 1, 2), "nor reduce-scatters")
			d.TwoShotMax = 100 // under DirectMax: never two shots
			d.DirectMax = 1000
			assert.Equal(t, kernels.OneShot, d.Direct(ring.AllReduce, 1000, 2))
			assert.Zero(t, d.Direct(ring.AllReduce, 1001, 2))
		}},
		{name: "NCCL_PROTO", value: "Simple", gpu: true, check: func(t *testing.T, s Settings) {
			assert.Zero(t, s.Direct(ring.AllReduce, 8, 2), "a protocol asked for: the ring runs it")
			assert.Zero(t, s.Direct(ring.AllReduce, 1<<20, 2), "nor two shots")
		}},
		{name: "RINGO_VARIANT", value: "bidirectional", gpu: true, check: func(t *testing.T, s Settings) {
			assert.Zero(t, s.Direct(ring.AllReduce, 8, 2), "a variant asked for: the ring runs it")
			assert.Zero(t, s.Direct(ring.AllGather, 8, 2))
		}},
		{name: "RINGO_CHECK", value: "on", err: flag},
		{name: "NCCL_NVTX_DISABLE", value: "-1", err: flag},
		{name: "NCCL_NET", value: "verbs", err: "names no transport ringo has (want Socket or IB)"},
		{name: "NCCL_NET", value: "socket"},
		{name: "NCCL_IB_TIMEOUT", value: "32", err: "want an integer in [1, 31]"},
		{name: "RINGO_TIMEOUT", value: "soon", err: "want a duration like 90s or 5m, or seconds"},
		{name: "RINGO_STOP_GRACE", value: "soon", err: "want a duration like 90s or 5m, or seconds"},
		{name: "RINGO_STOP_GRACE", value: "-1", err: "want a duration of 0 or more"},
		{name: "RINGO_STOP_GRACE", value: "0.3", gpu: true, check: func(t *testing.T, s Settings) { assert.Equal(t, 300*time.Millisecond, s.StopGrace) }},
		{name: "RINGO_TUNE_FILE", value: "/nonexistent/model.json", gpu: true, err: "tune: open /nonexistent/model.json: no such file or directory"},
		{name: "RINGO_VARIANT", value: "tree", err: `unknown variant "tree"`},
		{name: "RINGO_GROUP", value: "0", err: "want an integer in [1, 2147483647]"},
		{name: "RINGO_GROUP", value: "two", err: "want an integer in [1, 2147483647]"},
		{name: "RINGO_TRACE", value: "/nonexistent/trace.json", err: "cannot write the trace there"},
	}
	for _, c := range cases {
		t.Run(c.name+"="+c.value, func(t *testing.T) {
			var warns []string
			t.Cleanup(env.SetWarnings(func(m string) { warns = append(warns, m) }))
			t.Setenv(c.name, c.value)
			d := Host
			if c.gpu {
				d = GPU
			}
			s, err := Resolve(Request{}, 2, d)
			if c.err != "" {
				require.Error(t, err)
				assert.ErrorIs(t, err, errs.ErrInvalidArgument)
				var e *env.Error
				if assert.ErrorAs(t, err, &e) {
					assert.Equal(t, c.name, e.Name)
				}
				assert.Contains(t, err.Error(), fmt.Sprintf("%s=%q: %s", c.name, c.value, c.err))
				assert.Empty(t, warns)
				return
			}
			require.NoError(t, err)
			if c.warn != "" {
				require.Len(t, warns, 1)
				assert.Contains(t, warns[0], fmt.Sprintf("%s=%q: %s", c.name, c.value, c.warn))
			} else {
				assert.Empty(t, warns)
			}
			if c.check != nil {
				c.check(t, s)
			}
		})
	}
}

// TestFingerprintCoversLayout: ranks in separate processes compare their
// settings' fingerprints at init, so two settings with the same fingerprint
// must build the same connections (layout, after PlaceLL128 on any link,
// and edges: the channels and the variant's directions) and plan every call alike (the GPU cost model's choice). Each variable
// below changes one of those; its fingerprint must change too (it once
// left out NCCL_P2P_READ_ENABLE: processes with different values built
// incompatible layouts unchecked).
func TestFingerprintCoversLayout(t *testing.T) {
	links := []LL128Link{{}, {Unsafe: "GPUs 0 and 1 are not joined by NVLink"}, {HostMemory: true}}
	placed := func(s Settings, l LL128Link) p2p.Layout {
		require.NoError(t, s.PlaceLL128(l))
		return s.Layout()
	}
	base, err := Resolve(Request{}, 2, GPU)
	require.NoError(t, err)
	for _, v := range []struct{ name, value string }{
		{"NCCL_P2P_READ_ENABLE", "1"},
		{"NCCL_BUFFSIZE", "8M"},
		{"NCCL_LL_BUFFSIZE", "1M"},
		{"NCCL_LL128_BUFFSIZE", "1M"},
		{"NCCL_MAX_NCHANNELS", "8"},
		{"NCCL_MIN_NCHANNELS", "16"},
		{"NCCL_PROTO", "LL,LL128,Simple"}, // the same set, but named: forces LL128 where it is unsafe
		{"RINGO_VARIANT", "bidirectional"},
		{"RINGO_TUNE_FILE", writeModel(t)},
	} {
		t.Run(v.name, func(t *testing.T) {
			t.Setenv(v.name, v.value)
			s, err := Resolve(Request{}, 2, GPU)
			require.NoError(t, err)
			differs := s.MinChannels != base.MinChannels || s.Channels != base.Channels || s.Variant != base.Variant ||
				s.Model.Machine != base.Model.Machine
			for _, l := range links {
				differs = differs || placed(s, l) != placed(base, l)
			}
			require.True(t, differs, "the setting changes nothing: the test is void")
			assert.NotEqual(t, base.Fingerprint(), s.Fingerprint())
		})
	}
}

// writeModel writes the built-in cost model under another machine's name,
// for RINGO_TUNE_FILE.
func writeModel(t *testing.T) string {
	m := tune.Default()
	m.Machine = "another machine"
	path := filepath.Join(t.TempDir(), "model.json")
	f, err := os.Create(path)
	require.NoError(t, err)
	require.NoError(t, m.Encode(f))
	require.NoError(t, f.Close())
	return path
}

// TestHostProtocol: with both protocols allowed a host call of up to
// llMaxBytes per rank buffer goes by LL, a larger one by Simple; with one
// allowed, every call by it.
func TestHostProtocol(t *testing.T) {
	s, err := Resolve(Request{}, 2, Host)
	require.NoError(t, err)
	assert.Equal(t, ring.LL, s.Protocol(8))
	assert.Equal(t, ring.LL, s.Protocol(llMaxBytes))
	assert.Equal(t, ring.Simple, s.Protocol(llMaxBytes+1))
	for proto, want := range map[string]ring.Protocol{"LL": ring.LL, "Simple": ring.Simple} {
		s, err := Resolve(Request{Protocol: proto}, 2, Host)
		require.NoError(t, err)
		assert.Equal(t, want, s.Protocol(8), proto)
		assert.Equal(t, want, s.Protocol(1<<20), proto)
	}
}
