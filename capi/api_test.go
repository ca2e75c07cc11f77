package main

import (
	"errors"
	"fmt"
	"math"
	"slices"
	"strings"
	"sync"
	"testing"
	"unsafe"

	"github.com/ringo-ccl/ringo"
	"github.com/ringo-ccl/ringo/internal/errs"
	"github.com/ringo-ccl/ringo/reduce"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// devPtr is a device address as the void* a C caller passes; it is never
// dereferenced.
func devPtr(a uintptr) unsafe.Pointer { return *(*unsafe.Pointer)(unsafe.Pointer(&a)) }

// The C ABI's collective codes (nccl_abi.c's RINGO_COLL_*).
const (
	apiAllReduce = iota
	apiReduceScatter
	apiAllGather
	apiBroadcast
	apiReduce
	apiBcast
)

func TestCollectiveArguments(t *testing.T) {
	tl := newTestLib(t)
	hs := tl.initGroup(t, id(20), 4, 5)
	c1 := tl.comm(t, hs[1])
	send, recv := devPtr(0x1000), devPtr(0x2000)
	stream := devPtr(0xabc)
	cases := []struct {
		api  int32
		op   int32
		root int32
		want ringo.DeviceCall
	}{
		{apiAllReduce, 2, 0, ringo.DeviceCall{Coll: ringo.CollAllReduce, Send: 0x1000, Recv: 0x2000, Count: 3, Type: ringo.TypeFloat32, Op: ringo.OpMax}},
		{apiReduceScatter, 4, 0, ringo.DeviceCall{Coll: ringo.CollReduceScatter, Send: 0x1000, Recv: 0x2000, Count: 3, Type: ringo.TypeFloat32, Op: ringo.OpAvg}},
		{apiAllGather, 0, 0, ringo.DeviceCall{Coll: ringo.CollAllGather, Send: 0x1000, Recv: 0x2000, Count: 3, Type: ringo.TypeFloat32}},
		{apiBroadcast, 0, 1, ringo.DeviceCall{Coll: ringo.CollBroadcast, Send: 0x1000, Recv: 0x2000, Count: 3, Type: ringo.TypeFloat32, Root: 1}},
		{apiReduce, 1, 1, ringo.DeviceCall{Coll: ringo.CollReduce, Send: 0x1000, Recv: 0x2000, Count: 3, Type: ringo.TypeFloat32, Op: ringo.OpProd, Root: 1}},
	}
	for _, c := range cases {
		if err := tl.collective(c.api, send, recv, 3, int32(ringo.TypeFloat32), c.op, c.root, hs[1], stream); err != nil {
			t.Fatalf("api %d: %v", c.api, err)
		}
		if c1.last != c.want {
			t.Errorf("api %d: DoDevice(%+v), want %+v", c.api, c1.last, c.want)
		}
		if c1.lastStream != ringo.StreamHandle(5, 0xabc) {
			t.Errorf("api %d: stream %+v, want GPU 5's 0xabc", c.api, c1.lastStream)
		}
	}
	// ncclBcast is in place.
	if err := tl.collective(apiBcast, recv, recv, 3, int32(ringo.TypeInt8), 0, 0, hs[1], nil); err != nil {
		t.Fatal(err)
	}
	if c1.last.Send != 0x2000 || c1.last.Recv != 0x2000 || c1.last.Coll != ringo.CollBroadcast || c1.lastStream != ringo.StreamHandle(5, 0) {
		t.Errorf("ncclBcast: %+v on %+v", c1.last, c1.lastStream)
	}

	bad := []struct {
		name string
		err  error
		want string
	}{
		{"datatype 12", tl.collective(apiAllReduce, send, recv, 3, 12, 0, 0, hs[0], nil), "datatype 12"},
		{"datatype -1", tl.collective(apiAllReduce, send, recv, 3, -1, 0, 0, hs[0], nil), "datatype -1"},
		{"op -1", tl.collective(apiAllReduce, send, recv, 3, 7, -1, 0, hs[0], nil), "op -1"},
		{"op 5 unknown", tl.collective(apiAllReduce, send, recv, 3, 7, 5, 0, hs[0], nil), "op 5"},
		{"count too large", tl.collective(apiAllReduce, send, recv, math.MaxUint64, 7, 0, 0, hs[0], nil), "count"},
		{"NULL comm", tl.collective(apiAllReduce, send, recv, 3, 7, 0, 0, nil, nil), "comm is NULL"},
	}
	for _, b := range bad {
		wantResult(t, b.name, b.err, ncclInvalidArgument)
		if !strings.HasPrefix(b.err.Error(), "ncclAllReduce: ") || !strings.Contains(b.err.Error(), b.want) {
			t.Errorf("%s: %q", b.name, b.err)
		}
	}
	// The op of a collective that does not reduce is not looked at.
	if err := tl.collective(apiAllGather, send, recv, 3, 7, 99, 0, hs[0], nil); err != nil {
		t.Fatal(err)
	}
	// ringo's own errors pass through, named and mapped.
	tl.comm(t, hs[0]).doErr = errs.At("allreduce", 0, fmt.Errorf("%w: root 7 outside [0, 2)", ringo.ErrInvalidArgument))
	err := tl.collective(apiReduce, send, recv, 3, 7, 0, 7, hs[0], nil)
	wantResult(t, "ringo's invalid argument", err, ncclInvalidArgument)
	if !strings.HasPrefix(err.Error(), "ncclReduce: allreduce rank 0") {
		t.Errorf("%q", err)
	}
	tl.comm(t, hs[0]).doErr = fmt.Errorf("%w: earlier failure", ringo.ErrAborted)
	wantResult(t, "aborted", tl.collective(apiAllReduce, send, recv, 3, 7, 0, 0, hs[0], nil), ncclSystemError)
}

// The collective path allocates nothing (STYLE.md §6).
func TestCollectiveAllocs(t *testing.T) {
	tl := newTestLib(t)
	hs := tl.initGroup(t, id(21), 0, 1)
	var op int32
	scalar := float32(0.5)
	if err := tl.redOpCreatePreMulSum(ptr(&op), ptr(&scalar), int32(ringo.TypeFloat32), ncclScalarHostImmediate, hs[0]); err != nil {
		t.Fatal(err)
	}
	send, recv := devPtr(0x1000), devPtr(0x2000)
	allocs := testing.AllocsPerRun(100, func() {
		if err := tl.collective(apiAllReduce, send, recv, 1024, int32(ringo.TypeFloat32), 0, 0, hs[0], nil); err != nil {
			t.Fatal(err)
		}
		if err := tl.collective(apiAllReduce, send, recv, 1024, int32(ringo.TypeFloat32), op, 0, hs[0], nil); err != nil {
			t.Fatal(err)
		}
	})
	if allocs != 0 {
		t.Fatalf("%v allocations per collective", allocs)
	}
}

func TestPreMulSumOps(t *testing.T) {
	tl := newTestLib(t)
	hs := tl.initGroup(t, id(22), 0, 1)
	other := tl.initGroup(t, id(23), 2)
	c0 := tl.comm(t, hs[0])
	send, recv := devPtr(0x1000), devPtr(0x2000)

	create := func(h unsafe.Pointer, dt int32, scalar unsafe.Pointer) (int32, error) {
		op := int32(-7)
		err := tl.redOpCreatePreMulSum(ptr(&op), scalar, dt, ncclScalarHostImmediate, h)
		return op, err
	}
	f := float32(0.5)
	op1, err := create(hs[0], int32(ringo.TypeFloat32), ptr(&f))
	if err != nil || op1 != ncclNumOps {
		t.Fatalf("first op %d, %v; want %d", op1, err, ncclNumOps)
	}
	// nccl-tests passes a union: the scalar in the low bytes.
	u := uint64(0xffffffff00000000) | uint64(math.Float32bits(2))
	op2, err := create(hs[0], int32(ringo.TypeFloat32), ptr(&u))
	if err != nil || op2 != ncclNumOps+1 {
		t.Fatalf("second op %d, %v", op2, err)
	}
	if err := tl.collective(apiAllReduce, send, recv, 4, int32(ringo.TypeFloat32), op2, 0, hs[0], nil); err != nil {
		t.Fatal(err)
	}
	if want := ringo.PreMul(float32(2)); c0.last.Op != want {
		t.Fatalf("op %v, want %v", c0.last.Op, want)
	}
	h := ringo.Float16(0x3c00)
	op3, err := create(hs[0], int32(ringo.TypeFloat16), ptr(&h))
	if err != nil {
		t.Fatal(err)
	}
	if got, _ := tl.ops.get("t", op3, mustEntry(t, tl, hs[0])); got != reduce.PreMul(ringo.Float16(0x3c00)) {
		t.Fatalf("half op %v", got)
	}

	// Destroy and reuse the lowest slot.
	if err := tl.redOpDestroy(op1, hs[0]); err != nil {
		t.Fatal(err)
	}
	wantResult(t, "destroyed op", tl.collective(apiAllReduce, send, recv, 4, int32(ringo.TypeFloat32), op1, 0, hs[0], nil), ncclInvalidArgument)
	wantResult(t, "destroy twice", tl.redOpDestroy(op1, hs[0]), ncclInvalidArgument)
	if again, err := create(hs[0], int32(ringo.TypeFloat32), ptr(&f)); err != nil || again != op1 {
		t.Fatalf("reused op %d, %v; want %d", again, err, op1)
	}
	// Operators belong to their communicator.
	wantResult(t, "op of another comm", tl.collective(apiAllReduce, send, recv, 4, int32(ringo.TypeFloat32), op2, 0, other[0], nil), ncclInvalidArgument)
	wantResult(t, "destroy on another comm", tl.redOpDestroy(op2, other[0]), ncclInvalidArgument)
	wantResult(t, "destroy a built-in op", tl.redOpDestroy(2, hs[0]), ncclInvalidArgument)
	wantResult(t, "destroy unknown op", tl.redOpDestroy(1000, hs[0]), ncclInvalidArgument)

	// Bad creations.
	op := int32(0)
	wantResult(t, "datatype 12", tl.redOpCreatePreMulSum(ptr(&op), ptr(&f), 12, ncclScalarHostImmediate, hs[0]), ncclInvalidArgument)
	wantResult(t, "device scalar", tl.redOpCreatePreMulSum(ptr(&op), ptr(&f), 7, ncclScalarDevice, hs[0]), ncclInvalidUsage)
	wantResult(t, "residence 5", tl.redOpCreatePreMulSum(ptr(&op), ptr(&f), 7, 5, hs[0]), ncclInvalidArgument)
	wantResult(t, "NULL scalar", tl.redOpCreatePreMulSum(ptr(&op), nil, 7, ncclScalarHostImmediate, hs[0]), ncclInvalidArgument)
	wantResult(t, "NULL op", tl.redOpCreatePreMulSum(nil, ptr(&f), 7, ncclScalarHostImmediate, hs[0]), ncclInvalidArgument)
	wantResult(t, "NULL comm", tl.redOpCreatePreMulSum(ptr(&op), ptr(&f), 7, ncclScalarHostImmediate, nil), ncclInvalidArgument)

	// Destroying the communicator frees its operators.
	if tl.ops.used() != 3 {
		t.Fatalf("%d ops in use, want 3", tl.ops.used())
	}
	if err := tl.destroy(hs[0]); err != nil {
		t.Fatal(err)
	}
	if tl.ops.used() != 0 {
		t.Fatalf("%d ops left after ncclCommDestroy", tl.ops.used())
	}
}

func mustEntry(t *testing.T, tl *testLib, h unsafe.Pointer) *commEntry {
	t.Helper()
	e, err := tl.handles.lookup("t", h)
	if err != nil {
		t.Fatal(err)
	}
	return e
}

// Handles: NULL, destroyed, never made.
func TestHandles(t *testing.T) {
	tl := newTestLib(t)
	hs := tl.initGroup(t, id(24), 0, 1)
	c0, c1 := tl.comm(t, hs[0]), tl.comm(t, hs[1])
	var n int32
	wantResult(t, "NULL comm", tl.query("ncclCommCount", nil, ptr(&n), rankComm.Size), ncclInvalidArgument)
	wantResult(t, "NULL out", tl.query("ncclCommCount", hs[0], nil, rankComm.Size), ncclInvalidArgument)
	if err := tl.query("ncclCommCuDevice", hs[1], ptr(&n), rankComm.GPU); err != nil || n != 1 {
		t.Fatalf("ncclCommCuDevice = %d, %v", n, err)
	}

	if err := tl.destroy(hs[0]); err != nil {
		t.Fatal(err)
	}
	if !c0.closed || c0.aborted {
		t.Fatal("ncclCommDestroy did not Close")
	}
	err := tl.destroy(hs[0])
	wantResult(t, "double destroy", err, ncclInvalidArgument)
	if !strings.Contains(err.Error(), "was destroyed") {
		t.Errorf("%q", err)
	}
	wantResult(t, "count of a destroyed comm", tl.query("ncclCommCount", hs[0], ptr(&n), rankComm.Size), ncclInvalidArgument)
	wantResult(t, "finalize of a destroyed comm", tl.finalize(hs[0]), ncclInvalidArgument)

	// A pointer to memory that is no handle.
	var fake [4]uint64
	err = tl.finalize(ptr(&fake))
	wantResult(t, "unknown handle", err, ncclInvalidArgument)
	if !strings.Contains(err.Error(), "not a communicator") {
		t.Errorf("%q", err)
	}
	// A forged block with the live magic but a slot of another handle.
	*(*handleBlock)(ptr(&fake)) = handleBlock{magic: handleLive, slot: (*handleBlock)(hs[1]).slot}
	wantResult(t, "forged handle", tl.finalize(ptr(&fake)), ncclInvalidArgument)

	if err := tl.finalize(hs[1]); err != nil {
		t.Fatal(err)
	}
	if err := tl.abort(hs[1]); err != nil {
		t.Fatal(err)
	}
	if !c1.aborted || !c1.closed {
		t.Fatal("ncclCommAbort did not Abort and Close")
	}
	wantResult(t, "abort twice", tl.abort(hs[1]), ncclInvalidArgument)
	if tl.destroy(nil) != nil || tl.abort(nil) != nil {
		t.Fatal("ncclCommDestroy(NULL) and ncclCommAbort(NULL) are no-ops in NCCL")
	}
	if tl.handles.live() != 0 {
		t.Fatal("handles left")
	}
	// Slots are reused; the old handles stay dead.
	again := tl.initGroup(t, id(25), 0)
	if (*handleBlock)(again[0]).slot != (*handleBlock)(hs[1]).slot && (*handleBlock)(again[0]).slot != (*handleBlock)(hs[0]).slot {
		t.Error("freed slot not reused")
	}
	wantResult(t, "old handle after reuse", tl.finalize(hs[0]), ncclInvalidArgument)
	wantResult(t, "old handle after reuse", tl.finalize(hs[1]), ncclInvalidArgument)
}

func TestAsyncError(t *testing.T) {
	tl := newTestLib(t)
	hs := tl.initGroup(t, id(26), 0, 1)
	var async int32 = -1
	if err := tl.getAsyncError(hs[0], ptr(&async)); err != nil || result(async) != ncclSuccess {
		t.Fatalf("%v %v", result(async), err)
	}
	tl.comm(t, hs[0]).err = &ringo.Error{Op: "allreduce", Rank: 0, Peer: 1, Channel: 2, Step: 3, Err: ringo.ErrPeerLost}
	if err := tl.getAsyncError(hs[0], ptr(&async)); err != nil || result(async) != ncclRemoteError {
		t.Fatalf("%v %v", result(async), err)
	}
	if last := tl.lastErr[len(tl.lastErr)-1]; !strings.Contains(last, "peer lost") {
		t.Errorf("last error %q", last)
	}
	wantResult(t, "NULL asyncError", tl.getAsyncError(hs[0], nil), ncclInvalidArgument)
	wantResult(t, "NULL comm", tl.getAsyncError(nil, ptr(&async)), ncclInvalidArgument)
}

func TestRegister(t *testing.T) {
	tl := newTestLib(t)
	hs := tl.initGroup(t, id(27), 0, 1)
	var r1, r2 unsafe.Pointer
	require.NoError(t, tl.register(hs[0], 0x7f0000001000, 4096, ptr(&r1)))
	require.NoError(t, tl.register(hs[0], 0x7f0000002000, 64, ptr(&r2)))
	require.NotNil(t, r1)
	require.NotEqual(t, r1, r2)
	regs := tl.comm(t, hs[0]).regs
	require.Len(t, regs, 2, "each reached the rank's Register")
	assert.Equal(t, uintptr(0x7f0000001000), regs[0].addr)
	assert.Equal(t, int64(4096), regs[0].bytes)
	wantResult(t, "NULL handle out", tl.register(hs[0], 0x7f0000001000, 64, nil), ncclInvalidArgument)
	wantResult(t, "NULL buff", tl.register(hs[0], 0, 64, ptr(&r2)), ncclInvalidArgument)
	wantResult(t, "size 0", tl.register(hs[0], 0x7f0000001000, 0, ptr(&r2)), ncclInvalidArgument)
	wantResult(t, "deregister on another comm", tl.deregister(hs[1], r1), ncclInvalidArgument)
	require.NoError(t, tl.deregister(hs[0], r1))
	assert.Equal(t, int32(1), regs[0].deregistered.Load(), "the registration ended")
	wantResult(t, "deregister twice", tl.deregister(hs[0], r1), ncclInvalidArgument)
	var x int
	wantResult(t, "deregister unknown", tl.deregister(hs[0], ptr(&x)), ncclInvalidArgument)
	wantResult(t, "deregister NULL", tl.deregister(hs[0], nil), ncclInvalidArgument)
	if err := tl.destroy(hs[0]); err != nil { // frees r2
		t.Fatal(err)
	}
	if len(tl.regs.regs) != 0 {
		t.Fatal("registrations left after ncclCommDestroy")
	}
}

func TestMemAlloc(t *testing.T) {
	tl := newTestLib(t)
	p := unsafe.Pointer(&tl)
	if err := tl.memAllocAPI(ptr(&p), 0); err != nil || p != nil {
		t.Fatalf("size 0: %p, %v", p, err)
	}
	// Shareable memory (CUDA's virtual memory API) unless
	// NCCL_CUMEM_ENABLE=0, or where the driver has none.
	require.NoError(t, tl.memAllocAPI(ptr(&p), 64))
	assert.Equal(t, uintptr(0x7e0000000040), uintptr(p), "shareable memory")
	t.Setenv("NCCL_CUMEM_ENABLE", "0")
	require.NoError(t, tl.memAllocAPI(ptr(&p), 64))
	assert.Equal(t, uintptr(0x7f0000000040), uintptr(p), "cuMemAlloc's with NCCL_CUMEM_ENABLE=0")
	t.Setenv("NCCL_CUMEM_ENABLE", "yes")
	err := tl.memAllocAPI(ptr(&p), 64)
	wantResult(t, "NCCL_CUMEM_ENABLE=yes", err, ncclInvalidArgument)
	assert.ErrorContains(t, err, `NCCL_CUMEM_ENABLE="yes"`)
	t.Setenv("NCCL_CUMEM_ENABLE", "1")
	shared := tl.memShared
	tl.memShared = func(uint64) (uintptr, error) { return 0, fmt.Errorf("%w: no VMM", ringo.ErrNotSupported) }
	require.NoError(t, tl.memAllocAPI(ptr(&p), 64))
	assert.Equal(t, uintptr(0x7f0000000040), uintptr(p), "cuMemAlloc's where the driver has no virtual memory management")
	tl.memShared = shared

	wantResult(t, "NULL ptr", tl.memAllocAPI(nil, 8), ncclInvalidArgument)
	if err := tl.memFreeAPI(nil); err != nil {
		t.Fatal(err)
	}
	tl.memShared = func(uint64) (uintptr, error) {
		return 0, &cudaError{op: "cuMemCreate", code: 2, name: "CUDA_ERROR_OUT_OF_MEMORY", msg: "out of memory"}
	}
	wantResult(t, "out of memory", tl.memAllocAPI(ptr(&p), 1<<40), ncclUnhandledCudaError)
}

func TestInitAll(t *testing.T) {
	tl := newTestLib(t)
	hs := make([]unsafe.Pointer, 3)
	if err := tl.initAll(ptr(&hs[0]), 3, nil); err != nil {
		t.Fatal(err)
	}
	for r := range 3 {
		if c := tl.comm(t, hs[r]); c.rank != r || c.gpu != r {
			t.Fatalf("rank %d: %+v", r, c)
		}
	}
	devs := []int32{5, 2}
	if err := tl.initAll(ptr(&hs[0]), 2, ptr(&devs[0])); err != nil {
		t.Fatal(err)
	}
	if c := tl.comm(t, hs[0]); c.gpu != 5 {
		t.Fatalf("devlist ignored: %+v", c)
	}
	dup := []int32{1, 1} // two ranks on one GPU: NCCL refuses them, ringo fits them
	if err := tl.initAll(ptr(&hs[0]), 2, ptr(&dup[0])); err != nil {
		t.Fatal(err)
	}
	for r := range 2 {
		if c := tl.comm(t, hs[r]); c.rank != r || c.gpu != 1 {
			t.Fatalf("rank %d of two on GPU 1: %+v", r, c)
		}
	}
	far := []int32{0, 8}
	wantResult(t, "device 8 of 8", tl.initAll(ptr(&hs[0]), 2, ptr(&far[0])), ncclInvalidArgument)
	wantResult(t, "ndev -1", tl.initAll(ptr(&hs[0]), -1, nil), ncclInvalidArgument)
	wantResult(t, "NULL comms", tl.initAll(nil, 1, nil), ncclInvalidArgument)
	if err := tl.initAll(ptr(&hs[0]), 0, nil); err != nil {
		t.Fatal(err)
	}
	// Splitting a communicator made by ncclCommInitAll.
	tl.groupStart(1)
	kids := make([]unsafe.Pointer, 2)
	devs2 := []int32{3, 4}
	pair := make([]unsafe.Pointer, 2)
	if err := tl.initAll(ptr(&pair[0]), 2, ptr(&devs2[0])); err != nil {
		t.Fatal(err)
	}
	for r := range 2 {
		if err := tl.split(1, pair[r], 0, 0, ptr(&kids[r]), nil); err != nil {
			t.Fatal(err)
		}
	}
	if err := tl.groupEnd(1); err != nil {
		t.Fatal(err)
	}
	if c := tl.comm(t, kids[1]); c.gpu != 4 || c.rank != 1 {
		t.Fatalf("%+v", c)
	}
	tl.fc.fail = errors.New("cuda: cuInit: no CUDA-capable device is detected (CUDA_ERROR_NO_DEVICE)")
	wantResult(t, "no GPU", tl.initAll(ptr(&hs[0]), 1, nil), ncclUnhandledCudaError)
	if hs[0] != nil {
		t.Fatal("handle left after a failed ncclCommInitAll")
	}
}

// ncclCommInitAll makes its ranks as ncclCommInitRank would — a fresh
// unique id, every rank joining concurrently — so its communicators split
// like any other: from one thread per rank, or inside a group.
func TestInitAllThenSplit(t *testing.T) {
	tl := newTestLib(t)
	var mu sync.Mutex
	ids := map[[128]byte][]int{}
	tl.fc.arrived = func(x [128]byte, rank int) {
		mu.Lock()
		ids[x] = append(ids[x], rank)
		mu.Unlock()
	}
	devs := []int32{6, 4, 2, 0}
	hs := make([]unsafe.Pointer, 4)
	if err := tl.initAll(ptr(&hs[0]), 4, ptr(&devs[0])); err != nil {
		t.Fatal(err)
	}
	other := make([]unsafe.Pointer, 2)
	if err := tl.initAll(ptr(&other[0]), 2, nil); err != nil {
		t.Fatal(err)
	}
	if len(ids) != 2 {
		t.Fatalf("two ncclCommInitAll calls joined %d unique ids, want 2 fresh ones", len(ids))
	}
	// One thread per parent rank, blocking.
	colors := []int32{0, 1, 0, ncclSplitNoColor}
	keys := []int32{3, 0, 1, 0}
	kids := make([]unsafe.Pointer, 4)
	var wg sync.WaitGroup
	for r := range 4 {
		wg.Go(func() {
			if err := tl.split(uint64(600+r), hs[r], colors[r], keys[r], ptr(&kids[r]), nil); err != nil {
				t.Error(err)
			}
		})
	}
	wg.Wait()
	if kids[3] != nil {
		t.Fatal("NCCL_SPLIT_NOCOLOR got a communicator")
	}
	want := []struct{ rank, size, gpu int }{{1, 2, 6}, {0, 1, 4}, {0, 2, 2}}
	for r, w := range want {
		if c := tl.comm(t, kids[r]); c.rank != w.rank || c.size != w.size || c.gpu != w.gpu {
			t.Errorf("parent rank %d: rank %d of %d on GPU %d, want %+v", r, c.rank, c.size, c.gpu, w)
		}
	}
	// Split color 0's communicator again, inside a group: one rank each.
	const tid = 99
	tl.groupStart(tid)
	grand := make([]unsafe.Pointer, 2)
	for i, k := range []unsafe.Pointer{kids[2], kids[0]} { // its ranks 0 and 1
		if err := tl.split(tid, k, int32(i), 0, ptr(&grand[i]), nil); err != nil {
			t.Fatal(err)
		}
	}
	if err := tl.groupEnd(tid); err != nil {
		t.Fatal(err)
	}
	for i, gpu := range []int{2, 6} {
		if c := tl.comm(t, grand[i]); c.rank != 0 || c.size != 1 || c.gpu != gpu {
			t.Errorf("grandchild %d: rank %d of %d on GPU %d, want GPU %d alone", i, c.rank, c.size, c.gpu, gpu)
		}
	}
	for _, h := range slices.Concat(hs, other, kids[:3], grand) {
		if err := tl.destroy(h); err != nil {
			t.Fatal(err)
		}
	}
	if tl.handles.live() != 0 {
		t.Fatal("handles left")
	}
}

func TestUnsupported(t *testing.T) {
	tl := newTestLib(t)
	for api := range int32(len(unsupportedAPIs)) {
		err := tl.unsupported(api)
		wantResult(t, unsupportedAPIs[api].fn, err, ncclInvalidUsage)
		if !strings.HasPrefix(err.Error(), unsupportedAPIs[api].fn+": ") || !strings.Contains(err.Error(), "not supported by ringo") {
			t.Errorf("%q", err)
		}
	}
	if err := tl.unsupported(0); !strings.Contains(err.Error(), "ncclGroupSimulateEnd: simulating a group") {
		t.Errorf("ncclGroupSimulateEnd: %q", err)
	}
}

func TestGetUniqueID(t *testing.T) {
	tl := newTestLib(t)
	var x [128]byte
	if err := tl.getUniqueID(ptr(&x)); err != nil || x[0] != 1 || x[2] != 3 {
		t.Fatal(x[:4], err)
	}
	wantResult(t, "NULL", tl.getUniqueID(nil), ncclInvalidArgument)
	tl.newID = func() ([128]byte, error) { return [128]byte{}, errors.New("no interface") }
	wantResult(t, "no network", tl.getUniqueID(ptr(&x)), ncclSystemError)
}
