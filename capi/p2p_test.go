package main

import (
	"context"
	"errors"
	"fmt"
	"math"
	"strings"
	"testing"
	"unsafe"

	"github.com/ringo-ccl/ringo"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// send and recv call ncclSend and ncclRecv of count float32 on thread tid.
func (tl *testLib) send(tid uint64, buf uintptr, count uint64, peer int32, h unsafe.Pointer, stream uintptr) error {
	return tl.p2p(tid, p2pSend, devPtr(buf), nil, count, int32(ringo.TypeFloat32), peer, h, devPtr(stream))
}

func (tl *testLib) recv(tid uint64, buf uintptr, count uint64, peer int32, h unsafe.Pointer, stream uintptr) error {
	return tl.p2p(tid, p2pRecv, nil, devPtr(buf), count, int32(ringo.TypeFloat32), peer, h, devPtr(stream))
}

// msg is a float32 message, as the fake records it.
func msg(send bool, peer int, count int64, addr uintptr) p2pMsg {
	return p2pMsg{send: send, peer: peer, count: count, dt: ringo.TypeFloat32, addr: addr}
}

// Outside a group, each call runs at once, alone, on its communicator's GPU
// and the caller's stream.
func TestSendRecvOutsideGroup(t *testing.T) {
	tl := newTestLib(t)
	hs := tl.initGroup(t, id(50), 3, 4)
	require.NoError(t, tl.send(1, 0x1000, 8, 1, hs[0], 0xab))
	require.NoError(t, tl.recv(1, 0x2000, 8, 0, hs[1], 0))
	runs, events := tl.fp.snapshot()
	require.Len(t, runs, 2)
	assert.Equal(t, []string{"sendrecv 1 parts", "sendrecv 1 parts"}, events)
	assert.Equal(t, tl.comm(t, hs[0]), runs[0][0].comm)
	assert.Equal(t, uintptr(0xab), runs[0][0].stream)
	assert.Equal(t, []p2pMsg{msg(true, 1, 8, 0x1000)}, runs[0][0].msgs)
	assert.Equal(t, tl.comm(t, hs[1]), runs[1][0].comm)
	assert.Equal(t, []p2pMsg{msg(false, 0, 8, 0x2000)}, runs[1][0].msgs)
}

// Inside a group, sends and receives wait for the outermost ncclGroupEnd,
// which runs them all as one SendRecv: each communicator's ops in order,
// communicators in the order they first appear — nccl-tests' -g 2
// sendrecv_perf, a group in a group.
func TestGroupDefersSendRecv(t *testing.T) {
	tl := newTestLib(t)
	hs := tl.initGroup(t, id(51), 0, 0)
	const tid = 5
	tl.groupStart(tid)
	for r, h := range hs {
		tl.groupStart(tid)
		require.NoError(t, tl.send(tid, uintptr(0x1000*(r+1)), 4, int32(1-r), h, 0x10+uintptr(r)))
		require.NoError(t, tl.recv(tid, uintptr(0x8000*(r+1)), 4, int32(1-r), h, 0x10+uintptr(r)))
		require.NoError(t, tl.groupEnd(tid))
	}
	require.NoError(t, tl.send(tid, 0x3000, 2, 0, hs[1], 0x11)) // rank 1 again, after rank 0
	runs, _ := tl.fp.snapshot()
	require.Empty(t, runs, "ran before the outermost ncclGroupEnd")
	require.NoError(t, tl.groupEnd(tid))
	runs, events := tl.fp.snapshot()
	require.Len(t, runs, 1)
	assert.Equal(t, []string{"sendrecv 2 parts"}, events)
	parts := runs[0]
	assert.Equal(t, tl.comm(t, hs[0]), parts[0].comm)
	assert.Equal(t, uintptr(0x10), parts[0].stream)
	assert.Equal(t, []p2pMsg{msg(true, 1, 4, 0x1000), msg(false, 1, 4, 0x8000)}, parts[0].msgs)
	assert.Equal(t, tl.comm(t, hs[1]), parts[1].comm)
	assert.Equal(t, uintptr(0x11), parts[1].stream)
	assert.Equal(t, []p2pMsg{msg(true, 0, 4, 0x2000), msg(false, 0, 4, 0x10000), msg(true, 0, 2, 0x3000)}, parts[1].msgs)
	// The group is gone: the next send runs at once.
	require.NoError(t, tl.send(tid, 0x1000, 1, 1, hs[0], 0))
	runs, _ = tl.fp.snapshot()
	assert.Len(t, runs, 2)
	wantResult(t, "unmatched ncclGroupEnd", tl.groupEnd(tid), ncclInvalidUsage)
}

// A training step's sends and receives allocate nothing on their way to
// ringo (STYLE.md §6): a group of sends and receives on two communicators
// of one thread (nccl-tests' -g 2), and a send outside any group.
func TestSendRecvAllocs(t *testing.T) {
	tl := newTestLib(t)
	hs := tl.initGroup(t, id(52), 0, 0)
	parts := 0
	tl.sendRecv = func(_ context.Context, ps []p2pPart) error { // the recording fake allocates
		parts += len(ps)
		return nil
	}
	const tid = 5
	group := testing.AllocsPerRun(100, func() {
		tl.groupStart(tid)
		for r, h := range hs {
			require.NoError(t, tl.send(tid, uintptr(0x1000*(r+1)), 4, int32(1-r), h, 0x10+uintptr(r)))
			require.NoError(t, tl.recv(tid, uintptr(0x8000*(r+1)), 4, int32(1-r), h, 0x10+uintptr(r)))
		}
		require.NoError(t, tl.groupEnd(tid))
	})
	assert.Zero(t, group, "allocations per group")
	assert.Equal(t, 2*101, parts, "each group's two parts reached SendRecv") // AllocsPerRun runs once more
	one := testing.AllocsPerRun(100, func() {
		require.NoError(t, tl.send(tid, 0x1000, 4, 1, hs[0], 0x10))
	})
	assert.Zero(t, one, "allocations per send outside a group")
}

// A group's collectives are launched when called; its sends and receives
// at its end. Other threads' groups are their own.
func TestGroupCollectiveAndSends(t *testing.T) {
	tl := newTestLib(t)
	hs := tl.initGroup(t, id(52), 0, 0)
	tl.groupStart(1)
	require.NoError(t, tl.send(1, 0x1000, 4, 1, hs[0], 0))
	require.NoError(t, tl.collective(apiAllReduce, devPtr(0x4000), devPtr(0x4000), 4, 7, 0, 0, hs[0], nil))
	assert.Equal(t, 1, tl.comm(t, hs[0]).calls, "the collective waited for the group's end")
	require.NoError(t, tl.recv(2, 0x2000, 4, 0, hs[1], 0)) // thread 2 has no group: at once
	runs, _ := tl.fp.snapshot()
	require.Len(t, runs, 1)
	assert.Equal(t, tl.comm(t, hs[1]), runs[0][0].comm)
	require.NoError(t, tl.groupEnd(1))
	runs, _ = tl.fp.snapshot()
	require.Len(t, runs, 2)
	assert.Equal(t, []p2pMsg{msg(true, 1, 4, 0x1000)}, runs[1][0].msgs)
}

func TestSendRecvArguments(t *testing.T) {
	tl := newTestLib(t)
	hs := tl.initGroup(t, id(53), 0, 0, 0)
	const f32 = int32(ringo.TypeFloat32)
	cases := []struct {
		name string
		err  error
		want string
	}{
		{"peer -1", tl.send(1, 0x1000, 4, -1, hs[0], 0), "ncclSend: peer -1 is outside [0, 3)"},
		{"peer 3", tl.recv(1, 0x1000, 4, 3, hs[0], 0), "ncclRecv: peer 3 is outside [0, 3)"},
		{"datatype 12", tl.p2p(1, p2pSend, devPtr(0x1000), nil, 4, 12, 1, hs[0], nil), "ncclSend: datatype 12"},
		{"datatype -1", tl.p2p(1, p2pRecv, nil, devPtr(0x1000), 4, -1, 1, hs[0], nil), "ncclRecv: datatype -1"},
		{"count", tl.p2p(1, p2pSend, devPtr(0x1000), nil, math.MaxInt64/2, f32, 1, hs[0], nil), "ncclSend: count"},
		{"alltoall count", tl.p2p(1, p2pAllToAll, devPtr(0x1000), devPtr(0x9000), math.MaxInt64/8, f32, 0, hs[0], nil), "ncclAlltoAll: count"},
		{"NULL comm", tl.send(1, 0x1000, 4, 1, nil, 0), "ncclSend: comm is NULL"},
		{"NULL sendbuff", tl.send(1, 0, 4, 1, hs[0], 0), "ncclSend: sendbuff is NULL"},
		{"NULL recvbuff", tl.recv(1, 0, 4, 1, hs[0], 0), "ncclRecv: recvbuff is NULL"},
		{"gather root", tl.p2p(1, p2pGather, devPtr(0x1000), devPtr(0x2000), 4, f32, 3, hs[0], nil), "ncclGather: root 3 is outside [0, 3)"},
		{"scatter root's sendbuff", tl.p2p(1, p2pScatter, nil, devPtr(0x2000), 4, f32, 0, hs[0], nil), "ncclScatter: sendbuff (at the root) is NULL"},
		{"gather root's recvbuff", tl.p2p(1, p2pGather, devPtr(0x1000), nil, 4, f32, 0, hs[0], nil), "ncclGather: recvbuff (at the root) is NULL"},
		{"alltoall recvbuff", tl.p2p(1, p2pAllToAll, devPtr(0x1000), nil, 4, f32, 0, hs[0], nil), "ncclAlltoAll: recvbuff is NULL"},
	}
	for _, c := range cases {
		wantResult(t, c.name, c.err, ncclInvalidArgument)
		assert.Contains(t, c.err.Error(), c.want, c.name)
	}
	wantResult(t, "unknown API", tl.p2p(1, 99, nil, nil, 0, f32, 0, hs[0], nil), ncclInternalError)
	// NULL buffers that are not used: a count of 0, a non-root's.
	require.NoError(t, tl.send(1, 0, 0, 1, hs[0], 0))
	require.NoError(t, tl.p2p(1, p2pGather, devPtr(0x1000), nil, 4, f32, 0, hs[1], nil))
	require.NoError(t, tl.p2p(1, p2pScatter, nil, devPtr(0x1000), 4, f32, 0, hs[2], nil))
	runs, _ := tl.fp.snapshot()
	assert.Len(t, runs, 3)
	// A destroyed handle, and one whose group has not ended.
	dead := tl.initGroup(t, id(54), 0)[0]
	require.NoError(t, tl.destroy(dead))
	wantResult(t, "destroyed comm", tl.send(1, 0x1000, 4, 0, dead, 0), ncclInvalidArgument)
	tl.groupStart(7)
	h, err := tl.initRank(7, 1, 0, id(55))
	require.NoError(t, err)
	err = tl.send(7, 0x1000, 4, 0, h, 0)
	wantResult(t, "comm being made", err, ncclInvalidArgument)
	assert.Contains(t, err.Error(), "still being initialised")
	// ... which fails the group's end too, once the communicator is made.
	err = tl.groupEnd(7)
	wantResult(t, "group end", err, ncclInvalidArgument)
	assert.Contains(t, err.Error(), "still being initialised")
	var n int32
	require.NoError(t, tl.query("ncclCommCount", h, ptr(&n), rankComm.Size))
}

// An argument error inside a group fails its end, which then runs none of
// its sends and receives (NCCL's ncclGroupErrCheck).
func TestGroupArgumentErrorFailsEnd(t *testing.T) {
	tl := newTestLib(t)
	hs := tl.initGroup(t, id(56), 0, 0)
	tl.groupStart(1)
	require.NoError(t, tl.send(1, 0x1000, 4, 1, hs[0], 0))
	wantResult(t, "bad peer", tl.recv(1, 0x2000, 4, 9, hs[0], 0), ncclInvalidArgument)
	require.NoError(t, tl.recv(1, 0x3000, 4, 1, hs[0], 0))
	err := tl.groupEnd(1)
	wantResult(t, "group end", err, ncclInvalidArgument)
	assert.Contains(t, err.Error(), "ncclGroupEnd: none of the group's 2 sends and receives ran")
	assert.Contains(t, err.Error(), "ncclRecv: peer 9 is outside [0, 2)")
	runs, _ := tl.fp.snapshot()
	assert.Empty(t, runs)
	// The next group is clean.
	tl.groupStart(1)
	require.NoError(t, tl.send(1, 0x1000, 4, 1, hs[0], 0))
	require.NoError(t, tl.groupEnd(1))
}

// ringo's failure at the group's end is its result, named.
func TestGroupRunError(t *testing.T) {
	tl := newTestLib(t)
	hs := tl.initGroup(t, id(57), 0, 0)
	tl.fp.err = fmt.Errorf("sendrecv rank 0: %w: rank 1 exited", ringo.ErrPeerLost)
	tl.groupStart(1)
	require.NoError(t, tl.send(1, 0x1000, 4, 1, hs[0], 0))
	err := tl.groupEnd(1)
	wantResult(t, "peer lost", err, ncclRemoteError)
	assert.True(t, strings.HasPrefix(err.Error(), "ncclGroupEnd: sendrecv rank 0"), err.Error())
	tl.fp.err = errors.Join(fmt.Errorf("rank 0: %w", ringo.ErrInvalidArgument), errors.New("rank 1: other"))
	err = tl.send(1, 0x1000, 4, 1, hs[0], 0)
	wantResult(t, "joined", err, ncclInvalidArgument)
	assert.True(t, strings.HasPrefix(err.Error(), "ncclSend: rank 0"), err.Error())
	// A handle destroyed inside the group, after its send.
	tl.fp.err = nil
	tl.groupStart(1)
	require.NoError(t, tl.send(1, 0x1000, 4, 1, hs[0], 0))
	require.NoError(t, tl.destroy(hs[0]))
	err = tl.groupEnd(1)
	wantResult(t, "destroyed in the group", err, ncclInvalidArgument)
	assert.Contains(t, err.Error(), "was destroyed before it ran")
}

// ncclAlltoAll, ncclGather and ncclScatter are NCCL's sends and receives.
func TestCollectivesOfSends(t *testing.T) {
	tl := newTestLib(t)
	hs := tl.initGroup(t, id(58), 0, 0, 0)
	const f64 = int32(ringo.TypeFloat64)
	const n = 5 // elements per block: 40 bytes
	m := func(send bool, peer int, addr uintptr) p2pMsg {
		return p2pMsg{send: send, peer: peer, count: n, dt: ringo.TypeFloat64, addr: addr}
	}
	last := func() []p2pMsg {
		runs, _ := tl.fp.snapshot()
		require.NotEmpty(t, runs)
		require.Len(t, runs[len(runs)-1], 1)
		return runs[len(runs)-1][0].msgs
	}
	require.NoError(t, tl.p2p(1, p2pAllToAll, devPtr(0x1000), devPtr(0x9000), n, f64, 0, hs[1], nil))
	assert.Equal(t, []p2pMsg{m(true, 0, 0x1000), m(false, 0, 0x9000), m(true, 1, 0x1028), m(false, 1, 0x9028), m(true, 2, 0x1050), m(false, 2, 0x9050)}, last())
	require.NoError(t, tl.p2p(1, p2pGather, devPtr(0x1000), devPtr(0x9000), n, f64, 2, hs[1], nil))
	assert.Equal(t, []p2pMsg{m(true, 2, 0x1000)}, last())
	require.NoError(t, tl.p2p(1, p2pGather, devPtr(0x1000), devPtr(0x9000), n, f64, 1, hs[1], nil))
	assert.Equal(t, []p2pMsg{m(true, 1, 0x1000), m(false, 0, 0x9000), m(false, 1, 0x9028), m(false, 2, 0x9050)}, last())
	require.NoError(t, tl.p2p(1, p2pScatter, devPtr(0x1000), devPtr(0x9000), n, f64, 0, hs[1], nil))
	assert.Equal(t, []p2pMsg{m(false, 0, 0x9000)}, last())
	require.NoError(t, tl.p2p(1, p2pScatter, devPtr(0x1000), devPtr(0x9000), n, f64, 1, hs[1], nil))
	assert.Equal(t, []p2pMsg{m(true, 0, 0x1000), m(true, 1, 0x1028), m(true, 2, 0x1050), m(false, 1, 0x9000)}, last())
	// A count of 0 is nothing to do.
	runs, _ := tl.fp.snapshot()
	require.NoError(t, tl.p2p(1, p2pAllToAll, nil, nil, 0, f64, 0, hs[1], nil))
	again, _ := tl.fp.snapshot()
	assert.Len(t, again, len(runs))
	// Inside a group, they wait for its end like sends.
	tl.groupStart(1)
	for r, h := range hs {
		require.NoError(t, tl.p2p(1, p2pAllToAll, devPtr(0x1000*uintptr(r+1)), devPtr(0x100000*uintptr(r+1)), n, f64, 0, h, nil))
	}
	again, _ = tl.fp.snapshot()
	assert.Len(t, again, len(runs))
	require.NoError(t, tl.groupEnd(1))
	again, _ = tl.fp.snapshot()
	require.Len(t, again, len(runs)+1)
	assert.Len(t, again[len(runs)], 3)
}

// In place: NCCL's in-place gather and scatter send nothing to the root
// itself; nccl-tests' in-place sendrecv and alltoall receive into scratch
// memory, copied after the launch on its stream.
func TestInPlace(t *testing.T) {
	tl := newTestLib(t)
	hs := tl.initGroup(t, id(59), 4, 4)
	const f32 = int32(ringo.TypeFloat32)
	last := func() []p2pMsg {
		runs, _ := tl.fp.snapshot()
		return runs[len(runs)-1][0].msgs
	}
	// Gather at root 1 in place: sendbuff = recvbuff + 1 block.
	require.NoError(t, tl.p2p(1, p2pGather, devPtr(0x9010), devPtr(0x9000), 4, f32, 1, hs[1], nil))
	assert.Equal(t, []p2pMsg{msg(false, 0, 4, 0x9000)}, last())
	require.NoError(t, tl.p2p(1, p2pScatter, devPtr(0x9000), devPtr(0x9010), 4, f32, 1, hs[1], nil))
	assert.Equal(t, []p2pMsg{msg(true, 0, 4, 0x9000)}, last())
	_, events := tl.fp.snapshot()
	assert.NotContains(t, strings.Join(events, "\n"), "alloc")

	// sendrecv_perf in place: the same buffer both ways.
	tl.fp.events = nil
	require.NoError(t, tl.send(1, 0x9000, 4, 1, hs[0], 0x77)) // a send alone is not in place
	tl.groupStart(1)
	require.NoError(t, tl.send(1, 0x9000, 4, 1, hs[0], 0x77))
	require.NoError(t, tl.recv(1, 0x9000, 4, 1, hs[0], 0x77))
	require.NoError(t, tl.groupEnd(1))
	assert.Equal(t, []p2pMsg{msg(true, 1, 4, 0x9000), msg(false, 1, 4, 0x5000_0000)}, last())
	_, events = tl.fp.snapshot()
	assert.Equal(t, []string{
		"sendrecv 1 parts",
		"alloc gpu 4 stream 0x77 16 bytes = 0x50000000",
		"sendrecv 1 parts",
		"copy gpu 4 stream 0x77 0x9000 <- 0x50000000 16 bytes",
		"free gpu 4 stream 0x77 0x50000000",
	}, events)

	// alltoall in place: every receive overlaps its send; the self pair
	// too, but each at its own address is a copy onto itself.
	tl.fp.events = nil
	require.NoError(t, tl.p2p(1, p2pAllToAll, devPtr(0x9000), devPtr(0x9000), 4, f32, 0, hs[1], devPtr(0x78)))
	assert.Equal(t, []p2pMsg{msg(true, 0, 4, 0x9000), msg(false, 0, 4, 0x5000_1000)}, last())
	_, events = tl.fp.snapshot()
	assert.Equal(t, []string{
		"alloc gpu 4 stream 0x78 16 bytes = 0x50001000",
		"sendrecv 1 parts",
		"copy gpu 4 stream 0x78 0x9000 <- 0x50001000 16 bytes",
		"free gpu 4 stream 0x78 0x50001000",
	}, events)

	// When the launch fails, nothing is copied; the scratch is freed.
	tl.fp.events = nil
	tl.fp.err = fmt.Errorf("launch: %w", ringo.ErrAborted)
	wantResult(t, "aborted", tl.p2p(1, p2pAllToAll, devPtr(0x9000), devPtr(0x9000), 4, f32, 0, hs[0], nil), ncclSystemError)
	_, events = tl.fp.snapshot()
	assert.Equal(t, []string{"alloc gpu 4 stream 0x0 16 bytes = 0x50002000", "sendrecv 1 parts", "free gpu 4 stream 0x0 0x50002000"}, events)
	// When the scratch cannot be had, nothing runs.
	tl.fp.err, tl.fp.events = nil, nil
	tl.fp.allocErr = &cudaError{op: "cuMemAllocAsync", code: 2, name: "CUDA_ERROR_OUT_OF_MEMORY", msg: "out of memory"}
	err := tl.p2p(1, p2pAllToAll, devPtr(0x9000), devPtr(0x9000), 4, f32, 0, hs[0], nil)
	wantResult(t, "no scratch", err, ncclUnhandledCudaError)
	assert.Contains(t, err.Error(), "ncclAlltoAll: cuda: cuMemAllocAsync: out of memory")
	_, events = tl.fp.snapshot()
	assert.Empty(t, events)
}

func TestPlanStage(t *testing.T) {
	s := func(peer int, bytes int64, addr uintptr) p2pMsg {
		return p2pMsg{send: true, peer: peer, count: bytes, dt: ringo.TypeUint8, addr: addr}
	}
	r := func(peer int, bytes int64, addr uintptr) p2pMsg {
		return p2pMsg{peer: peer, count: bytes, dt: ringo.TypeUint8, addr: addr}
	}
	cases := []struct {
		name    string
		in      []p2pMsg
		out     []p2pMsg // addresses of staged receives as offsets
		copies  []stageCopy
		scratch int64
	}{
		{"apart", []p2pMsg{s(1, 100, 0), r(1, 100, 100), r(2, 100, 200)}, nil, nil, 0},
		{"sends overlap", []p2pMsg{s(1, 100, 0), s(2, 100, 50)}, nil, nil, 0},
		{"empty receive", []p2pMsg{s(1, 100, 0), r(1, 0, 50)}, nil, nil, 0},
		{"receive into a send", []p2pMsg{s(1, 100, 0), r(1, 10, 90)},
			[]p2pMsg{s(1, 100, 0), r(1, 10, 0)}, []stageCopy{{dst: 90, off: 0, n: 10}}, 10},
		{"receives overlap", []p2pMsg{r(1, 100, 1000), r(2, 100, 1050), r(3, 10, 0)},
			[]p2pMsg{r(1, 100, 0), r(2, 100, 256), r(3, 10, 0)}, []stageCopy{{1000, 0, 100}, {1050, 256, 100}}, 356},
		{"self in place", []p2pMsg{s(0, 64, 0), r(1, 64, 64), r(0, 64, 0)}, []p2pMsg{r(1, 64, 64)}, nil, 0},
		{"self, second pair in place", []p2pMsg{s(0, 8, 0), s(0, 8, 100), r(0, 8, 50), r(0, 8, 100)},
			[]p2pMsg{s(0, 8, 0), r(0, 8, 50)}, nil, 0},
		{"self at another size", []p2pMsg{s(0, 64, 0), r(0, 32, 0)},
			[]p2pMsg{s(0, 64, 0), r(0, 32, 0)}, []stageCopy{{0, 0, 32}}, 32},
		{"hypercube's second round", []p2pMsg{s(1, 16, 0), r(1, 16, 16), s(2, 32, 0), r(2, 32, 32)},
			[]p2pMsg{s(1, 16, 0), r(1, 16, 0), s(2, 32, 0), r(2, 32, 32)}, []stageCopy{{16, 0, 16}}, 16},
	}
	for _, c := range cases {
		in := append([]p2pMsg(nil), c.in...)
		p := planStage(in, 0)
		want := c.out
		if want == nil {
			want = c.in
		}
		assert.Equal(t, want, p.msgs, c.name)
		assert.Equal(t, c.copies, p.copies, c.name)
		assert.Equal(t, c.scratch, p.scratch, c.name)
		p.apply(p.msgs, 0x10000)
		for _, i := range p.staged {
			assert.GreaterOrEqual(t, p.msgs[i].addr, uintptr(0x10000), c.name)
		}
	}
}

// A communicator's ops on two streams: its launch waits for the second
// stream's earlier work, and the second stream for the launch, as NCCL
// joins a group's streams.
func TestGroupStreams(t *testing.T) {
	tl := newTestLib(t)
	hs := tl.initGroup(t, id(60), 2, 2)
	tl.groupStart(1)
	require.NoError(t, tl.send(1, 0x1000, 4, 1, hs[0], 0xa))
	require.NoError(t, tl.recv(1, 0x2000, 4, 1, hs[0], 0xb))
	require.NoError(t, tl.send(1, 0x3000, 4, 1, hs[0], 0xb))
	require.NoError(t, tl.recv(1, 0x4000, 4, 0, hs[1], 0xc))
	require.NoError(t, tl.groupEnd(1))
	runs, events := tl.fp.snapshot()
	assert.Equal(t, []string{"wait gpu 2 stream 0xa on 0xb", "sendrecv 2 parts", "wait gpu 2 stream 0xb on 0xa"}, events)
	assert.Equal(t, uintptr(0xa), runs[0][0].stream)
	assert.Len(t, runs[0][0].msgs, 3)
	assert.Equal(t, uintptr(0xc), runs[0][1].stream)
}

// The C entry point: results and ncclGetLastError.
func TestExportP2P(t *testing.T) {
	tl := newTestLib(t)
	useLib(t, tl)
	hs := tl.initGroup(t, id(61), 0, 0)
	const f32 = int32(ringo.TypeFloat32)
	if r := result(ringoP2P(3, p2pSend, devPtr(0x1000), nil, 4, f32, 5, hs[0], nil)); r != ncclInvalidArgument {
		t.Fatal(r)
	}
	assert.Equal(t, "ncclSend: peer 5 is outside [0, 2) (comm "+fmt.Sprint(hs[0])+" has 2 ranks)", lastError())
	if r := result(ringoP2P(3, p2pRecv, nil, devPtr(0x1000), 4, f32, 1, hs[0], nil)); r != ncclSuccess {
		t.Fatal(r, lastError())
	}
	if r := result(ringoGroupStart(3)); r != ncclSuccess {
		t.Fatal(r)
	}
	if r := result(ringoP2P(3, p2pScatter, nil, devPtr(0x1000), 4, f32, 0, hs[0], nil)); r != ncclInvalidArgument {
		t.Fatal(r)
	}
	if r := result(ringoGroupEnd(3)); r != ncclInvalidArgument || !strings.Contains(lastError(), "ncclScatter: sendbuff (at the root) is NULL") {
		t.Fatal(r, lastError())
	}
	if r := result(ringoP2P(3, 42, nil, nil, 0, f32, 0, hs[0], nil)); r != ncclInternalError {
		t.Fatal(r)
	}
}
