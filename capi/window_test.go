package main

import (
	"sync"
	"testing"
	"time"
	"unsafe"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

func (tl *testLib) winRegister(tid uint64, h unsafe.Pointer, buff uintptr, size uint64, out *unsafe.Pointer, flags int32) error {
	return tl.windowRegister(tid, h, buff, size, ptr(out), flags)
}

// TestWindowRegisterGroup: ncclCommWindowRegister of every rank of a
// communicator from one thread inside a group (nccl-tests -g 2 -R 2)
// registers them together at the group's end, where *win is written; each
// window is deregistered on its own, once; destroying a communicator frees
// its windows' handles.
func TestWindowRegisterGroup(t *testing.T) {
	tl := newTestLib(t)
	hs := tl.initGroup(t, id(41), 0, 1)
	const tid = 99
	wins := make([]unsafe.Pointer, 4)
	tl.groupStart(tid)
	for r, h := range hs {
		for k := range 2 {
			require.NoError(t, tl.winRegister(tid, h, 0x7f0000000000+uintptr(k)<<20, 1<<20, &wins[2*r+k], winCollSymmetric))
			assert.Nil(t, wins[2*r+k], "written at the group's end")
		}
	}
	require.NoError(t, tl.groupEnd(tid))
	for r, h := range hs {
		c := tl.comm(t, h)
		require.Len(t, c.wins, 2)
		for k, w := range c.wins {
			assert.NotNil(t, wins[2*r+k])
			assert.Equal(t, int64(1<<20), w.bytes)
		}
	}
	require.NoError(t, tl.windowDeregister(hs[0], wins[0]))
	assert.Equal(t, int32(1), tl.comm(t, hs[0]).wins[0].deregistered.Load())
	wantResult(t, "deregister twice", tl.windowDeregister(hs[0], wins[0]), ncclInvalidArgument)
	wantResult(t, "another comm's window", tl.windowDeregister(hs[0], wins[2]), ncclInvalidArgument)
	wantResult(t, "NULL window", tl.windowDeregister(hs[0], nil), ncclInvalidArgument)
	var reg unsafe.Pointer
	require.NoError(t, tl.register(hs[0], 0x7f0000001000, 64, ptr(&reg)))
	wantResult(t, "a registration as a window", tl.windowDeregister(hs[0], reg), ncclInvalidArgument)
	wantResult(t, "a window as a registration", tl.deregister(hs[0], wins[1]), ncclInvalidArgument)
	for _, h := range hs {
		require.NoError(t, tl.destroy(h))
	}
	assert.Empty(t, tl.regs.regs, "handles left after ncclCommDestroy")
}

// TestWindowRegisterBad: bad arguments are refused at the call, naming
// what is wrong; sizes that differ by rank fail every rank's call, outside
// a group (each rank on its own thread) and at a group's end, leaving no
// handle.
func TestWindowRegisterBad(t *testing.T) {
	tl := newTestLib(t)
	hs := tl.initGroup(t, id(42), 0, 1)
	var w unsafe.Pointer
	for _, tc := range []struct {
		name string
		err  error
		want string
	}{
		{"NULL win", tl.windowRegister(1, hs[0], 0x1000, 64, nil, 0), "win is NULL"},
		{"flags", tl.winRegister(1, hs[0], 0x1000, 64, &w, 2), "winFlags 0x2"},
		{"NULL buff", tl.winRegister(1, hs[0], 0, 64, &w, 0), "buff is NULL"},
		{"size 0", tl.winRegister(1, hs[0], 0x1000, 0, &w, 0), "size 0"},
		{"NULL comm", tl.winRegister(1, nil, 0x1000, 64, &w, 0), "comm is NULL"},
	} {
		wantResult(t, tc.name, tc.err, ncclInvalidArgument)
		assert.ErrorContains(t, tc.err, "ncclCommWindowRegister: "+tc.want, tc.name)
	}
	tl.setTimeout(2 * time.Second)
	errs := make([]error, 2)
	var wg sync.WaitGroup
	for r, h := range hs {
		wg.Go(func() {
			var w unsafe.Pointer
			errs[r] = tl.winRegister(uint64(10+r), h, 0x1000, 64<<r, &w, 0)
		})
	}
	wg.Wait()
	for _, err := range errs {
		wantResult(t, "sizes that differ", err, ncclInvalidArgument)
		assert.ErrorContains(t, err, "window of 64 bytes on rank 0 and of 128 on rank 1")
	}
	const tid = 7
	tl.groupStart(tid)
	for r, h := range hs {
		require.NoError(t, tl.winRegister(tid, h, 0x1000, 64<<r, &w, 0))
	}
	err := tl.groupEnd(tid)
	wantResult(t, "sizes that differ, in a group", err, ncclInvalidArgument)
	assert.ErrorContains(t, err, "ncclCommWindowRegister: ")
	assert.Nil(t, w)
	assert.Empty(t, tl.regs.regs)
	for _, h := range hs {
		require.NoError(t, tl.destroy(h))
	}
}
