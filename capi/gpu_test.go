//go:build cuda

package main

import (
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"
	"unsafe"

	"github.com/ringo-ccl/ringo"
)

// gpus returns the CUDA devices for a GPU test, skipping it (and saying
// why) when the driver or a device is missing.
func gpus(t *testing.T) int {
	t.Helper()
	if err := ensureCUDA(); err != nil {
		t.Skipf("no GPU: %v", err)
	}
	n, err := cudaDeviceCount()
	if err != nil || n < 1 {
		t.Skipf("no GPU: %d devices, %v", n, err)
	}
	return n
}

// TestGPUAllReduce drives ringo's real communicators through the library:
// two ranks made inside a group on two GPUs (or both on one, which NCCL
// refuses), an all-reduce enqueued rank after rank, and teardown.
func TestGPUAllReduce(t *testing.T) {
	ngpu := gpus(t)
	l := newLibrary()
	l.log = newLogger(func(s string) { t.Log(s) })
	devs := []int{0, 1 % ngpu}
	const tid, n = 1, 4099
	l.groupStart(tid)
	hs := make([]unsafe.Pointer, 2)
	x := id(40)
	if err := l.getUniqueID(ptr(x)); err != nil {
		t.Fatal(err)
	}
	for r, d := range devs {
		l.device = func() (int, error) { return d, nil } // cudaSetDevice(d)
		if err := l.initRank("ncclCommInitRank", tid, ptr(&hs[r]), 2, int32(r), ptr(x), nil); err != nil {
			t.Fatal(err)
		}
	}
	if err := l.groupEnd(tid); err != nil {
		t.Fatal(err)
	}
	bufs := make([]ringo.DevPtr[float32], 2)
	streams := make([]ringo.Stream, 2)
	for r, d := range devs {
		var err error
		if bufs[r], err = ringo.DeviceAlloc[float32](d, n); err != nil {
			t.Fatal(err)
		}
		defer bufs[r].Free()
		if streams[r], err = ringo.NewStream(d); err != nil {
			t.Fatal(err)
		}
		defer streams[r].Close()
		in := make([]float32, n)
		for i := range in {
			in[i] = float32((r + 1) * (i % 9))
		}
		if err := bufs[r].CopyFrom(in); err != nil {
			t.Fatal(err)
		}
	}
	l.groupStart(tid)
	for r := range devs {
		p := devPtr(bufs[r].Addr())
		if err := l.collective(apiAllReduce, p, p, n, int32(ringo.TypeFloat32), 0, 0, hs[r], devPtr(streams[r].Handle())); err != nil {
			t.Fatal(err)
		}
	}
	if err := l.groupEnd(tid); err != nil {
		t.Fatal(err)
	}
	for r := range devs {
		if err := streams[r].Sync(); err != nil {
			t.Fatal(err)
		}
		out := make([]float32, n)
		if err := bufs[r].CopyTo(out); err != nil {
			t.Fatal(err)
		}
		for i, v := range out {
			if v != float32(3*(i%9)) {
				t.Fatalf("rank %d element %d = %v, want %v", r, i, v, 3*(i%9))
			}
		}
	}
	for _, h := range hs {
		if err := l.destroy(h); err != nil {
			t.Fatal(err)
		}
	}
}

// TestGPUSmoke runs testdata/gpu_smoke.c against the built libnccl.so.2
// (make libnccl first): the gpu_smoke that scripts/build-libnccl.sh built
// beside it from the same source, or, when there is none (or
// RINGO_SMOKE_REBUILD=1), one compiled here.
func TestGPUSmoke(t *testing.T) {
	dir, _ := filepath.Abs(libDir)
	if _, err := os.Stat(filepath.Join(dir, "libnccl.so.2")); err != nil {
		t.Skipf("no %s/libnccl.so.2: run make libnccl first", libDir)
	}
	bin := filepath.Join(dir, "gpu_smoke")
	if _, err := os.Stat(bin); err != nil || os.Getenv("RINGO_SMOKE_REBUILD") == "1" {
		gcc := cc(t)
		bin = filepath.Join(t.TempDir(), "gpu_smoke")
		build := exec.Command(gcc, "-std=c11", "-O1", "-Wall", "-Wextra", "-Werror", "-I../include", "testdata/gpu_smoke.c",
			"-o", bin, "-L"+dir, "-l:libnccl.so.2", "-lcuda", "-lpthread", "-Wl,-rpath,"+dir)
		if out, err := build.CombinedOutput(); err != nil {
			t.Fatalf("compiling testdata/gpu_smoke.c: %v\n%s", err, out)
		}
	}
	gpus(t)
	run := exec.Command(bin)
	run.Env = append(os.Environ(), "LD_LIBRARY_PATH="+dir)
	out, err := run.CombinedOutput()
	t.Logf("gpu_smoke:\n%s", out)
	if err != nil || !strings.Contains(string(out), "gpu_smoke: OK") {
		t.Fatalf("gpu_smoke failed: %v", err)
	}
}
