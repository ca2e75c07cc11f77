package main

import (
	"context"
	"fmt"
	"runtime"
	"slices"
	"sync"
	"testing"
	"time"
	"unsafe"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/ringo-ccl/ringo"
	"github.com/ringo-ccl/ringo/internal/env"
)

// blockingConfig returns an ncclConfig_t with blocking = b, as a C caller
// passes it.
func blockingConfig(b int32) unsafe.Pointer {
	c := cConfig(configSize, versionCode, putI32(cfgOffBlocking, b))
	return unsafe.Pointer(&c[0])
}

// initRankConfig calls ncclCommInitRankConfig for rank of nranks of *x on
// thread tid.
func (tl *testLib) initRankConfig(tid uint64, nranks, rank int32, x *[128]byte, cfg unsafe.Pointer) (unsafe.Pointer, error) {
	var h unsafe.Pointer
	err := tl.library.initRank("ncclCommInitRankConfig", tid, ptr(&h), nranks, rank, ptr(x), cfg)
	return h, err
}

// asyncOf returns ncclCommGetAsyncError's answer for h.
func (tl *testLib) asyncOf(t *testing.T, h unsafe.Pointer) result {
	t.Helper()
	var async int32 = -1
	require.NoError(t, tl.getAsyncError(h, ptr(&async)))
	return result(async)
}

// awaitAsync polls ncclCommGetAsyncError of h, as an application of
// non-blocking communicators does, until it is no longer ncclInProgress,
// and returns it; 10 seconds at most.
func (tl *testLib) awaitAsync(t *testing.T, h unsafe.Pointer) result {
	t.Helper()
	deadline := time.Now().Add(10 * time.Second)
	for {
		if r := tl.asyncOf(t, h); r != ncclInProgress {
			return r
		}
		if time.Now().After(deadline) {
			t.Fatalf("comm %p still ncclInProgress after 10 s", h)
		}
		time.Sleep(time.Millisecond)
	}
}

// within returns call's error, failing the test if call (fn) takes more
// than 10 seconds.
func within(t *testing.T, fn string, call func() error) error {
	t.Helper()
	done := make(chan error, 1)
	go func() { done <- call() }()
	select {
	case err := <-done:
		return err
	case <-time.After(10 * time.Second):
		t.Fatalf("%s still waits after 10 s", fn)
		return nil
	}
}

// noLeak fails the test, when it ends, if goroutines it started outlive it
// (waiting up to 10 seconds for them to end).
func noLeak(t *testing.T) {
	before := runtime.NumGoroutine()
	t.Cleanup(func() {
		deadline := time.Now().Add(10 * time.Second)
		for runtime.NumGoroutine() > before && time.Now().Before(deadline) {
			time.Sleep(time.Millisecond)
		}
		assert.LessOrEqual(t, runtime.NumGoroutine(), before, "goroutines left behind")
	})
}

// nonblockingPair makes a non-blocking communicator of 2 ranks of *x, on
// two threads.
func (tl *testLib) nonblockingPair(t *testing.T, x *[128]byte) []unsafe.Pointer {
	t.Helper()
	hs := make([]unsafe.Pointer, 2)
	for r := range hs {
		hs[r], _ = tl.initRankConfig(uint64(100+r), 2, int32(r), x, blockingConfig(0))
	}
	for _, h := range hs {
		require.Equal(t, ncclSuccess, tl.awaitAsync(t, h))
	}
	return hs
}

// destroyAll destroys hs and checks that nothing is left: no handle, no
// creation.
func (tl *testLib) destroyAll(t *testing.T, hs ...unsafe.Pointer) {
	t.Helper()
	for _, h := range hs {
		require.NoError(t, tl.destroy(h))
	}
	assert.Zero(t, tl.handles.live())
	assert.Zero(t, tl.reg.pendingCount())
}

// A non-blocking init returns ncclInProgress with its handle written;
// ncclCommGetAsyncError says ncclInProgress, and other calls are refused,
// until the other rank has joined; then ncclSuccess. Through the exports,
// ncclInProgress is no error: ncclGetLastError keeps its text.
func TestNonblockingInit(t *testing.T) {
	noLeak(t)
	tl := newTestLib(t)
	useLib(t, tl)
	cfg := blockingConfig(0)
	var h0 unsafe.Pointer
	last := lastError()
	require.Equal(t, ncclInProgress, result(ringoCommInitRankConfig(1, ptr(&h0), 2, ptr(id(60)), 0, cfg)))
	assert.Equal(t, last, lastError(), "ncclInProgress recorded as an error")
	require.NotNil(t, h0, "the handle is written at once")
	assert.Equal(t, ncclInProgress, tl.asyncOf(t, h0))
	var n int32
	err := tl.query("ncclCommCount", h0, ptr(&n), rankComm.Size)
	wantResult(t, "ncclCommCount while being made", err, ncclInvalidArgument)
	assert.ErrorContains(t, err, "still being initialised")
	require.NoError(t, tl.finalize(h0), "ncclCommFinalize has nothing to flush")

	tl.setDev(1)
	h1, err := tl.initRankConfig(2, 2, 1, id(60), cfg) // releases rank 0
	require.NotNil(t, h1)
	assert.Contains(t, []result{ncclInProgress, ncclSuccess}, resultOf(err), "%v", err)
	for r, h := range []unsafe.Pointer{h0, h1} {
		require.Equal(t, ncclSuccess, tl.awaitAsync(t, h), "rank %d", r)
		c := tl.comm(t, h)
		assert.Equal(t, [3]int{r, 2, r}, [3]int{c.rank, c.size, c.gpu})
	}
	tl.destroyAll(t, h0, h1)
}

// NCCL_COMM_BLOCKING overrides config.blocking, for a NULL config too:
// 0 makes a blocking config's init non-blocking, 1 a non-blocking one's
// blocking. Text is an error naming the variable; another number is
// ignored with a warning, as NCCL ignores it.
func TestCommBlockingEnv(t *testing.T) {
	noLeak(t)
	tl := newTestLib(t)

	t.Setenv("NCCL_COMM_BLOCKING", "0")
	h0, err := tl.initRankConfig(1, 2, 0, id(61), blockingConfig(1))
	wantResult(t, "blocking config, NCCL_COMM_BLOCKING=0", err, ncclInProgress)
	var h1 unsafe.Pointer
	err = tl.initRankScalable(2, ptr(&h1), 2, 1, 1, ptr(id(61)), nil)
	assert.Contains(t, []result{ncclInProgress, ncclSuccess}, resultOf(err), "NULL config, NCCL_COMM_BLOCKING=0: %v", err)
	for _, h := range []unsafe.Pointer{h0, h1} {
		require.Equal(t, ncclSuccess, tl.awaitAsync(t, h))
		assert.True(t, mustEntry(t, tl, h).cfg.nonblocking())
		require.NoError(t, tl.destroy(h))
	}

	t.Setenv("NCCL_COMM_BLOCKING", "1")
	hs := make([]unsafe.Pointer, 2)
	var wg sync.WaitGroup
	for r := range 2 {
		wg.Go(func() {
			var err error
			hs[r], err = tl.initRankConfig(uint64(10+r), 2, int32(r), id(62), blockingConfig(0))
			assert.NoError(t, err, "non-blocking config, NCCL_COMM_BLOCKING=1: blocks until made")
		})
	}
	wg.Wait()
	for r, h := range hs {
		assert.Equal(t, r, tl.comm(t, h).rank, "made before the call returned")
		require.NoError(t, tl.destroy(h))
	}

	t.Setenv("NCCL_COMM_BLOCKING", "yes")
	h, err := tl.initRankConfig(1, 1, 0, id(63), nil)
	wantResult(t, "NCCL_COMM_BLOCKING=yes", err, ncclInvalidArgument)
	assert.ErrorContains(t, err, `ncclCommInitRankConfig: NCCL_COMM_BLOCKING="yes": want 0 (non-blocking) or 1 (blocking)`)
	assert.Nil(t, h)

	var warnings []string
	t.Cleanup(env.SetWarnings(func(msg string) { warnings = append(warnings, msg) }))
	t.Setenv("NCCL_COMM_BLOCKING", "2")
	h, err = tl.initRankConfig(1, 1, 0, id(63), nil)
	require.NoError(t, err, "NCCL_COMM_BLOCKING=2 is ignored: the default config blocks")
	assert.Equal(t, []string{`ringo WARN NCCL_COMM_BLOCKING="2": not 0 or 1 (NCCL ignores it too); using the config's blocking`}, warnings)
	tl.destroyAll(t, h)
}

// A non-blocking init that fails keeps its handle, whose async state is
// the failure, with its text; a lonely rank's, ringo's timeout.
func TestNonblockingInitFails(t *testing.T) {
	noLeak(t)
	tl := newTestLib(t)
	tl.fc.fail = fmt.Errorf("%w: this build has no GPU support", ringo.ErrNotSupported)
	h0, err := tl.initRankConfig(1, 2, 0, id(64), blockingConfig(0))
	wantResult(t, "non-blocking rank 0", err, ncclInProgress)
	_, err = tl.initRankConfig(2, 2, 1, id(64), nil) // blocking: ringo's error at once
	wantResult(t, "blocking rank 1", err, ncclInvalidUsage)
	assert.Equal(t, ncclInvalidUsage, tl.awaitAsync(t, h0))
	assert.Contains(t, tl.lastErr[len(tl.lastErr)-1], "no GPU support")
	wantResult(t, "a call on the failed handle", tl.collective(apiAllReduce, nil, nil, 1, 7, 0, 0, h0, nil), ncclInvalidUsage)
	require.NoError(t, tl.destroy(h0))

	tl.fc.fail = nil
	tl.setTimeout(30 * time.Millisecond)
	h, err := tl.initRankConfig(1, 2, 0, id(65), blockingConfig(0))
	wantResult(t, "lonely rank", err, ncclInProgress)
	assert.Equal(t, ncclSystemError, tl.awaitAsync(t, h))
	assert.Contains(t, tl.lastErr[len(tl.lastErr)-1], "ranks [1] never joined")
	tl.destroyAll(t, h)
}

// ncclCommSplit, ncclCommShrink and ncclCommGrow of a non-blocking
// communicator (its config passed, or its parent's inherited) return
// ncclInProgress with the new handle written; it, and its parent, say
// ncclInProgress until every rank has called, the parent refusing calls.
func TestNonblockingSplitShrinkGrow(t *testing.T) {
	noLeak(t)
	tl := newTestLib(t)
	parent := tl.initGroup(t, id(66), 0, 1)
	kids := make([]unsafe.Pointer, 2)
	err := tl.split(1, parent[0], 0, 0, ptr(&kids[0]), blockingConfig(0))
	wantResult(t, "split of rank 0", err, ncclInProgress)
	require.NotNil(t, kids[0])
	assert.Equal(t, ncclInProgress, tl.asyncOf(t, kids[0]))
	assert.Equal(t, ncclInProgress, tl.asyncOf(t, parent[0]), "the parent, while its split runs")
	err = tl.collective(apiAllReduce, nil, nil, 1, 7, 0, 0, parent[0], nil)
	wantResult(t, "a collective on the splitting parent", err, ncclInvalidArgument)
	assert.ErrorContains(t, err, "busy with a non-blocking call")
	err = tl.split(2, parent[1], 0, 0, ptr(&kids[1]), blockingConfig(0))
	assert.Contains(t, []result{ncclInProgress, ncclSuccess}, resultOf(err), "%v", err)
	for r := range 2 {
		require.Equal(t, ncclSuccess, tl.awaitAsync(t, kids[r]))
		require.Equal(t, ncclSuccess, tl.awaitAsync(t, parent[r]))
		assert.Equal(t, [2]int{r, 2}, [2]int{tl.comm(t, kids[r]).rank, tl.comm(t, kids[r]).size})
	}

	// The kids are non-blocking: their shrink, without a config, too.
	shrunk := make([]unsafe.Pointer, 2)
	for r := range 2 {
		err := tl.shrink(uint64(r), kids[r], nil, 0, ptr(&shrunk[r]), nil, ncclShrinkDefault)
		assert.Contains(t, []result{ncclInProgress, ncclSuccess}, resultOf(err), "%v", err)
		if r == 0 {
			wantResult(t, "shrink of rank 0", err, ncclInProgress)
		}
	}
	for r := range 2 {
		require.Equal(t, ncclSuccess, tl.awaitAsync(t, shrunk[r]))
		assert.Equal(t, [2]int{r, 2}, [2]int{tl.comm(t, shrunk[r]).rank, tl.comm(t, shrunk[r]).size})
	}

	// Grow the shrunk communicator by a new rank, non-blocking everywhere.
	var gid ringo.UniqueID
	require.NoError(t, tl.commGetUniqueID(shrunk[0], ptr(&gid)))
	grown := make([]unsafe.Pointer, 3)
	err = tl.grow(1, shrunk[0], 3, ptr(&gid), -1, ptr(&grown[0]), nil)
	wantResult(t, "grow of rank 0", err, ncclInProgress)
	err = tl.grow(2, shrunk[1], 3, nil, -1, ptr(&grown[1]), nil)
	wantResult(t, "grow of rank 1", err, ncclInProgress)
	tl.setDev(7)
	err = tl.grow(3, nil, 3, ptr(&gid), 2, ptr(&grown[2]), blockingConfig(0))
	assert.Contains(t, []result{ncclInProgress, ncclSuccess}, resultOf(err), "%v", err)
	for r, gpu := range []int{0, 1, 7} {
		require.Equal(t, ncclSuccess, tl.awaitAsync(t, grown[r]))
		c := tl.comm(t, grown[r])
		assert.Equal(t, [3]int{r, 3, gpu}, [3]int{c.rank, c.size, c.gpu})
	}
	tl.destroyAll(t, slices.Concat(grown, shrunk, kids, parent)...)
}

// A group of non-blocking inits — one of whose ranks comes from another
// thread later — and sends and receives on a non-blocking communicator:
// ncclGroupEnd returns ncclInProgress; every communicator of the group
// says ncclInProgress until all of it is done, the sends and receives last.
func TestNonblockingGroup(t *testing.T) {
	noLeak(t)
	tl := newTestLib(t)
	cfg := blockingConfig(0)
	pair := tl.nonblockingPair(t, id(67))

	const tid = 9
	tl.groupStart(tid)
	a0, err := tl.initRankConfig(tid, 2, 0, id(68), cfg) // rank 1 comes later
	require.NoError(t, err, "inside a group: ncclSuccess, as NCCL's")
	var b [2]unsafe.Pointer
	for r := range 2 {
		b[r], err = tl.initRankConfig(tid, 2, int32(r), id(69), cfg)
		require.NoError(t, err)
	}
	require.NoError(t, tl.send(tid, 0x1000, 4, 1, pair[0], 0))
	require.NoError(t, tl.recv(tid, 0x2000, 4, 0, pair[1], 0))
	wantResult(t, "ncclGroupEnd", tl.groupEnd(tid), ncclInProgress)
	group := []unsafe.Pointer{a0, b[0], b[1], pair[0], pair[1]}
	for _, h := range group {
		assert.Equal(t, ncclInProgress, tl.asyncOf(t, h))
	}
	runs, _ := tl.fp.snapshot()
	assert.Empty(t, runs, "the sends ran before the group's creations")
	wantResult(t, "a send on a communicator of the running group", tl.send(1, 0x1000, 4, 1, pair[0], 0), ncclInvalidArgument)

	a1, err := tl.initRankConfig(2, 2, 1, id(68), cfg)
	assert.Contains(t, []result{ncclInProgress, ncclSuccess}, resultOf(err), "%v", err)
	for _, h := range append(group, a1) {
		require.Equal(t, ncclSuccess, tl.awaitAsync(t, h))
	}
	runs, _ = tl.fp.snapshot()
	require.Len(t, runs, 1)
	assert.Len(t, runs[0], 2)
	tl.destroyAll(t, append(group, a1)...)
}

// The failure of a background group's sends and receives, or a panic in
// them, becomes the async error of the communicators they ran on; each
// created handle holds its own outcome, as does a panic in its creation.
func TestNonblockingGroupFails(t *testing.T) {
	noLeak(t)
	tl := newTestLib(t)
	cfg := blockingConfig(0)
	pair := tl.nonblockingPair(t, id(70))
	group := func(x *[128]byte) unsafe.Pointer {
		t.Helper()
		tl.groupStart(1)
		h, err := tl.initRankConfig(1, 1, 0, x, cfg)
		require.NoError(t, err)
		require.NoError(t, tl.send(1, 0x1000, 4, 1, pair[0], 0))
		wantResult(t, "ncclGroupEnd", tl.groupEnd(1), ncclInProgress)
		return h
	}

	tl.fp.err = fmt.Errorf("sendrecv rank 0: %w: rank 1 exited", ringo.ErrPeerLost)
	h := group(id(71))
	assert.Equal(t, ncclRemoteError, tl.awaitAsync(t, pair[0]))
	assert.Contains(t, tl.lastErr[len(tl.lastErr)-1], "rank 1 exited")
	assert.Equal(t, ncclSuccess, tl.awaitAsync(t, h), "a creation that succeeded")
	assert.Equal(t, ncclSuccess, tl.asyncOf(t, pair[1]), "a communicator without sends in the group")
	for _, h := range append(pair, h) {
		require.NoError(t, tl.destroy(h))
	}

	tl.fc.panic = "join exploded"
	h, _ = tl.initRankConfig(1, 1, 0, id(72), cfg)
	require.Equal(t, ncclInternalError, tl.awaitAsync(t, h), "a panic in a background creation")
	assert.Contains(t, tl.lastErr[len(tl.lastErr)-1], "join exploded")
	require.NoError(t, tl.destroy(h))
	tl.fc.panic = nil

	pair = tl.nonblockingPair(t, id(73))
	tl.sendRecv = func(context.Context, []p2pPart) error { panic("sendrecv exploded") }
	h = group(id(74))
	assert.Equal(t, ncclInternalError, tl.awaitAsync(t, pair[0]))
	assert.Contains(t, tl.lastErr[len(tl.lastErr)-1], "sendrecv exploded")
	assert.Equal(t, ncclSuccess, tl.awaitAsync(t, h))
	tl.destroyAll(t, append(pair, h)...)
}

// Blocking and non-blocking communicators in one group: the call that
// brings the second kind fails with NCCL's ncclInvalidArgument, its
// handle NULL, and so does the group's end, which runs none of its sends
// and receives; the creations it holds still run, in the group's mode.
func TestMixedGroup(t *testing.T) {
	noLeak(t)
	tl := newTestLib(t)
	blocking := tl.initGroup(t, id(75), 0, 0)
	const mixed = "Blocking and nonblocking communicators are not allowed in the same group"

	tl.groupStart(1)
	nb, err := tl.initRankConfig(1, 1, 0, id(76), blockingConfig(0))
	require.NoError(t, err)
	h, err := tl.initRankConfig(1, 1, 0, id(77), nil)
	wantResult(t, "a blocking init after a non-blocking one", err, ncclInvalidArgument)
	assert.ErrorContains(t, err, "ncclCommInitRankConfig: "+mixed+" (this communicator is blocking, the group's are non-blocking)")
	assert.Nil(t, h)
	err = tl.send(1, 0x1000, 4, 1, blocking[0], 0)
	wantResult(t, "a send on a blocking communicator", err, ncclInvalidArgument)
	assert.ErrorContains(t, err, "ncclSend: "+mixed)
	err = tl.groupEnd(1)
	wantResult(t, "the group's end", err, ncclInvalidArgument)
	assert.ErrorContains(t, err, mixed)
	assert.Equal(t, ncclSuccess, tl.awaitAsync(t, nb), "the group's non-blocking init")

	tl.groupStart(1)
	require.NoError(t, tl.send(1, 0x1000, 4, 1, blocking[0], 0))
	h, err = tl.initRankConfig(1, 1, 0, id(78), blockingConfig(0))
	wantResult(t, "a non-blocking init after a blocking send", err, ncclInvalidArgument)
	assert.ErrorContains(t, err, mixed+" (this communicator is non-blocking, the group's are blocking)")
	assert.Nil(t, h)
	err = tl.groupEnd(1)
	wantResult(t, "the group's end", err, ncclInvalidArgument)
	assert.ErrorContains(t, err, "none of the group's 1 sends and receives ran")
	runs, _ := tl.fp.snapshot()
	assert.Empty(t, runs)

	tl.destroyAll(t, append(blocking, nb)...)
}

// ncclCommAbort of a communicator whose non-blocking creation waits, with
// no timeout, for a rank that never comes: the creation is cut short, the
// abort returns, the handle is gone. ncclCommDestroy waits for it instead,
// bounded by the timeout.
func TestNonblockingAbort(t *testing.T) {
	noLeak(t)
	tl := newTestLib(t)
	tl.setTimeout(0)
	joined := make(chan struct{}, 1)
	tl.fc.arrived = func([128]byte, int) { joined <- struct{}{} }
	h, err := tl.initRankConfig(1, 2, 0, id(79), blockingConfig(0))
	wantResult(t, "lonely rank", err, ncclInProgress)
	<-joined // the creation is under way: it waits in join for rank 1
	require.NoError(t, within(t, "ncclCommAbort", func() error { return tl.abort(h) }))
	_, err = tl.handles.lookup("test", h)
	wantResult(t, "the aborted handle", err, ncclInvalidArgument)
	tl.destroyAll(t)

	tl = newTestLib(t)
	tl.setTimeout(30 * time.Millisecond)
	h, err = tl.initRankConfig(1, 2, 0, id(80), blockingConfig(0))
	wantResult(t, "lonely rank", err, ncclInProgress)
	tl.destroyAll(t, h)
}
