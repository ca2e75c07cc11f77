package host

import (
	"context"
	"fmt"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/ringo-ccl/ringo/internal/errs"
	"github.com/ringo-ccl/ringo/reduce"
	"github.com/ringo-ccl/ringo/ring"
	"github.com/ringo-ccl/ringo/shm"
	"github.com/ringo-ccl/ringo/transport"
	"github.com/ringo-ccl/ringo/transport/exchangetest"
)

// attaches makes n ranks' cross-memory attach, ranks as goroutines of
// this process (each reads the others through its own pid).
func attaches(t *testing.T, n int) []*shm.Attach {
	t.Helper()
	f := exchangetest.New(n)
	as := make([]*shm.Attach, n)
	for r, err := range f.Each(func(r int) (err error) {
		as[r], err = shm.NewAttach(context.Background(), f.Rank(r), shm.AttachOn)
		return err
	}) {
		require.NoError(t, err, "rank %d", r)
	}
	t.Cleanup(func() {
		for _, a := range as {
			a.Close()
		}
	})
	return as
}

// TestDirect: 60 random calls of every collective by cross-memory attach
// — sum and max, in and out of place, every root, sizes from one element
// to several DirectChunks — on 3 ranks, each output checked; one-shot
// calls (the smallest) interleave on the same board, as a communicator's
// do.
func TestDirect(t *testing.T) {
	const n = 3
	bs, as := oneShotBoards(t, n, OneShotMax), attaches(t, n)
	scratch := make([][]byte, n)
	for r := range n {
		scratch[r] = make([]byte, DirectChunk)
	}
	checkRandomCalls(t, n, 60, 3*DirectChunk/4, allColls, []reduce.Op{reduce.OpSum, reduce.OpMax}, func(r int, x *OneShot) error {
		var w transport.Waiter
		w.Reset(context.Background(), 30*time.Second)
		if read, fits := OneShotBytes(x.Coll, x.Bytes, n, OneShotMax); fits && read <= OneShotMax {
			return RunOneShot(bs[r], &w, r, n, x)
		}
		require.True(t, DirectRuns(x.Coll, x.Func))
		d := &Direct{Coll: x.Coll, In: x.In, Out: x.Out, Bytes: x.Bytes, Root: x.Root, Func: x.Func,
			Scratch: scratch[r], Addrs: make([]uintptr, 2*n)}
		return RunDirect(bs[r], as[r], &w, r, n, d)
	})
}

// TestDirectRuns: a pre-operation (avg's 1/n, PreMulSum's scalar, each
// rank's own) keeps a reduction off the direct path.
func TestDirectRuns(t *testing.T) {
	sum, err := reduce.New(reduce.Float32, reduce.OpSum, 2)
	require.NoError(t, err)
	avg, err := reduce.New(reduce.Float32, reduce.OpAvg, 2)
	require.NoError(t, err)
	assert.True(t, DirectRuns(ring.AllReduce, sum))
	assert.True(t, DirectRuns(ring.AllGather, nil))
	assert.False(t, DirectRuns(ring.AllReduce, avg))
}

// TestDirectAbort: a rank that never publishes its buffers ends the
// other's wait when the communicator breaks, naming the rank.
func TestDirectAbort(t *testing.T) {
	bs, as := oneShotBoards(t, 2, 64), attaches(t, 2)
	var w transport.Waiter
	var broken transport.Abort
	w.Reset(context.Background(), time.Minute, &broken)
	time.AfterFunc(20*time.Millisecond, func() { broken.Set(fmt.Errorf("rank 1 lost: %w", errs.ErrPeerLost)) })
	in, out := make([]byte, 1<<20), make([]byte, 1<<20)
	err := RunDirect(bs[0], as[0], &w, 0, 2, &Direct{Coll: ring.AllGather, In: in[:1<<19], Out: out, Bytes: 1 << 19,
		Scratch: make([]byte, DirectChunk), Addrs: make([]uintptr, 4)})
	require.ErrorIs(t, err, errs.ErrPeerLost)
	assert.Contains(t, err.Error(), "allgather rank 0 cross-memory attach: waiting for the peers' buffers (peer rank 1)")
}

// TestDirectAllocs: a direct all-reduce does not allocate.
func TestDirectAllocs(t *testing.T) {
	const n = 2
	bs, as := oneShotBoards(t, n, 64), attaches(t, n)
	f, err := reduce.New(reduce.Float32, reduce.OpSum, n)
	require.NoError(t, err)
	xs := make([]*Direct, n)
	for r := range n {
		xs[r] = &Direct{Coll: ring.AllReduce, In: make([]byte, 1<<18), Out: make([]byte, 1<<18), Bytes: 1 << 18, Func: f,
			Scratch: make([]byte, DirectChunk), Addrs: make([]uintptr, 2*n)}
	}
	assert.Zero(t, twoRankAllocs(t, func(r int, w *transport.Waiter) error { return RunDirect(bs[r], as[r], w, r, n, xs[r]) }))
}

// twoRankAllocs returns the allocations of rank 0's run(0, w) per call,
// rank 1 running run(1, w) beside it on another goroutine.
func twoRankAllocs(t *testing.T, run func(r int, w *transport.Waiter) error) float64 {
	t.Helper()
	peer := make(chan struct{})
	done := make(chan error, 1)
	const runs = 20
	go func() {
		var w transport.Waiter
		for range runs + 1 { // AllocsPerRun runs once more to warm up
			<-peer
			w.Reset(context.Background(), 30*time.Second)
			if err := run(1, &w); err != nil {
				done <- err
				return
			}
		}
		done <- nil
	}()
	var w transport.Waiter
	allocs := testing.AllocsPerRun(runs, func() {
		peer <- struct{}{}
		w.Reset(context.Background(), 30*time.Second)
		require.NoError(t, run(0, &w))
	})
	require.NoError(t, <-done)
	return allocs
}
