package main

import (
	"fmt"
	"reflect"
	"strings"
	"sync"
	"testing"
	"time"
	"unsafe"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/ringo-ccl/ringo"
)

// initRank calls ncclCommInitRank for rank of nranks of *x on thread tid.
func (tl *testLib) initRank(tid uint64, nranks, rank int32, x *[128]byte) (unsafe.Pointer, error) {
	var h unsafe.Pointer
	err := tl.library.initRank("ncclCommInitRank", tid, ptr(&h), nranks, rank, ptr(x), nil)
	return h, err
}

// Ranks on their own threads, outside groups: each call blocks in join
// until all have joined, and one communicator is made.
func TestInitRankThreads(t *testing.T) {
	tl := newTestLib(t)
	const n = 4
	hs := make([]unsafe.Pointer, n)
	var wg sync.WaitGroup
	errs := make([]error, n)
	for r := range n {
		wg.Go(func() { hs[r], errs[r] = tl.initRank(uint64(100+r), n, int32(r), id(1)) })
	}
	wg.Wait()
	for r := range n {
		if errs[r] != nil {
			t.Fatalf("rank %d: %v", r, errs[r])
		}
		var got int32
		if err := tl.query("ncclCommUserRank", hs[r], ptr(&got), rankComm.Rank); err != nil || got != int32(r) {
			t.Fatalf("handle of rank %d has rank %d, %v", r, got, err)
		}
		if err := tl.query("ncclCommCount", hs[r], ptr(&got), rankComm.Size); err != nil || got != n {
			t.Fatalf("rank %d: count %d, %v", r, got, err)
		}
	}
	if calls := tl.fc.snapshot(); len(calls) != 1 || len(calls[0]) != n {
		t.Fatalf("created %v, want one communicator of %d ranks", calls, n)
	}
	if tl.reg.pendingCount() != 0 {
		t.Fatal("a creation is left pending")
	}
}

// nccl-tests' pattern: one thread, one group, each rank after
// cudaSetDevice, in any order. Handles come back at once; the ranks join at
// ncclGroupEnd, concurrently, over the devices in rank order.
func TestInitRankGroup(t *testing.T) {
	tl := newTestLib(t)
	const tid = 7
	tl.groupStart(tid)
	hs := map[int32]unsafe.Pointer{}
	for _, r := range []int32{2, 0, 1} {
		tl.setDev(int(r) + 3)
		h, err := tl.initRank(tid, 3, r, id(2))
		if err != nil || h == nil {
			t.Fatalf("rank %d in a group: %p, %v", r, h, err)
		}
		hs[r] = h
	}
	if calls := tl.fc.snapshot(); len(calls) != 0 {
		t.Fatalf("created %v before ncclGroupEnd", calls)
	}
	var async int32
	if err := tl.getAsyncError(hs[0], ptr(&async)); err != nil || result(async) != ncclInProgress {
		t.Fatalf("async state before ncclGroupEnd: %v, %v; want ncclInProgress", result(async), err)
	}
	var n int32
	wantResult(t, "ncclCommCount before ncclGroupEnd", tl.query("ncclCommCount", hs[0], ptr(&n), rankComm.Size), ncclInvalidArgument)
	if err := tl.groupEnd(tid); err != nil {
		t.Fatal(err)
	}
	if calls := tl.fc.snapshot(); !reflect.DeepEqual(calls, [][]int{{3, 4, 5}}) {
		t.Fatalf("created %v, want [[3 4 5]]", calls)
	}
	for r, h := range hs {
		if c := tl.comm(t, h); c.rank != int(r) || c.gpu != int(r)+3 {
			t.Fatalf("handle of rank %d holds rank %d on GPU %d", r, c.rank, c.gpu)
		}
		if err := tl.getAsyncError(h, ptr(&async)); err != nil || result(async) != ncclSuccess {
			t.Fatalf("async state after ncclGroupEnd: %v, %v", result(async), err)
		}
	}
}

// Groups nest: only the outermost end creates.
func TestGroupNesting(t *testing.T) {
	tl := newTestLib(t)
	const tid = 9
	tl.groupStart(tid)
	tl.groupStart(tid)
	for r := range int32(2) {
		if _, err := tl.initRank(tid, 2, r, id(3)); err != nil {
			t.Fatal(err)
		}
	}
	tl.groupStart(tid)
	if err := tl.groupEnd(tid); err != nil {
		t.Fatal(err)
	}
	if err := tl.groupEnd(tid); err != nil {
		t.Fatal(err)
	}
	if n := len(tl.fc.snapshot()); n != 0 {
		t.Fatalf("created %d communicators before the outermost ncclGroupEnd", n)
	}
	if !tl.reg.inGroup(tid) {
		t.Fatal("the outer group is closed")
	}
	if err := tl.groupEnd(tid); err != nil {
		t.Fatal(err)
	}
	if n := len(tl.fc.snapshot()); n != 1 {
		t.Fatalf("created %d communicators at the outermost ncclGroupEnd, want 1", n)
	}
	wantResult(t, "unmatched ncclGroupEnd", tl.groupEnd(tid), ncclInvalidUsage)
	// Groups are per thread: another thread's end does not close this one's.
	tl.groupStart(tid)
	wantResult(t, "ncclGroupEnd on another thread", tl.groupEnd(tid+1), ncclInvalidUsage)
	if err := tl.groupEnd(tid); err != nil {
		t.Fatal(err)
	}
}

// Two communicators in one group.
func TestGroupTwoIDs(t *testing.T) {
	tl := newTestLib(t)
	const tid = 11
	tl.groupStart(tid)
	for _, x := range []*[128]byte{id(4), id(5)} {
		for r := range int32(2) {
			tl.setDev(int(x[0])*10 + int(r))
			if _, err := tl.initRank(tid, 2, r, x); err != nil {
				t.Fatal(err)
			}
		}
	}
	if err := tl.groupEnd(tid); err != nil {
		t.Fatal(err)
	}
	// The two communicators are made concurrently, in either order.
	calls := tl.fc.snapshot()
	if !reflect.DeepEqual(calls, [][]int{{40, 41}, {50, 51}}) && !reflect.DeepEqual(calls, [][]int{{50, 51}, {40, 41}}) {
		t.Fatalf("created %v", calls)
	}
}

// The outermost ncclGroupEnd runs its deferred creations concurrently: a
// join returns only once every rank of its id has joined, so running them
// one after another would never end (there is no timeout here).
func TestGroupInitsConcurrent(t *testing.T) {
	tl := newTestLib(t)
	tl.setTimeout(0)
	var mu sync.Mutex
	arrived := map[byte]int{}
	tl.fc.arrived = func(id [128]byte, rank int) {
		mu.Lock()
		arrived[id[0]]++
		mu.Unlock()
	}
	const tid = 13
	tl.groupStart(tid)
	hs := map[[2]int]unsafe.Pointer{}
	for _, r := range []int32{2, 0, 1} {
		for _, x := range []*[128]byte{id(31), id(32)} {
			tl.setDev(int(x[0])*10 + int(r))
			h, err := tl.initRank(tid, 3, r, x)
			if err != nil {
				t.Fatal(err)
			}
			hs[[2]int{int(x[0]), int(r)}] = h
		}
	}
	done := make(chan error, 1)
	go func() { done <- tl.groupEnd(tid) }()
	select {
	case err := <-done:
		if err != nil {
			t.Fatal(err)
		}
	case <-time.After(10 * time.Second):
		t.Fatal("ncclGroupEnd hangs: its deferred ranks do not join concurrently")
	}
	if arrived[31] != 3 || arrived[32] != 3 {
		t.Fatalf("joins per id: %v", arrived)
	}
	for k, h := range hs {
		if c := tl.comm(t, h); c.rank != k[1] || c.size != 3 || c.gpu != k[0]*10+k[1] {
			t.Errorf("id %d rank %d: rank %d of %d on GPU %d", k[0], k[1], c.rank, c.size, c.gpu)
		}
	}
	if tl.reg.pendingCount() != 0 {
		t.Fatal("creations left pending")
	}
}

// A rank initialised inside one thread's group and another blocking on its
// own thread meet at the group's end.
func TestGroupAndBlockingThread(t *testing.T) {
	tl := newTestLib(t)
	tl.groupStart(1)
	h0, err := tl.initRank(1, 2, 0, id(6))
	if err != nil {
		t.Fatal(err)
	}
	done := make(chan error, 1)
	go func() {
		_, err := tl.initRank(2, 2, 1, id(6))
		done <- err
	}()
	select {
	case err := <-done:
		t.Fatalf("rank 1 returned (%v) before rank 0's group ended", err)
	case <-time.After(50 * time.Millisecond):
	}
	if err := tl.groupEnd(1); err != nil {
		t.Fatal(err)
	}
	if err := <-done; err != nil {
		t.Fatal(err)
	}
	if tl.comm(t, h0).rank != 0 {
		t.Fatal("wrong rank")
	}
}

// Ranks that never come (in this process or another): after the timeout
// the caller gets ringo's error, naming them, mapped to ncclSystemError,
// and nothing is left behind.
func TestMissingRanksTimeout(t *testing.T) {
	tl := newTestLib(t)
	tl.setTimeout(30 * time.Millisecond)
	start := time.Now()
	h, err := tl.initRank(1, 3, 0, id(7))
	wantResult(t, "lonely rank", err, ncclSystemError)
	if time.Since(start) < 30*time.Millisecond {
		t.Fatal("gave up before the timeout")
	}
	for _, want := range []string{"ncclCommInitRank: rank 0 of the 3-rank communicator", "ranks [1 2] never joined", "RINGO_TIMEOUT"} {
		if !strings.Contains(err.Error(), want) {
			t.Errorf("error %q does not mention %q", err, want)
		}
	}
	if strings.Contains(err.Error(), "not supported") {
		t.Errorf("error %q says something is not supported", err)
	}
	if h != nil || tl.handles.live() != 0 || tl.reg.pendingCount() != 0 {
		t.Fatalf("left handle %p, %d live handles, %d pending", h, tl.handles.live(), tl.reg.pendingCount())
	}
	// The id can be used again.
	tl.setTimeout(5 * time.Second)
	var wg sync.WaitGroup
	for r := range int32(3) {
		wg.Go(func() {
			if _, err := tl.initRank(uint64(10+r), 3, r, id(7)); err != nil {
				t.Error(err)
			}
		})
	}
	wg.Wait()
}

// The same inside a group: the handle was handed out, so it stays, failed.
func TestMissingRanksGroupTimeout(t *testing.T) {
	tl := newTestLib(t)
	tl.setTimeout(20 * time.Millisecond)
	tl.groupStart(3)
	h, err := tl.initRank(3, 2, 0, id(8))
	if err != nil || h == nil {
		t.Fatal(h, err)
	}
	err = tl.groupEnd(3)
	wantResult(t, "group end", err, ncclSystemError)
	if !strings.Contains(err.Error(), "ranks [1] never joined") {
		t.Errorf("error %q does not name rank 1", err)
	}
	var async int32
	if err := tl.getAsyncError(h, ptr(&async)); err != nil || result(async) != ncclSystemError {
		t.Fatalf("async state of the failed handle: %v, %v", result(async), err)
	}
	wantResult(t, "collective on a failed handle", tl.collective(0, nil, nil, 1, 7, 0, 0, h, nil), ncclSystemError)
	if err := tl.destroy(h); err != nil {
		t.Fatal(err)
	}
	if tl.handles.live() != 0 || tl.reg.pendingCount() != 0 {
		t.Fatal("left state behind")
	}
}

// A missing rank held back inside another thread's open group is named as
// such.
func TestMissingRanksWaitingForGroup(t *testing.T) {
	tl := newTestLib(t)
	tl.setTimeout(20 * time.Millisecond)
	tl.groupStart(5)
	if _, err := tl.initRank(5, 2, 1, id(9)); err != nil {
		t.Fatal(err)
	}
	_, err := tl.initRank(6, 2, 0, id(9))
	wantResult(t, "rank 0", err, ncclSystemError)
	if !strings.Contains(err.Error(), "ranks [1] were initialised inside a ncclGroupStart") {
		t.Errorf("error %q", err)
	}
	// The group's end now waits for rank 0, which gave up.
	err = tl.groupEnd(5)
	wantResult(t, "group end", err, ncclSystemError)
	if !strings.Contains(err.Error(), "ranks [0] never joined") || strings.Contains(err.Error(), "ncclGroupStart") {
		t.Errorf("error %q", err)
	}
}

func TestInitRankArguments(t *testing.T) {
	tl := newTestLib(t)
	h := unsafe.Pointer(&tl) // must be overwritten with NULL
	x := id(10)
	cases := []struct {
		name         string
		out          unsafe.Pointer
		nranks, rank int32
		want         string
	}{
		{"NULL comm", nil, 1, 0, "NULL"},
		{"nranks 0", ptr(&h), 0, 0, "nranks 0"},
		{"nranks -1", ptr(&h), -1, 0, "nranks -1"},
		{"rank -1", ptr(&h), 2, -1, "rank -1"},
		{"rank 2 of 2", ptr(&h), 2, 2, "rank 2"},
	}
	for _, c := range cases {
		err := tl.library.initRank("ncclCommInitRank", 1, c.out, c.nranks, c.rank, ptr(x), nil)
		wantResult(t, c.name, err, ncclInvalidArgument)
		if !strings.Contains(err.Error(), c.want) || !strings.HasPrefix(err.Error(), "ncclCommInitRank: ") {
			t.Errorf("%s: %q", c.name, err)
		}
		if c.out != nil && h != nil {
			t.Errorf("%s: *comm not set to NULL", c.name)
		}
	}
	if len(tl.fc.snapshot()) != 0 || tl.handles.live() != 0 {
		t.Fatal("bad arguments made something")
	}
	// A bad config.
	b := cConfig(configSize, versionCode, putI32(cfgOffBlocking, 5))
	err := tl.library.initRank("ncclCommInitRankConfig", 1, ptr(&h), 1, 0, ptr(x), unsafe.Pointer(&b[0]))
	wantResult(t, "bad config", err, ncclInvalidArgument)
	// ncclCommInitRankScalable takes one id.
	wantResult(t, "scalable nId 2", tl.initRankScalable(1, ptr(&h), 2, 0, 2, ptr(x), nil), ncclInvalidUsage)
	wantResult(t, "scalable nId 0", tl.initRankScalable(1, ptr(&h), 2, 0, 0, ptr(x), nil), ncclInvalidArgument)
	wantResult(t, "scalable NULL ids", tl.initRankScalable(1, ptr(&h), 2, 0, 1, nil, nil), ncclInvalidArgument)
	if err := tl.initRankScalable(1, ptr(&h), 1, 0, 1, ptr(x), nil); err != nil || h == nil {
		t.Fatalf("scalable with one id: %v", err)
	}
}

func TestDuplicateRankAndMismatch(t *testing.T) {
	tl := newTestLib(t)
	tl.groupStart(1)
	if _, err := tl.initRank(1, 2, 0, id(11)); err != nil {
		t.Fatal(err)
	}
	_, err := tl.initRank(1, 2, 0, id(11))
	wantResult(t, "rank 0 twice", err, ncclInvalidArgument)
	_, err = tl.initRank(1, 3, 1, id(11))
	wantResult(t, "nranks 3 after 2", err, ncclInvalidArgument)
	if !strings.Contains(err.Error(), "nranks 3 differs") {
		t.Errorf("%q", err)
	}
	if _, err := tl.initRank(1, 2, 1, id(11)); err != nil {
		t.Fatal(err)
	}
	if err := tl.groupEnd(1); err != nil {
		t.Fatal(err)
	}
	if tl.handles.live() != 2 {
		t.Fatalf("%d live handles, want 2", tl.handles.live())
	}
}

// ringo's failure reaches every rank, mapped.
func TestCreateFails(t *testing.T) {
	tl := newTestLib(t)
	tl.fc.fail = fmt.Errorf("%w: this build has no GPU support", ringo.ErrNotSupported)
	var wg sync.WaitGroup
	for r := range int32(2) {
		wg.Go(func() {
			h, err := tl.initRank(uint64(r), 2, r, id(12))
			wantResult(t, "create fails", err, ncclInvalidUsage)
			if h != nil {
				t.Error("handle of a failed creation")
			}
		})
	}
	wg.Wait()
	if tl.handles.live() != 0 {
		t.Fatal("handles left")
	}
}

// A panic in ringo while creating fails the ranks; nobody hangs.
func TestCreatePanics(t *testing.T) {
	tl := newTestLib(t)
	tl.fc.panic = "boom"
	tl.groupStart(1)
	hs := make([]unsafe.Pointer, 2)
	for r := range int32(2) {
		hs[r], _ = tl.initRank(1, 2, r, id(13))
	}
	err := tl.groupEnd(1)
	wantResult(t, "panic", err, ncclInternalError)
	if !strings.Contains(err.Error(), "boom") {
		t.Errorf("%q", err)
	}
	var async int32
	tl.getAsyncError(hs[1], ptr(&async))
	if result(async) != ncclInternalError {
		t.Fatalf("rank 1's async state %v", result(async))
	}
}

// Destroying a handle while its rank is being made waits for it, then
// closes it.
func TestDestroyWhileCreating(t *testing.T) {
	tl := newTestLib(t)
	joined := make(chan struct{}, 2)
	tl.fc.arrived = func([128]byte, int) { joined <- struct{}{} }
	tl.groupStart(1)
	h, err := tl.initRank(1, 2, 0, id(33))
	if err != nil {
		t.Fatal(err)
	}
	ended := make(chan error, 1)
	go func() { ended <- tl.groupEnd(1) }()
	<-joined // rank 0 waits in join for rank 1
	destroyed := make(chan error, 1)
	go func() { destroyed <- tl.destroy(h) }()
	select {
	case err := <-destroyed:
		t.Fatalf("ncclCommDestroy returned (%v) while its rank was being made", err)
	case <-time.After(50 * time.Millisecond):
	}
	if _, err := tl.initRank(2, 2, 1, id(33)); err != nil {
		t.Fatal(err)
	}
	if err := <-ended; err != nil {
		t.Fatal(err)
	}
	if err := <-destroyed; err != nil {
		t.Fatal(err)
	}
	if made := tl.fc.made[0]; !made[0].closed || made[1].closed {
		t.Fatalf("closed: rank 0 %v, rank 1 %v; want rank 0 only", made[0].closed, made[1].closed)
	}
	if tl.handles.live() != 1 || tl.reg.pendingCount() != 0 {
		t.Fatalf("%d live handles, %d pending", tl.handles.live(), tl.reg.pendingCount())
	}
}

// Aborting a handle while its rank is being made cancels the creation:
// the abort returns without waiting for the rank that never comes, and the
// group's end waiting for it fails.
func TestAbortWhileCreating(t *testing.T) {
	tl := newTestLib(t)
	tl.setTimeout(0)
	joined := make(chan struct{}, 1)
	tl.fc.arrived = func([128]byte, int) { joined <- struct{}{} }
	tl.groupStart(1)
	h, err := tl.initRank(1, 2, 0, id(34))
	require.NoError(t, err)
	ended := make(chan error, 1)
	go func() { ended <- tl.groupEnd(1) }()
	<-joined // rank 0 waits in join for rank 1, which never comes
	require.NoError(t, within(t, "ncclCommAbort", func() error { return tl.abort(h) }))
	err = within(t, "ncclGroupEnd", func() error { return <-ended })
	wantResult(t, "the group's end", err, ncclSystemError)
	assert.ErrorContains(t, err, "ranks [1] never joined")
	assert.Zero(t, tl.handles.live())
	assert.Zero(t, tl.reg.pendingCount())
}

// Destroying a handle whose group never ended withdraws it.
func TestDestroyPending(t *testing.T) {
	tl := newTestLib(t)
	tl.groupStart(1)
	h, err := tl.initRank(1, 1, 0, id(14))
	if err != nil {
		t.Fatal(err)
	}
	if err := tl.destroy(h); err != nil {
		t.Fatal(err)
	}
	if tl.reg.pendingCount() != 0 {
		t.Fatal("creation left pending")
	}
	if err := tl.groupEnd(1); err != nil {
		t.Fatalf("group end after its only rank was destroyed: %v", err)
	}
	if len(tl.fc.snapshot()) != 0 {
		t.Fatal("created a destroyed rank's communicator")
	}
}

// TestDestroyBroken: destroying a communicator that a lost peer had
// already broken succeeds — its rank's resources are released; what the
// close could not do with the dead (its last barrier) is the loss the
// application already knows — as NCCL's does, whereas PyTorch spent 4–7 s
// formatting the warning of a failed destroy during a shrink. A healthy
// communicator's failed close is still an error.
func TestDestroyBroken(t *testing.T) {
	tl := newTestLib(t)
	hs := tl.initGroup(t, id(15), 0, 0)
	lost := fmt.Errorf("rank 1 lost: %w", ringo.ErrPeerLost)
	for r, h := range hs {
		c := tl.comm(t, h)
		c.mu.Lock()
		c.closeErr = fmt.Errorf("bootstrap barrier rank %d: %w", r, lost)
		if r == 0 {
			c.err = lost // broken before the destroy
		}
		c.mu.Unlock()
	}
	require.NoError(t, tl.destroy(hs[0]), "destroying a communicator broken by a lost peer")
	err := tl.destroy(hs[1])
	require.Error(t, err, "a healthy communicator whose close failed")
	assert.Contains(t, err.Error(), "bootstrap barrier rank 1")
}

// initGroup makes an n-rank communicator in one group, rank r on device
// devs[r], and returns its handles.
func (tl *testLib) initGroup(t *testing.T, x *[128]byte, devs ...int) []unsafe.Pointer {
	t.Helper()
	const tid = 424242
	tl.groupStart(tid)
	hs := make([]unsafe.Pointer, len(devs))
	for r, d := range devs {
		tl.setDev(d)
		var err error
		if hs[r], err = tl.initRank(tid, int32(len(devs)), int32(r), x); err != nil {
			t.Fatal(err)
		}
	}
	if err := tl.groupEnd(tid); err != nil {
		t.Fatal(err)
	}
	return hs
}

// ncclCommSplit inside a group: every parent rank's Split runs at the
// group's end, concurrently; members ordered by (key, parent rank), one
// communicator per color, NCCL_SPLIT_NOCOLOR gets NULL.
func TestSplitGroup(t *testing.T) {
	tl := newTestLib(t)
	parent := tl.initGroup(t, id(15), 10, 11, 12, 13)
	colors := []int32{1, 0, 1, ncclSplitNoColor}
	keys := []int32{5, 0, 2, 0}
	const tid = 77
	tl.groupStart(tid)
	kids := make([]unsafe.Pointer, 4)
	for r := range 4 {
		if err := tl.split(tid, parent[r], colors[r], keys[r], ptr(&kids[r]), nil); err != nil {
			t.Fatal(err)
		}
	}
	if err := tl.groupEnd(tid); err != nil {
		t.Fatal(err)
	}
	calls := tl.fc.snapshot()[1:]
	if !reflect.DeepEqual(calls, [][]int{{11}, {12, 10}}) {
		t.Fatalf("split created %v, want [[11] [12 10]] (color 0, then color 1 by key)", calls)
	}
	if kids[3] != nil {
		t.Fatal("NCCL_SPLIT_NOCOLOR got a communicator")
	}
	want := []struct{ rank, size, gpu int }{{1, 2, 10}, {0, 1, 11}, {0, 2, 12}}
	for r, w := range want {
		c := tl.comm(t, kids[r])
		if c.rank != w.rank || c.size != w.size || c.gpu != w.gpu {
			t.Errorf("parent rank %d: new rank %d of %d on GPU %d, want %+v", r, c.rank, c.size, c.gpu, w)
		}
	}
	// A second split of the same parent is a new collective.
	tl.groupStart(tid)
	for r := range 4 {
		if err := tl.split(tid, parent[r], 0, int32(-r), ptr(&kids[r]), nil); err != nil {
			t.Fatal(err)
		}
	}
	if err := tl.groupEnd(tid); err != nil {
		t.Fatal(err)
	}
	if calls := tl.fc.snapshot(); !reflect.DeepEqual(calls[len(calls)-1], []int{13, 12, 11, 10}) {
		t.Fatalf("second split created %v", calls[len(calls)-1])
	}
}

// ncclCommSplit from one thread per parent rank, blocking.
func TestSplitThreads(t *testing.T) {
	tl := newTestLib(t)
	parent := tl.initGroup(t, id(16), 0, 1)
	kids := make([]unsafe.Pointer, 2)
	var wg sync.WaitGroup
	for r := range 2 {
		wg.Go(func() {
			if err := tl.split(uint64(500+r), parent[r], 3, 0, ptr(&kids[r]), nil); err != nil {
				t.Error(err)
			}
		})
	}
	wg.Wait()
	for r := range 2 {
		if c := tl.comm(t, kids[r]); c.rank != r || c.size != 2 {
			t.Fatalf("kid %d: rank %d of %d", r, c.rank, c.size)
		}
	}
	var h unsafe.Pointer
	wantResult(t, "color -2", tl.split(1, parent[0], -2, 0, ptr(&h), nil), ncclInvalidArgument)
	wantResult(t, "NULL newcomm", tl.split(1, parent[0], 0, 0, nil, nil), ncclInvalidArgument)
	wantResult(t, "NULL parent", tl.split(1, nil, 0, 0, ptr(&h), nil), ncclInvalidArgument)
}

// A split whose other parent ranks never call times out like an init.
func TestSplitTimeout(t *testing.T) {
	tl := newTestLib(t)
	parent := tl.initGroup(t, id(17), 0, 1)
	tl.setTimeout(20 * time.Millisecond)
	var h unsafe.Pointer
	err := tl.split(1, parent[0], 0, 0, ptr(&h), nil)
	wantResult(t, "lonely split", err, ncclSystemError)
	if h != nil || !strings.Contains(err.Error(), "ncclCommSplit") || !strings.Contains(err.Error(), "ranks [1] never joined") {
		t.Fatalf("%p %v", h, err)
	}
	if tl.handles.live() != 2 {
		t.Fatalf("%d live handles, want the parent's 2", tl.handles.live())
	}
}

// The first splits of two parents in one group are two collectives.
func TestSplitTwoParents(t *testing.T) {
	tl := newTestLib(t)
	a := tl.initGroup(t, id(18), 0, 1)
	b := tl.initGroup(t, id(19), 2, 3)
	const tid = 88
	tl.groupStart(tid)
	kids := make([]unsafe.Pointer, 4)
	for r, p := range append(append([]unsafe.Pointer(nil), a...), b...) {
		if err := tl.split(tid, p, 0, 0, ptr(&kids[r]), nil); err != nil {
			t.Fatalf("split of parent handle %d: %v", r, err)
		}
	}
	if err := tl.groupEnd(tid); err != nil {
		t.Fatal(err)
	}
	if calls := tl.fc.snapshot()[2:]; !reflect.DeepEqual(calls, [][]int{{0, 1}, {2, 3}}) && !reflect.DeepEqual(calls, [][]int{{2, 3}, {0, 1}}) {
		t.Fatalf("created %v", calls)
	}
}
