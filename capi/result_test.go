package main

import (
	"context"
	"errors"
	"fmt"
	"os"
	"regexp"
	"strconv"
	"strings"
	"testing"

	"github.com/ringo-ccl/ringo"
)

// NCCL's exact texts (src/init.cc, ncclGetErrorString).
var ncclErrorStrings = map[result]string{
	ncclSuccess:            "no error",
	ncclUnhandledCudaError: "unhandled cuda error (run with NCCL_DEBUG=INFO for details)",
	ncclSystemError:        "unhandled system error (run with NCCL_DEBUG=INFO for details)",
	ncclInternalError:      "internal error - please report this issue to the NCCL developers",
	ncclInvalidArgument:    "invalid argument (run with NCCL_DEBUG=WARN for details)",
	ncclInvalidUsage:       "invalid usage (run with NCCL_DEBUG=WARN for details)",
	ncclRemoteError:        "remote process exited or there was a network error",
	ncclInProgress:         "NCCL operation in progress",
}

func TestErrorStrings(t *testing.T) {
	for r := result(-2); r <= ncclNumResults+1; r++ {
		want, ok := ncclErrorStrings[r]
		if !ok {
			want = "unknown result code"
		}
		if got := errorString(r); got != want {
			t.Errorf("ncclGetErrorString(%d) = %q, want %q", r, got, want)
		}
	}
}

func TestResultOf(t *testing.T) {
	cases := []struct {
		err  error
		want result
	}{
		{nil, ncclSuccess},
		{invalidArg("x"), ncclInvalidArgument},
		{invalidUsage("x"), ncclInvalidUsage},
		{fmt.Errorf("ncclAllReduce: %w", &ringo.Error{Op: "allreduce", Err: fmt.Errorf("%w: root 3", ringo.ErrInvalidArgument)}), ncclInvalidArgument},
		{fmt.Errorf("%w: no cuda", ringo.ErrNotSupported), ncclInvalidUsage},
		{fmt.Errorf("x: %w", ringo.ErrPeerLost), ncclRemoteError},
		{fmt.Errorf("x: %w", ringo.ErrTimeout), ncclSystemError},
		{fmt.Errorf("x: %w", ringo.ErrAborted), ncclSystemError},
		{fmt.Errorf("x: %w", context.DeadlineExceeded), ncclSystemError},
		{&cudaError{op: "cuInit", code: 100, name: "CUDA_ERROR_NO_DEVICE", msg: "no CUDA-capable device is detected"}, ncclUnhandledCudaError},
		{fmt.Errorf("init: %w", errors.New("cuda: launch: an illegal memory access was encountered (CUDA_ERROR_ILLEGAL_ADDRESS)")), ncclUnhandledCudaError},
		{errors.Join(errors.New("closing"), errors.New("cuda: sync: unspecified launch failure (CUDA_ERROR_LAUNCH_FAILED)")), ncclUnhandledCudaError},
		{errors.New("something else"), ncclInternalError},
		{apiErrorf(ncclSystemError, "x"), ncclSystemError},
	}
	for _, c := range cases {
		if got := resultOf(c.err); got != c.want {
			t.Errorf("resultOf(%v) = %v, want %v", c.err, got, c.want)
		}
	}
}

// TestVersionMatchesHeader: ncclGetVersion answers include/nccl.h's
// NCCL_VERSION_CODE (nccl_abi.c also checks it at compile time).
func TestVersionMatchesHeader(t *testing.T) {
	h, err := os.ReadFile("../include/nccl.h")
	if err != nil {
		t.Fatal(err)
	}
	m := regexp.MustCompile(`#define NCCL_VERSION_CODE (\d+)`).FindSubmatch(h)
	if m == nil {
		t.Fatal("no NCCL_VERSION_CODE in nccl.h")
	}
	code, _ := strconv.Atoi(string(m[1]))
	tl := newTestLib(t)
	var v int32
	if err := tl.getVersion(ptr(&v)); err != nil || int(v) != code || code != versionCode {
		t.Fatalf("ncclGetVersion = %d, %v; nccl.h says %d", v, err, code)
	}
	wantResult(t, "ncclGetVersion(NULL)", tl.getVersion(nil), ncclInvalidArgument)
	if !strings.HasPrefix(versionString, fmt.Sprintf("%d.%d.%d", code/10000, code/100%100, code%100)) {
		t.Errorf("versionString %q does not match %d", versionString, code)
	}
}

// TestEveryFunctionDefined: each function nccl.h declares is defined in
// nccl_abi.c and has a pncclX alias (the build script checks the same on
// the built library).
func TestEveryFunctionDefined(t *testing.T) {
	h, err := os.ReadFile("../include/nccl.h")
	if err != nil {
		t.Fatal(err)
	}
	c, err := os.ReadFile("nccl_abi.c")
	if err != nil {
		t.Fatal(err)
	}
	names := map[string]bool{}
	for _, m := range regexp.MustCompile(`\b(nccl[A-Za-z0-9]+)\(`).FindAllSubmatch(h, -1) {
		names[string(m[1])] = true
	}
	if len(names) < 30 {
		t.Fatalf("only %d functions found in nccl.h", len(names))
	}
	for n := range names {
		def := regexp.MustCompile(`(?m)^(ncclResult_t|const char\*|void) ` + n + `\(`)
		if !def.Match(c) {
			t.Errorf("nccl_abi.c does not define %s", n)
		}
		if !strings.Contains(string(c), "RINGO_ALIAS("+n+");") {
			t.Errorf("nccl_abi.c has no pncclX alias of %s", n)
		}
	}
}
