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
// it (no GPU needed). It skips without a C compiler for include/nccl.h
// (see cc) or the library (make libnccl).
func TestCABI(t *testing.T) {
	gcc := cc(t)
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

// cc returns gcc, skipping the test when there is none or it finds no
// cuda_runtime.h, which include/nccl.h includes (make deps installs it;
// the GPU machine has no headers and runs the programs built here).
func cc(t *testing.T) string {
	t.Helper()
	gcc, err := exec.LookPath("gcc")
	if err != nil {
		t.Skip("no gcc")
	}
	probe := exec.Command(gcc, "-E", "-x", "c", "-o", os.DevNull, "-")
	probe.Stdin = strings.NewReader("#include <cuda_runtime.h>\n")
	if probe.Run() != nil {
		t.Skip("gcc finds no cuda_runtime.h (make deps installs CUDA's headers)")
	}
	return gcc
}
