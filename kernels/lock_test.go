package kernels

import (
	"crypto/sha256"
	"encoding/hex"
	"os"
	"path/filepath"
	"strings"
	"testing"
)

// TestFatbinLock: the embedded modules were built from the sources and the
// nvcc flags in the tree. fatbin.lock, written by make kernels, records the
// SHA-256 of nvcc.flags, of every file in src/ and of every module; the
// files on disk and the embedded modules must match it, entry for entry.
// This needs no nvcc and takes milliseconds; make check-kernels rebuilds
// the modules with nvcc and compares them byte for byte.
func TestFatbinLock(t *testing.T) {
	lock, nvcc := readLock(t, "fatbin.lock")
	if !strings.Contains(nvcc, "release") {
		t.Errorf("fatbin.lock records no nvcc version (%q)", nvcc)
	}
	const regen = "run make kernels (needs nvcc) and commit kernels/fatbin and kernels/fatbin.lock"
	srcs, err := filepath.Glob("src/*")
	if err != nil {
		t.Fatal(err)
	}
	for _, f := range append([]string{"nvcc.flags"}, srcs...) {
		b, err := os.ReadFile(f)
		if err != nil {
			t.Fatal(err)
		}
		checkLocked(t, lock, f, b, "kernels/"+f+" changed since the modules were built: "+regen)
	}
	for _, m := range Modules() {
		f := "fatbin/" + m.Name + ".fatbin"
		checkLocked(t, lock, f, m.Fatbin, "kernels/"+f+" is not the module make kernels built: "+regen)
	}
	for f := range lock {
		t.Errorf("fatbin.lock names kernels/%s, which is gone: %s", f, regen)
	}
}

// readLock returns a lock's entries (path -> SHA-256 in hex), in the
// format of sha256sum, and the nvcc version it records.
func readLock(t *testing.T, name string) (map[string]string, string) {
	t.Helper()
	b, err := os.ReadFile(name)
	if err != nil {
		t.Fatal(err)
	}
	lock := map[string]string{}
	nvcc := ""
	for i, line := range strings.Split(strings.TrimSuffix(string(b), "\n"), "\n") {
		if v, ok := strings.CutPrefix(line, "# nvcc: "); ok {
			nvcc = v
			continue
		}
		if strings.HasPrefix(line, "#") {
			continue
		}
		sum, f, ok := strings.Cut(line, "  ")
		if !ok || len(sum) != 2*sha256.Size || f == "" {
			t.Fatalf("%s:%d: %q is not a SHA-256 and a file name", name, i+1, line)
		}
		lock[f] = sum
	}
	return lock, nvcc
}

// checkLocked checks that b, file f's contents, has the hash lock records
// for f, and removes f from lock.
func checkLocked(t *testing.T, lock map[string]string, f string, b []byte, stale string) {
	t.Helper()
	sum := sha256.Sum256(b)
	want, ok := lock[f]
	switch {
	case !ok:
		t.Errorf("fatbin.lock has no kernels/%s: %s", f, stale)
	case want != hex.EncodeToString(sum[:]):
		t.Errorf("%s", stale)
	}
	delete(lock, f)
}
