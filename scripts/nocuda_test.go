// Package scripts holds the build's shell scripts; it has no Go code, only
// the test that runs make bench as a newcomer meets it: a fresh tree on a
// machine with only Go (scripts/nocuda.sh).
package scripts

import (
	"bytes"
	"io/fs"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"
)

// TestBenchWithoutCUDA: make bench, small, on a fresh copy of the working
// tree (its tracked and untracked files, none of the ignored build outputs,
// so that a stale bin/ or build/ hides nothing), with the CUDA toolkit
// hidden by scripts/nocuda.sh: the README's first command on a Debian
// machine with only Go — with gcc (cgo: capi builds too, against nccl.h
// without CUDA's headers), and without a C compiler (cgo off: the rest).
// Go's build cache keys the repository's packages by their directory, so
// the copy's packages are all compiled afresh. Needs root for the mount
// namespace.
func TestBenchWithoutCUDA(t *testing.T) {
	if os.Geteuid() != 0 {
		t.Skip("scripts/nocuda.sh needs root for its mount namespace: make bench without the CUDA toolkit did not run")
	}
	if out, err := exec.Command("unshare", "-m", "true").CombinedOutput(); err != nil {
		t.Skipf("cannot make a mount namespace here (unshare -m: %v: %s): make bench without the CUDA toolkit did not run", err, out)
	}
	for _, tool := range []string{"git", "make"} {
		if _, err := exec.LookPath(tool); err != nil {
			t.Fatalf("%v (make deps installs %s)", err, tool)
		}
	}
	dir := t.TempDir()
	copyWorkTree(t, "..", dir)
	for _, c := range []struct{ name, cgo string }{{"cgo", "1"}, {"nocgo", "0"}} {
		t.Run(c.name, func(t *testing.T) {
			cmd := exec.Command("bash", "scripts/nocuda.sh", "make", "bench",
				"BENCH_RANKS=2", "BENCH_FLAGS=-b 8 -e 64K -f 8 -n 3 -w 1 -c 1")
			cmd.Dir = dir
			cmd.Env = append(os.Environ(), "CGO_ENABLED="+c.cgo)
			out, err := cmd.CombinedOutput()
			t.Logf("CGO_ENABLED=%s scripts/nocuda.sh make bench:\n%s", c.cgo, out)
			if err != nil {
				t.Fatalf("make bench on a fresh tree without the CUDA toolkit: %v", err)
			}
			for _, want := range []string{"nocuda: the CUDA toolkit is hidden", "Out of bounds values : 0 OK"} {
				if !strings.Contains(string(out), want) {
					t.Errorf("make bench printed no %q", want)
				}
			}
		})
	}
}

// copyWorkTree copies the working tree of the repository at root into dir:
// the files git tracks (as they are now, edited or not) and the untracked
// ones it does not ignore.
func copyWorkTree(t *testing.T, root, dir string) {
	t.Helper()
	ls := exec.Command("git", "-C", root, "ls-files", "-z", "--cached", "--others", "--exclude-standard")
	var stderr bytes.Buffer
	ls.Stderr = &stderr
	list, err := ls.Output()
	if err != nil {
		t.Fatalf("git ls-files: %v: %s", err, stderr.String())
	}
	n := 0
	for _, f := range strings.Split(strings.TrimSuffix(string(list), "\x00"), "\x00") {
		src, dst := filepath.Join(root, f), filepath.Join(dir, f)
		fi, err := os.Lstat(src)
		if os.IsNotExist(err) || (err == nil && fi.IsDir()) {
			continue // deleted in the working tree, or a submodule
		}
		if err == nil {
			err = copyFile(src, dst, fi)
		}
		if err != nil {
			t.Fatal(err)
		}
		n++
	}
	t.Logf("copied %d files of the working tree to %s", n, dir)
}

// copyFile copies the file or symbolic link src, whose Lstat is fi, to dst.
func copyFile(src, dst string, fi fs.FileInfo) error {
	if err := os.MkdirAll(filepath.Dir(dst), 0o755); err != nil {
		return err
	}
	if fi.Mode()&fs.ModeSymlink != 0 {
		target, err := os.Readlink(src)
		if err != nil {
			return err
		}
		return os.Symlink(target, dst)
	}
	b, err := os.ReadFile(src)
	if err != nil {
		return err
	}
	return os.WriteFile(dst, b, fi.Mode().Perm())
}
