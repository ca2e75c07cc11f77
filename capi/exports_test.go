package main

import (
	"context"
	"strings"
	"testing"
	"unicode/utf8"
	"unsafe"

	"github.com/ringo-ccl/ringo"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// useLib makes the exports drive tl for the rest of the test.
func useLib(t *testing.T, tl *testLib) {
	old := lib
	tl.setLastErr = setLastError // the C buffers, as ncclGetLastError reads them
	lib = tl.library
	t.Cleanup(func() { lib = old })
}

// No panic crosses into C: it becomes ncclInternalError, with its text in
// ncclGetLastError.
func TestExportRecoversPanic(t *testing.T) {
	tl := newTestLib(t)
	useLib(t, tl)
	tl.device = func() (int, error) { panic("device probe exploded") }
	var h unsafe.Pointer
	x := id(30)
	res := ringoCommInitRank(1, ptr(&h), 1, ptr(x), 0)
	if result(res) != ncclInternalError {
		t.Fatalf("panicking export returned %v", result(res))
	}
	if last := lastError(); !strings.Contains(last, "ncclCommInitRank") || !strings.Contains(last, "device probe exploded") {
		t.Fatalf("last error %q", last)
	}
	// A panic in ringo's creation, reached through ncclGroupEnd.
	tl.device = func() (int, error) { return 0, nil }
	tl.fc.panic = "ringo exploded"
	if r := ringoGroupStart(2); r != 0 {
		t.Fatal(r)
	}
	if r := ringoCommInitRank(2, ptr(&h), 1, ptr(x), 0); r != 0 {
		t.Fatal(result(r), lastError())
	}
	if r := result(ringoGroupEnd(2)); r != ncclInternalError || !strings.Contains(lastError(), "ringo exploded") {
		t.Fatalf("group end: %v, %q", r, lastError())
	}
	// A panic in a fake communicator's collective.
	tl.fc.panic = nil
	var hs [1]unsafe.Pointer
	if r := ringoCommInitAll(ptr(&hs[0]), 1, nil); r != 0 {
		t.Fatal(result(r), lastError())
	}
	e, _ := tl.handles.lookup("t", hs[0])
	e.state.Store(&entryState{comm: panicComm{tl.comm(t, hs[0])}})
	if r := result(ringoCollective(apiAllReduce, nil, nil, 1, 7, 0, 0, hs[0], nil)); r != ncclInternalError {
		t.Fatalf("collective: %v", r)
	}
	if !strings.Contains(lastError(), "kernel launch exploded") {
		t.Fatalf("last error %q", lastError())
	}
	// The rank is not left locked.
	if r := ringoCommDestroy(hs[0]); r != 0 {
		t.Fatal(result(r), lastError())
	}
	// The library still works.
	var v int32
	if r := ringoGetVersion(ptr(&v)); r != 0 || v != versionCode {
		t.Fatal(r, v)
	}
}

type panicComm struct{ *fakeComm }

func (panicComm) DoDevice(context.Context, ringo.DeviceCall, ringo.Stream) error {
	panic("kernel launch exploded")
}

func TestExportsMapResults(t *testing.T) {
	tl := newTestLib(t)
	useLib(t, tl)
	if r := result(ringoGetVersion(nil)); r != ncclInvalidArgument || !strings.Contains(lastError(), "ncclGetVersion: version is NULL") {
		t.Fatalf("%v %q", r, lastError())
	}
	if r := result(ringoUnsupported(0)); r != ncclInvalidUsage || lastError() != "ncclGroupSimulateEnd: simulating a group is not supported by ringo" {
		t.Fatalf("%v %q", r, lastError())
	}
	if r := result(ringoGroupEnd(99)); r != ncclInvalidUsage {
		t.Fatal(r)
	}
	var n int32
	if r := result(ringoCommCount(nil, ptr(&n))); r != ncclInvalidArgument {
		t.Fatal(r)
	}
}

// ncclGetLastError's text is cut to its 1 KiB buffer at a character
// boundary.
func TestLastErrorTruncated(t *testing.T) {
	setLastError(strings.Repeat("é", 600)) // 1200 bytes
	got := lastError()
	if len(got) >= lastErrorBytes || len(got) < lastErrorBytes-4 || !utf8.ValidString(got) {
		t.Fatalf("%d bytes, valid UTF-8: %v", len(got), utf8.ValidString(got))
	}
	setLastError("")
	if lastError() != "" {
		t.Fatal("empty error")
	}
	setLastError("short")
	if lastError() != "short" {
		t.Fatal(lastError())
	}
}

// ncclGetLastError says each prefix once when ringo's own error (here a
// bad NCCL_BUFFSIZE) fails a communicator's creation.
func TestLastErrorOnePrefix(t *testing.T) {
	t.Setenv("NCCL_BUFFSIZE", "131")
	_, cause := ringo.NewLocal(1, nil)
	require.Error(t, cause)
	tl := newTestLib(t)
	useLib(t, tl)
	tl.fc.fail = cause
	var h unsafe.Pointer
	assert.Equal(t, ncclInvalidArgument, result(ringoCommInitRank(1, ptr(&h), 1, ptr(id(31)), 0)))
	last := lastError()
	t.Log(last)
	assert.Contains(t, last, `ncclCommInitRank: `)
	assert.Contains(t, last, `NCCL_BUFFSIZE="131": want a multiple of 128 bytes in [128, 1G]`)
	for _, p := range []string{"ringo:", "invalid argument", "ncclCommInitRank", "init"} {
		assert.LessOrEqual(t, strings.Count(last, p), 1, "%q said twice in %q", p, last)
	}
}
