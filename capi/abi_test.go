package main

import (
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"
)

// libDir is where scripts/build-libnccl.sh puts libnccl.so.2.
const libDir = "../build/lib"

// TestCABI compiles testdata/abi.c against include/nccl.h, links it with
// the built libnccl.so.2 and runs it: the library's ABI as a C program sees
// it (no GPU needed). It skips without gcc or the library (make libnccl).
func TestCABI(t *testing.T) {
	gcc, err := exec.LookPath("gcc")
	if err != nil {
		t.Skip("no gcc")
	}
	dir, err := filepath.Abs(libDir)
	if err != nil {
		t.Fatal(err)
	}
	if _, err := os.Stat(filepath.Join(dir, "libnccl.so.2")); err != nil {
		t.Skipf("no %s/libnccl.so.2: run make libnccl (scripts/build-libnccl.sh) first", libDir)
	}
	bin := filepath.Join(t.TempDir(), "abi")
	build := exec.Command(gcc, "-std=c11", "-Wall", "-Wextra", "-Werror", "-I../include", "testdata/abi.c",
		"-o", bin, "-L"+dir, "-l:libnccl.so.2", "-Wl,-rpath,"+dir)
	if out, err := build.CombinedOutput(); err != nil {
		t.Fatalf("compiling testdata/abi.c: %v\n%s", err, out)
	}
	run := exec.Command(bin)
	run.Env = append(os.Environ(), "NCCL_DEBUG=WARN", "LD_LIBRARY_PATH="+dir)
	out, err := run.CombinedOutput()
	t.Logf("abi.c:\n%s", out)
	if err != nil || !strings.Contains(string(out), "abi: OK") {
		t.Fatalf("abi.c failed: %v", err)
	}
}
