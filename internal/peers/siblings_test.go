package peers

import (
	"errors"
	"sync"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/ringo-ccl/ringo/internal/calls"
	"github.com/ringo-ccl/ringo/internal/errs"
	"github.com/ringo-ccl/ringo/reduce"
	"github.com/ringo-ccl/ringo/ring"
)

// One thread closing a process's ranks of a communicator one after another
// must not block on the first (its release waits for the others, as a
// bootstrap barrier does); the last close runs every release, concurrently,
// and returns their errors.
func TestSiblingsReleaseTogether(t *testing.T) {
	const n = 3
	sibs := make([]*Siblings, n)
	for r := range n {
		sibs[r] = JoinSiblings("siblings-test", []bool{true, true, true, false}) // rank 3 elsewhere
	}
	require.Same(t, sibs[0], sibs[n-1], "ranks of one communicator got different siblings records")
	require.NotContains(t, siblingsOf, "siblings-test", "the record outlived the joins of all ranks")
	var all sync.WaitGroup // the releases' barrier: met only when run together
	all.Add(n)
	ran := make(chan int, n)
	boom := errors.New("rank 1's release failed")
	free := func(r int) func() error {
		return func() error {
			all.Done()
			all.Wait()
			ran <- r
			if r == 1 {
				return boom
			}
			return nil
		}
	}
	for r := range n - 1 {
		done := make(chan error, 1)
		go func() { done <- sibs[r].Close(free(r)) }()
		select {
		case err := <-done:
			require.NoError(t, err, "close of rank %d", r)
		case <-time.After(5 * time.Second):
			t.Fatalf("close of rank %d blocked with ranks still open", r)
		}
		require.Empty(t, ran, "rank %d's close released with ranks still open", r)
	}
	done := make(chan error, 1)
	go func() { done <- sibs[n-1].Close(free(n - 1)) }()
	select {
	case err := <-done:
		assert.ErrorIs(t, err, boom, "the last close returns rank 1's error")
	case <-time.After(5 * time.Second):
		t.Fatal("the last close did not release the ranks together")
	}
	assert.Len(t, ran, n, "releases run")
}

// TestSameStreamRefused: two ranks of one process that enqueue the same
// collective on one stream of one GPU would wait for each other forever;
// the second is refused naming both, in a process's table of calls and
// among siblings. Other GPUs, other streams, other collectives and host
// ranks pass.
func TestSameStreamRefused(t *testing.T) {
	rec := func(seq uint64, gpu int, h uintptr) calls.Record {
		return calls.Record{Seq: seq, Coll: ring.AllReduce, Count: 8, Type: reduce.Float32, Stream: calls.Stream{GPU: gpu, Handle: h}}
	}
	table := calls.NewTable(2)
	sib := &Siblings{calls: map[int]calls.Record{}}
	for _, enter := range map[string]func(int, calls.Record) error{"table": table.Enter, "siblings": sib.Enter} {
		require.NoError(t, enter(0, rec(1, 0, 0x10)))
		require.NoError(t, enter(1, rec(1, 0, 0x20)), "another stream")
		require.NoError(t, enter(0, rec(2, 0, 0x10)))
		require.NoError(t, enter(1, rec(2, 1, 0x10)), "another GPU")
		require.NoError(t, enter(0, rec(3, -1, 0)))
		require.NoError(t, enter(1, rec(3, -1, 0)), "host ranks")
		require.NoError(t, enter(0, rec(4, 0, 0)))
		err := enter(1, rec(4, 0, 0))
		require.ErrorIs(t, err, errs.ErrInvalidArgument)
		assert.Contains(t, err.Error(), "ranks 0 and 1 share GPU 0 and enqueued collective #4 on the same stream (0x0)")
	}
}
