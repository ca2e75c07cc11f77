package sys

import (
	"errors"
	"fmt"
	"os"
	"os/exec"
	"strings"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
	"golang.org/x/sys/unix"
)

// TestSegmentPrivate: a segment is readable and writable by its owner only,
// and a name that already exists (planted by anyone) is refused, not
// adopted.
func TestSegmentPrivate(t *testing.T) {
	name := fmt.Sprintf("ringo-systest-%d", time.Now().UnixNano())
	s, err := CreateSegment(name, 4096)
	if err != nil {
		t.Fatal(err)
	}
	defer Unlink(name)
	defer s.Close()
	st, err := os.Stat(ShmDir + "/" + name)
	if err != nil {
		t.Fatal(err)
	}
	if perm := st.Mode().Perm(); perm != 0o600 {
		t.Fatalf("segment mode %v, want -rw-------", perm)
	}
	if _, err := CreateSegment(name, 4096); !errors.Is(err, os.ErrExist) {
		t.Fatalf("creating over an existing segment: %v, want it refused", err)
	}
}

// TestSegmentNoSpace: a segment larger than what /dev/shm has left fails
// at creation, with an error that says so and what to change, and leaves
// no file; one that fits is there to its last byte (only sized, its pages
// past the space would kill the process with SIGBUS when touched). It runs
// again in a mount namespace whose /dev/shm is a 1-MiB tmpfs (unshare -rm),
// and skips where one cannot be made.
func TestSegmentNoSpace(t *testing.T) {
	const inside = "RINGO_SYS_SMALL_SHM"
	if os.Getenv(inside) == "" {
		if _, err := exec.LookPath("unshare"); err != nil {
			t.Skip("util-linux's unshare is not installed: the small-/dev/shm test did not run")
		}
		cmd := exec.Command("unshare", "-rm", "sh", "-c",
			`mount -t tmpfs -o size=1m tmpfs /dev/shm || exit 97; exec "$0" -test.run '^TestSegmentNoSpace$' -test.v`, os.Args[0])
		cmd.Env = append(os.Environ(), inside+"=1")
		out, err := cmd.CombinedOutput()
		var exit *exec.ExitError
		if errors.As(err, &exit) && (exit.ExitCode() == 97 || strings.HasPrefix(string(out), "unshare:")) {
			t.Skipf("no mount namespace with a small /dev/shm here: the small-/dev/shm test did not run: %s", out)
		}
		require.NoError(t, err, "%s", out)
		require.Contains(t, string(out), "--- PASS: TestSegmentNoSpace", "%s", out)
		return
	}
	name := fmt.Sprintf("ringo-systest-%d", time.Now().UnixNano())
	_, err := CreateSegment(name, 2<<20)
	require.ErrorIs(t, err, unix.ENOSPC)
	assert.ErrorContains(t, err, "2097152 bytes do not fit in /dev/shm")
	assert.ErrorContains(t, err, "NCCL_BUFFSIZE")
	_, err = os.Stat(ShmDir + "/" + name)
	assert.ErrorIs(t, err, os.ErrNotExist, "the segment that did not fit is left in /dev/shm")
	before, err := ShmFree()
	require.NoError(t, err)
	assert.LessOrEqual(t, before, uint64(1<<20), "ShmFree of a 1-MiB /dev/shm")
	s, err := CreateSegment(name, 512<<10)
	require.NoError(t, err)
	defer Unlink(name)
	defer s.Close()
	after, err := ShmFree()
	require.NoError(t, err)
	assert.LessOrEqual(t, after, before-512<<10, "ShmFree after a 512-KiB segment was reserved")
	for i := range s.Mem {
		s.Mem[i] = 1
	}
}
