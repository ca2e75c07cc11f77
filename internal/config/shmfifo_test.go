package config

import (
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/ringo-ccl/ringo/internal/peers"
	"github.com/ringo-ccl/ringo/ring"
	"github.com/ringo-ccl/ringo/transport"
)

// unsetBuffSize leaves the Simple FIFO's size open for the test, whatever
// the environment it runs in.
func unsetBuffSize(t *testing.T) {
	t.Setenv("NCCL_BUFFSIZE", "")
	t.Setenv("RINGO_BUFFSIZE", "")
}

// fakeHosts returns the Info of ranks on hosts (hosts[r] names rank r's),
// each reporting free bytes of /dev/shm, and the link of shared memory
// between ranks of one host.
func fakeHosts(hosts []string, free []uint64) ([]peers.Info, func(from, to int) bool) {
	ps := make([]peers.Info, len(hosts))
	for r, h := range hosts {
		ps[r] = peers.Info{Host: h, Pid: 100 + r, ShmDev: 7, ShmFree: free[r]}
	}
	return ps, func(from, to int) bool { return !ps[from].ShmOff && ps[from].SameHost(ps[to]) }
}

// TestFitShm: host ranks in separate processes take 4-MiB Simple FIFOs
// where every rank of every host saw ShmMargin times its host's segments
// free, else all keep 1 MiB; every rank decides alike.
func TestFitShm(t *testing.T) {
	unsetBuffSize(t)
	base, err := Resolve(Request{}, 4, Host)
	require.NoError(t, err)
	require.Equal(t, DefaultBuffSize, base.Sizes.Simple)
	require.Equal(t, DefaultLocalBuffSize, base.RoomySimple)
	roomy := base.Sizes
	roomy.Simple = DefaultLocalBuffSize
	per := uint64(roomy.Bytes())
	// Ranks 0, 1 on host a, 2, 3 on host b; a unidirectional ring of one
	// channel, 0→1→2→3→0: 0→1 and 2→3 go through shared memory, the
	// others cross hosts, so each host's segments take one connection,
	// and each of its ranks needs ShmMargin × per free.
	hosts := []string{"a", "a", "b", "b"}
	edges := transport.RingEdges(ring.Identity(4), ring.RingVariant, 1)
	const gib = 1 << 30
	need := ShmMargin * per
	for _, tc := range []struct {
		name string
		free []uint64
		want int
	}{
		{"room everywhere", []uint64{gib, gib, gib, gib}, DefaultLocalBuffSize},
		{"just enough", []uint64{need, need, need, need}, DefaultLocalBuffSize},
		{"one rank of one host short", []uint64{gib, gib, gib, need - 1}, DefaultBuffSize},
		{"one rank could not measure", []uint64{0, gib, gib, gib}, DefaultBuffSize},
		{"a container's 64 MiB", []uint64{64 << 20, 64 << 20, 64 << 20, 64 << 20}, DefaultLocalBuffSize},
	} {
		t.Run(tc.name, func(t *testing.T) {
			ps, link := fakeHosts(hosts, tc.free)
			for r := range ps { // each rank on its own copy: all decide alike
				s := base
				s.FitShm(ps, edges, link)
				assert.Equal(t, tc.want, s.Sizes.Simple, "rank %d", r)
				assert.Equal(t, base.Sizes.LL, s.Sizes.LL, "rank %d: the LL FIFO", r)
			}
		})
	}

	// 8 ranks of one host in a 64-MiB /dev/shm: 8 connections of 4.25 MiB
	// take 34 MiB, twice that does not fit; 1 MiB each.
	eight := make([]string, 8)
	free := make([]uint64, 8)
	for r := range eight {
		eight[r], free[r] = "a", 64<<20
	}
	ps, link := fakeHosts(eight, free)
	s := base
	s.FitShm(ps, transport.RingEdges(ring.Identity(8), ring.RingVariant, 1), link)
	assert.Equal(t, DefaultBuffSize, s.Sizes.Simple, "8 ranks in 64 MiB")

	// Shared memory off: no segment, whatever /dev/shm has.
	ps, link = fakeHosts(hosts, []uint64{0, 0, 0, 0})
	for r := range ps {
		ps[r].ShmOff = true
	}
	s = base
	s.FitShm(ps, edges, link)
	assert.Equal(t, DefaultLocalBuffSize, s.Sizes.Simple, "no shared memory")
}

// TestShmShortNames: the reason names the rank short of room, its host,
// and the numbers.
func TestShmShortNames(t *testing.T) {
	ps, link := fakeHosts([]string{"a", "a", "b", "b"}, []uint64{1 << 30, 1 << 30, 1 << 30, 1 << 20})
	edges := transport.RingEdges(ring.Identity(4), ring.RingVariant, 2)
	why := ShmShort(ps, edges, link, 1<<19)
	assert.Equal(t, "rank 3's /dev/shm (host b) has 1048576 bytes free, less than 2× the 1048576 bytes its host's segments take (2 connections)", why)
}

// TestFitShmExplicit: a size set by NCCL_BUFFSIZE (even the default's) or
// Config.BuffSize always wins, unchanged, and ranks of one process and GPU
// ranks keep theirs; a rank that set the size and one that left it open
// have different fingerprints, so Exchange refuses them before either
// decides.
func TestFitShmExplicit(t *testing.T) {
	ps, link := fakeHosts([]string{"a", "a"}, []uint64{1 << 40, 1 << 40})
	edges := transport.RingEdges(ring.Identity(2), ring.RingVariant, 1)
	unsetBuffSize(t)
	open, err := Resolve(Request{}, 2, Host)
	require.NoError(t, err)
	for _, tc := range []struct {
		name string
		env  string
		req  Request
		d    Defaults
		want int
	}{
		{"NCCL_BUFFSIZE=1M", "1M", Request{}, Host, 1 << 20},
		{"NCCL_BUFFSIZE=2M", "2M", Request{}, Host, 2 << 20},
		{"Config.BuffSize", "", Request{BuffSize: 512 << 10}, Host, 512 << 10},
		{"Config.BuffSize over NCCL_BUFFSIZE", "2M", Request{BuffSize: 1 << 20}, Host, 1 << 20},
		{"ranks of one process", "", Request{}, LocalHost, DefaultLocalBuffSize},
		{"GPU ranks", "", Request{}, GPU, DefaultGPUBuffSize},
	} {
		t.Run(tc.name, func(t *testing.T) {
			t.Setenv("NCCL_BUFFSIZE", tc.env)
			s, err := Resolve(tc.req, 2, tc.d)
			require.NoError(t, err)
			assert.Zero(t, s.RoomySimple)
			s.FitShm(ps, edges, link)
			assert.Equal(t, tc.want, s.Sizes.Simple)
			if tc.d.what == Host.what {
				assert.NotEqual(t, open.Fingerprint(), s.Fingerprint())
			}
		})
	}
	assert.Contains(t, open.Fingerprint(), "buffsize=1048576|4194304 ")
}
