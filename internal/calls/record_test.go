package calls

import (
	"sync/atomic"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/ringo-ccl/ringo/bootstrap"
	"github.com/ringo-ccl/ringo/internal/errs"
	"github.com/ringo-ccl/ringo/reduce"
	"github.com/ringo-ccl/ringo/ring"
)

// TestRecordRoundTrip: what RINGO_CHECK exchanges reads back as the
// record, less what is not exchanged (its stream, whether it is done);
// another length is refused.
func TestRecordRoundTrip(t *testing.T) {
	rec := Record{Seq: 7, Coll: ring.Broadcast, Count: 1 << 40, Type: reduce.BF16, Op: reduce.OpKind(2), Root: 3,
		Done: true, Stream: Stream{GPU: 1, Handle: 0x10}}
	got, err := Decode(rec.Encode())
	require.NoError(t, err)
	want := rec
	want.Done, want.Stream = false, Stream{}
	assert.Equal(t, want, got)
	_, err = Decode(rec.Encode()[1:])
	assert.Error(t, err)
}

// TestMismatch: ranks disagreeing on a collective's shape are named; the
// op of a collective that does not reduce and the root of one without a
// root do not count.
func TestMismatch(t *testing.T) {
	a := Record{Seq: 1, Coll: ring.AllGather, Count: 8, Type: reduce.Float32, Op: 1, Root: 0}
	b := a
	b.Op, b.Root = 2, 5
	assert.NoError(t, a.Mismatch(0, b, 1))
	b.Count = 9
	err := a.Mismatch(0, b, 1)
	require.ErrorIs(t, err, errs.ErrInvalidArgument)
	assert.Contains(t, err.Error(), "collective #1 differs between ranks: rank 0 called")
}

// TestReplayRecord: a graph's replay is numbered as a call and agrees with
// another rank's replay, but not with a collective of the same number,
// even one of no elements; RINGO_CHECK exchanges it as it is.
func TestReplayRecord(t *testing.T) {
	s := Stream{GPU: 0, Handle: 0x10}
	a, b := Replay(4, s), Replay(4, Stream{GPU: 0, Handle: 0x11})
	assert.NoError(t, a.Mismatch(0, b, 1))
	call := Record{Seq: 4, Coll: ring.AllReduce, Type: reduce.Float32}
	err := a.Mismatch(0, call, 1)
	require.ErrorIs(t, err, errs.ErrInvalidArgument)
	assert.Contains(t, err.Error(), "rank 0 called a CUDA graph's replay, rank 1 called allreduce(count 0")
	got, err := Decode(a.Encode())
	require.NoError(t, err)
	assert.Equal(t, Record{Seq: 4, Count: ReplayCount}, got)
}

// TestStallReport: ranks behind, inside, past, silent and gone are each
// named.
func TestStallReport(t *testing.T) {
	ps := []bootstrap.Progress{
		bootstrap.NewProgress(0, 4, false),
		bootstrap.NewProgress(1, 3, true),
		bootstrap.NewProgress(2, 5, true),
		{Rank: 3, State: bootstrap.Silent},
		{Rank: 4, State: bootstrap.Gone},
	}
	assert.Equal(t, "collective #4: ranks that never called it [1], ranks still inside it [0], ranks past it [2], ranks not answering [3], ranks gone [4] (rank 1 at #3)",
		StallReport(4, ps))
}

// gpuRec is rank's seq-th call on GPU gpu, on a stream of its own.
func gpuRec(seq uint64, gpu, rank int) Record {
	return Record{Seq: seq, Coll: ring.AllReduce, Count: 8, Type: reduce.Float32, Stream: Stream{GPU: gpu, Handle: uintptr(0x100 + rank)}}
}

// within fails the test unless enter returns within 30 s (a wait that
// should not happen would last an hour).
func within(t *testing.T, what string, enter func() error) {
	t.Helper()
	done := make(chan error, 1)
	go func() { done <- enter() }()
	select {
	case err := <-done:
		require.NoError(t, err, what)
	case <-time.After(30 * time.Second):
		t.Fatalf("%s: still waiting", what)
	}
}

// TestTableOrder: a GPU rank's call waits until every other rank of its
// GPU has left the call before — not for a rank of another GPU, nor past
// the bound, nor in a host call.
func TestTableOrder(t *testing.T) {
	tab := NewTable(3)
	tab.wait = time.Hour
	for r := range 3 { // ranks 0 and 1 on GPU 0, rank 2 on GPU 1
		require.NoError(t, tab.Enter(r, gpuRec(1, r/2, r)))
		tab.Leave(r)
	}
	within(t, "rank 2, alone on its GPU", func() error { return tab.Enter(2, gpuRec(2, 1, 2)) })
	within(t, "rank 0, its peer past the call before", func() error { return tab.Enter(0, gpuRec(2, 0, 0)) })
	tab.Leave(0)

	var left atomic.Bool
	third := make(chan bool, 1)
	go func() {
		err := tab.Enter(0, gpuRec(3, 0, 0)) // rank 1 has not left its second
		third <- err == nil && left.Load()
	}()
	require.NoError(t, tab.Enter(1, gpuRec(2, 0, 1)))
	left.Store(true)
	tab.Leave(1)
	select {
	case ok := <-third:
		assert.True(t, ok, "rank 0's third call entered before rank 1 left its second")
	case <-time.After(30 * time.Second):
		t.Fatal("rank 0's third call still waits after rank 1 left its second")
	}
	tab.Leave(0)

	tab.wait = time.Millisecond
	within(t, "past the bound", func() error { return tab.Enter(0, gpuRec(4, 0, 0)) }) // rank 1 at its second
	tab.Leave(0)
	tab.wait = time.Hour
	host := Record{Seq: 5, Coll: ring.AllReduce, Count: 8, Type: reduce.Float32, Stream: Stream{GPU: -1}}
	within(t, "a host call", func() error { return tab.Enter(0, host) })
	tab.Leave(0)
	tab.Unordered()
	within(t, "unordered", func() error { return tab.Enter(0, gpuRec(6, 0, 0)) }) // rank 1 still at its second
}
