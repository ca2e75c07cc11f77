package ringo

import (
	"errors"
	"io"
	"os"
	"strings"
	"testing"

	"github.com/ringo-ccl/ringo/ring"
)

// stderrOf returns what f writes on standard error (ringo's warnings).
func stderrOf(t *testing.T, f func()) string {
	t.Helper()
	r, w, err := os.Pipe()
	if err != nil {
		t.Fatal(err)
	}
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
	nvlink := ll128Link{}
	pcie := ll128Link{unsafe: "GPUs 0 and 1 are not joined by NVLink"}
	shm := ll128Link{hostMemory: true}
	all := [3]bool{true, true, true}
	noLL128 := [3]bool{ring.LL: true, ring.Simple: true}
	cases := []struct {
		name     string
		env      string // NCCL_PROTO
		proto    string // Config.Protocol
		link     ll128Link
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
			s, err := resolve(&Config{Protocol: c.proto}, 2, gpuDefaults)
			if err != nil {
				t.Fatal(err)
			}
			warn := stderrOf(t, func() { err = s.placeLL128(c.link) })
			switch {
			case c.errMatch != "":
				if err == nil || !errors.Is(err, ErrInvalidArgument) || !strings.Contains(err.Error(), c.errMatch) {
					t.Fatalf("got %v, want an error mentioning %q", err, c.errMatch)
				}
				return
			case err != nil:
				t.Fatal(err)
			}
			if s.protos != c.want {
				t.Errorf("protocols %v, want %v", s.protos, c.want)
			}
			if (c.warn == "") != (warn == "") || !strings.Contains(warn, c.warn) {
				t.Errorf("warned %q, want %q", warn, c.warn)
			}
			if l := s.layout(); (l.LL128Bytes > 0) != s.protos[ring.LL128] {
				t.Errorf("layout has %d LL128 bytes with protocols %v", l.LL128Bytes, s.protos)
			}
		})
	}
}

// TestLL128BuffSize: NCCL_LL128_BUFFSIZE and Config.LL128BuffSize set the
// LL128 FIFO, in whole 1024-byte steps of 8 slots; bad values are a
// warning (environment) or an error (Config); the host path has none.
func TestLL128BuffSize(t *testing.T) {
	s, err := resolve(nil, 2, gpuDefaults)
	if err != nil || s.ll128Size != DefaultGPULL128BuffSize || s.buffSize(ring.LL128) != DefaultGPULL128BuffSize {
		t.Fatalf("default: %d, %v", s.ll128Size, err)
	}
	t.Setenv("NCCL_LL128_BUFFSIZE", "1M")
	if s, _ := resolve(nil, 2, gpuDefaults); s.ll128Size != 1<<20 {
		t.Errorf("NCCL_LL128_BUFFSIZE=1M: %d", s.ll128Size)
	}
	t.Setenv("NCCL_LL128_BUFFSIZE", "1000")
	warn := stderrOf(t, func() { s, _ = resolve(nil, 2, gpuDefaults) })
	if s.ll128Size != DefaultGPULL128BuffSize || !strings.Contains(warn, "NCCL_LL128_BUFFSIZE") {
		t.Errorf("NCCL_LL128_BUFFSIZE=1000: %d, warned %q", s.ll128Size, warn)
	}
	for _, bad := range []int{-1024, 1000, 2 << 30} {
		if _, err := resolve(&Config{LL128BuffSize: bad}, 2, gpuDefaults); err == nil || !strings.Contains(err.Error(), "LL128BuffSize") {
			t.Errorf("LL128BuffSize %d: %v", bad, err)
		}
	}
	if _, err := resolve(&Config{LL128BuffSize: 8192}, 2, hostDefaults); err == nil || !strings.Contains(err.Error(), "the host path has no LL128") {
		t.Errorf("LL128BuffSize on the host: %v", err)
	}
}

// TestVariantFromEnv: RINGO_VARIANT picks the plan generator; a name that
// does not parse, or a variant the rank count cannot run, is a warning
// naming the variable, and the ring is used.
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
		{"tree", 2, ring.RingVariant, `RINGO_VARIANT="tree": unknown variant`},
	}
	for _, c := range cases {
		t.Setenv("RINGO_VARIANT", c.val)
		var s settings
		var err error
		warn := stderrOf(t, func() { s, err = resolve(nil, c.n, hostDefaults) })
		if err != nil || s.variant != c.want || !strings.Contains(warn, c.warn) || (c.warn == "") != (warn == "") {
			t.Errorf("RINGO_VARIANT=%s, %d ranks: variant %v, err %v, warned %q", c.val, c.n, s.variant, err, warn)
		}
	}
}

// TestPlaceVariant: the bidirectional variant on more than two ranks over
// connections made one way is an error from a Config and a warning (and the
// ring) from RINGO_VARIANT; on two ranks, or with both ways, it stays.
func TestPlaceVariant(t *testing.T) {
	s, err := resolve(&Config{Variant: "bidirectional"}, 3, hostDefaults)
	if err != nil {
		t.Fatal(err)
	}
	if err := s.placeVariant(3, true, "host processes' connections"); !errors.Is(err, ErrInvalidArgument) ||
		!strings.Contains(err.Error(), "variant bidirectional on 3 ranks needs connections both ways round the ring, and host processes' connections are made one way") {
		t.Errorf("Config, 3 ranks, one way: %v", err)
	}
	for _, c := range []struct {
		n      int
		oneWay bool
	}{{2, true}, {3, false}} {
		if err := s.placeVariant(c.n, c.oneWay, "x"); err != nil || s.variant != ring.Bidirectional {
			t.Errorf("%d ranks, one way %v: %v, variant %v", c.n, c.oneWay, err, s.variant)
		}
	}
	t.Setenv("RINGO_VARIANT", "bidirectional")
	s, err = resolve(nil, 4, hostDefaults)
	if err != nil {
		t.Fatal(err)
	}
	warn := stderrOf(t, func() { err = s.placeVariant(4, true, "the network transport's connections") })
	if err != nil || s.variant != ring.RingVariant || !strings.Contains(warn, "RINGO_VARIANT: variant bidirectional on 4 ranks") {
		t.Errorf("RINGO_VARIANT, 4 ranks, one way: %v, variant %v, warned %q", err, s.variant, warn)
	}
}

// TestPlaceHierarchical: the hierarchical variant across processes is an
// error from a Config and a warning (and the ring) from RINGO_VARIANT, both
// ways round or not; RINGO_GROUP that does not divide the ranks warns and
// keeps the default.
func TestPlaceHierarchical(t *testing.T) {
	s, err := resolve(&Config{Variant: "hierarchical"}, 4, hostDefaults)
	if err != nil || s.group != 2 {
		t.Fatalf("group %d, %v", s.group, err)
	}
	if err := s.placeVariant(4, false, "x"); !errors.Is(err, ErrInvalidArgument) ||
		!strings.Contains(err.Error(), "variant hierarchical makes its group and column communicators in one process") {
		t.Errorf("Config: %v", err)
	}
	t.Setenv("RINGO_VARIANT", "hierarchical")
	t.Setenv("RINGO_GROUP", "3")
	var warn string
	warn = stderrOf(t, func() { s, err = resolve(nil, 4, hostDefaults) })
	if err != nil || s.group != 2 || !strings.Contains(warn, "RINGO_GROUP=3 does not divide 4 ranks; using groups of 2") {
		t.Fatalf("RINGO_GROUP=3: group %d, %v, warned %q", s.group, err, warn)
	}
	warn = stderrOf(t, func() { err = s.placeVariant(4, true, "x") })
	if err != nil || s.variant != ring.RingVariant || !strings.Contains(warn, "RINGO_VARIANT: variant hierarchical makes") {
		t.Errorf("RINGO_VARIANT: %v, variant %v, warned %q", err, s.variant, warn)
	}
}
