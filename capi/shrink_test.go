package main

import (
	"sync"
	"testing"
	"time"
	"unsafe"

	"github.com/ringo-ccl/ringo"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// initAllOn makes a communicator of len(devs) ranks with ncclCommInitAll,
// destroyed when the test ends.
func initAllOn(t *testing.T, tl *testLib, devs ...int32) []unsafe.Pointer {
	t.Helper()
	hs := make([]unsafe.Pointer, len(devs))
	require.NoError(t, tl.initAll(ptr(&hs[0]), int32(len(devs)), ptr(&devs[0])))
	t.Cleanup(func() {
		for _, h := range hs {
			assert.NoError(t, tl.destroy(h))
		}
	})
	return hs
}

// ncclCommShrink: the ranks not excluded, one thread each, get the ranks of
// a new communicator in order, each on its parent's GPU; NCCL_SHRINK_ABORT
// aborts the parent first; inside a group, the group's end makes them.
func TestShrink(t *testing.T) {
	tl := newTestLib(t)
	hs := initAllOn(t, tl, 5, 6, 7, 3)
	exclude := []int32{2}
	kids := make([]unsafe.Pointer, 4)
	var wg sync.WaitGroup
	for _, r := range []int{0, 1, 3} {
		wg.Go(func() {
			assert.NoError(t, tl.shrink(uint64(700+r), hs[r], ptr(&exclude[0]), 1, ptr(&kids[r]), nil, ncclShrinkDefault))
		})
	}
	wg.Wait()
	assert.Nil(t, kids[2])
	for r, w := range map[int]struct{ rank, gpu int }{0: {0, 5}, 1: {1, 6}, 3: {2, 3}} {
		c := tl.comm(t, kids[r])
		assert.Equal(t, w, struct{ rank, gpu int }{c.rank, c.gpu}, "parent rank %d", r)
		assert.Equal(t, 3, c.size)
		assert.False(t, tl.comm(t, hs[r]).aborted, "NCCL_SHRINK_DEFAULT aborted parent rank %d", r)
	}

	// Shrink the shrunk communicator again, with NCCL_SHRINK_ABORT, inside
	// a group of one thread.
	const tid = 77
	tl.groupStart(tid)
	again := make([]unsafe.Pointer, 3)
	drop := []int32{1}
	for i, k := range []unsafe.Pointer{kids[0], kids[3]} { // its ranks 0 and 2
		require.NoError(t, tl.shrink(tid, k, ptr(&drop[0]), 1, ptr(&again[i]), nil, ncclShrinkAbort))
		require.NotNil(t, again[i], "inside a group the handle comes at once")
	}
	require.NoError(t, tl.groupEnd(tid))
	for i, gpu := range []int{5, 3} {
		c := tl.comm(t, again[i])
		assert.Equal(t, [3]int{i, 2, gpu}, [3]int{c.rank, c.size, c.gpu})
	}
	assert.True(t, tl.comm(t, kids[0]).aborted, "NCCL_SHRINK_ABORT left the parent running")
	assert.True(t, tl.comm(t, kids[3]).aborted, "NCCL_SHRINK_ABORT left the parent running")
	assert.False(t, tl.comm(t, kids[1]).aborted, "a rank that did not shrink was aborted")
	// The parents' failure is handled: their async state is ncclSuccess, as
	// NCCL's after NCCL_SHRINK_ABORT (PyTorch's shrink_group waits on it),
	// while a rank that did not shrink still reports its error.
	for _, k := range kids {
		if k != nil {
			tl.comm(t, k).err = &ringo.Error{Op: "allreduce", Rank: 0, Peer: 1, Err: ringo.ErrPeerLost}
		}
	}
	var async int32
	for _, k := range []unsafe.Pointer{kids[0], kids[3]} {
		require.NoError(t, tl.getAsyncError(k, ptr(&async)))
		assert.Equal(t, ncclSuccess, result(async), "a shrunk parent's async state")
	}
	require.NoError(t, tl.getAsyncError(kids[1], ptr(&async)))
	assert.Equal(t, ncclRemoteError, result(async), "a parent no shrink replaced")

	// Excluding none makes a copy of every rank.
	copies := make([]unsafe.Pointer, 2)
	pair := initAllOn(t, tl, 1, 2)
	for r := range 2 {
		wg.Go(func() {
			assert.NoError(t, tl.shrink(uint64(800+r), pair[r], nil, 0, ptr(&copies[r]), nil, ncclShrinkDefault))
		})
	}
	wg.Wait()
	for r := range 2 {
		c := tl.comm(t, copies[r])
		assert.Equal(t, [2]int{r, 2}, [2]int{c.rank, c.size})
	}
	for _, h := range append(append(kids, again[:2]...), copies...) {
		if h != nil {
			require.NoError(t, tl.destroy(h))
		}
	}
}

// ncclCommShrink's bad arguments: ncclInvalidArgument, the call's name and
// what is wrong, nothing made, the output NULL.
func TestShrinkBadInput(t *testing.T) {
	tl := newTestLib(t)
	hs := initAllOn(t, tl, 0, 1, 2)
	var out unsafe.Pointer
	list := func(rs ...int32) unsafe.Pointer { return ptr(&rs[0]) }
	for _, tc := range []struct {
		name  string
		comm  unsafe.Pointer
		excl  unsafe.Pointer
		n     int32
		out   unsafe.Pointer
		flags int32
		want  string
	}{
		{"NULL comm", nil, list(1), 1, ptr(&out), 0, "ncclCommShrink: comm is NULL"},
		{"NULL newcomm", hs[0], list(1), 1, nil, 0, "newcomm is NULL"},
		{"flags", hs[0], list(1), 1, ptr(&out), 2, "shrinkFlags 2: must be NCCL_SHRINK_DEFAULT (0) or NCCL_SHRINK_ABORT (1)"},
		{"negative count", hs[0], list(1), -1, ptr(&out), 0, "excludeRanksCount -1 is negative"},
		{"NULL list", hs[0], nil, 1, ptr(&out), 0, "excludeRanksList is NULL but excludeRanksCount is 1"},
		{"out of range", hs[0], list(1, 3), 2, ptr(&out), 0, "excludeRanksList[1] = 3 is outside [0, 3)"},
		{"negative rank", hs[0], list(-1), 1, ptr(&out), 0, "excludeRanksList[0] = -1 is outside [0, 3)"},
		{"self", hs[0], list(2, 0), 2, ptr(&out), 1, "excludeRanksList[1] is this rank (0)"},
		{"twice", hs[0], list(2, 2), 2, ptr(&out), 0, "rank 2 is in excludeRanksList twice"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			out = unsafe.Pointer(&tc) // not NULL: the call must clear it
			err := tl.shrink(1, tc.comm, tc.excl, tc.n, tc.out, nil, tc.flags)
			wantResult(t, tc.name, err, ncclInvalidArgument)
			assert.ErrorContains(t, err, tc.want)
			if tc.out != nil {
				assert.Nil(t, out)
			}
		})
	}
	assert.Len(t, tl.fc.snapshot(), 1, "a refused shrink made a communicator")
	assert.False(t, tl.comm(t, hs[0]).aborted, "a refused NCCL_SHRINK_ABORT aborted the parent")
	assert.Zero(t, tl.comm(t, hs[0]).shrinks)
}

// ringo's failure (here: the other survivors never come) fails the call,
// leaving no handle.
func TestShrinkTimeout(t *testing.T) {
	tl := newTestLib(t)
	tl.setTimeout(30 * time.Millisecond) // rank 1 never comes
	hs := initAllOn(t, tl, 0, 1, 2)
	var out unsafe.Pointer
	drop := []int32{2}
	err := tl.shrink(1, hs[0], ptr(&drop[0]), 1, ptr(&out), nil, ncclShrinkAbort)
	require.Error(t, err)
	assert.ErrorIs(t, err, ringo.ErrTimeout)
	assert.ErrorContains(t, err, "ncclCommShrink: rank 0 of communicator")
	assert.ErrorContains(t, err, "ranks [1] never joined")
	assert.Nil(t, out)
	assert.Equal(t, 3, tl.handles.live())
}

func TestRevoke(t *testing.T) {
	tl := newTestLib(t)
	hs := initAllOn(t, tl, 0, 1)
	require.NoError(t, tl.revoke(hs[1], ncclRevokeDefault))
	assert.True(t, tl.comm(t, hs[1]).revoked)
	assert.False(t, tl.comm(t, hs[0]).revoked)

	err := tl.revoke(hs[0], 1)
	wantResult(t, "flags", err, ncclInvalidArgument)
	assert.ErrorContains(t, err, "ncclCommRevoke: revokeFlags 1: must be NCCL_REVOKE_DEFAULT (0)")
	assert.False(t, tl.comm(t, hs[0]).revoked)
	wantResult(t, "NULL", tl.revoke(nil, 0), ncclInvalidArgument)
}

// ncclCommGetUniqueId on one rank, then ncclCommGrow: the existing ranks
// keep theirs and the new one takes the rank it gives, on its current
// device.
func TestGrow(t *testing.T) {
	tl := newTestLib(t)
	hs := initAllOn(t, tl, 4, 5)
	var id ringo.UniqueID
	require.NoError(t, tl.commGetUniqueID(hs[1], ptr(&id)))
	assert.Equal(t, byte(0x67), id[0])
	tl.setDev(6)
	grown := make([]unsafe.Pointer, 3)
	var wg sync.WaitGroup
	for r := range 2 {
		wg.Go(func() {
			var idp unsafe.Pointer
			if r == 1 { // the coordinator
				idp = ptr(&id)
			}
			assert.NoError(t, tl.grow(uint64(900+r), hs[r], 3, idp, -1, ptr(&grown[r]), nil))
		})
	}
	wg.Go(func() { assert.NoError(t, tl.grow(902, nil, 3, ptr(&id), 2, ptr(&grown[2]), nil)) })
	wg.Wait()
	for r, gpu := range []int{4, 5, 6} {
		c := tl.comm(t, grown[r])
		assert.Equal(t, [3]int{r, 3, gpu}, [3]int{c.rank, c.size, c.gpu})
		require.NoError(t, tl.destroy(grown[r]))
	}
}

func TestGrowBadInput(t *testing.T) {
	tl := newTestLib(t)
	hs := initAllOn(t, tl, 0, 1)
	var id ringo.UniqueID
	var out unsafe.Pointer
	for _, tc := range []struct {
		name   string
		comm   unsafe.Pointer
		nranks int32
		id     unsafe.Pointer
		rank   int32
		out    unsafe.Pointer
		want   string
	}{
		{"NULL newcomm", hs[0], 3, ptr(&id), -1, nil, "ncclCommGrow: newcomm is NULL"},
		{"existing rank's rank", hs[0], 3, ptr(&id), 0, ptr(&out), "rank 0: an existing rank (comm non-NULL) passes -1"},
		{"not larger", hs[0], 2, ptr(&id), -1, ptr(&out), "nRanks 2: the grown communicator must have more than the 2 ranks of comm"},
		{"new rank without id", nil, 3, nil, 2, ptr(&out), "uniqueId is NULL: a new rank (comm NULL)"},
		{"new rank without rank", nil, 3, ptr(&id), -1, ptr(&out), "rank -1: a new rank (comm NULL) gives its rank"},
		{"new rank out of range", nil, 3, ptr(&id), 3, ptr(&out), "rank 3 is outside [0, 3)"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			err := tl.grow(1, tc.comm, tc.nranks, tc.id, tc.rank, tc.out, nil)
			wantResult(t, tc.name, err, ncclInvalidArgument)
			assert.ErrorContains(t, err, tc.want)
		})
	}
	wantResult(t, "NULL uniqueId", tl.commGetUniqueID(hs[0], nil), ncclInvalidArgument)
	wantResult(t, "NULL comm", tl.commGetUniqueID(nil, ptr(&id)), ncclInvalidArgument)
	assert.Equal(t, 2, tl.handles.live())
}

// Through the exports: the result and ncclGetLastError's text.
func TestShrinkExports(t *testing.T) {
	tl := newTestLib(t)
	useLib(t, tl)
	hs := initAllOn(t, tl, 0, 1)
	var out unsafe.Pointer
	drop := []int32{1}
	assert.Equal(t, ncclInvalidArgument, result(ringoCommShrink(1, hs[0], ptr(&drop[0]), 1, ptr(&out), nil, 9)))
	assert.Contains(t, lastError(), "ncclCommShrink: shrinkFlags 9")
	assert.Equal(t, ncclSuccess, result(ringoCommShrink(1, hs[0], ptr(&drop[0]), 1, ptr(&out), nil, ncclShrinkAbort)))
	c := tl.comm(t, out)
	assert.Equal(t, [2]int{0, 1}, [2]int{c.rank, c.size})
	require.NoError(t, tl.destroy(out))

	assert.Equal(t, ncclInvalidArgument, result(ringoCommRevoke(hs[1], 3)))
	assert.Contains(t, lastError(), "ncclCommRevoke: revokeFlags 3")
	assert.Equal(t, ncclSuccess, result(ringoCommRevoke(hs[1], 0)))

	var id ringo.UniqueID
	assert.Equal(t, ncclSuccess, result(ringoCommGetUniqueId(hs[0], ptr(&id))))
	assert.Equal(t, ncclInvalidArgument, result(ringoCommGrow(1, hs[0], 1, ptr(&id), -1, ptr(&out), nil)))
	assert.Contains(t, lastError(), "ncclCommGrow: nRanks 1")
}
