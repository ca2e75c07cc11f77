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
	"github.com/ringo-ccl/ringo/transport"
)

// TestTwoShot: 200 random all-reduces — sum, max and avg (whose
// pre-operation each rank applies as it loads its slot), in and out of
// place, of up to 9 rounds — on 3 ranks in a row, each output checked.
// Those small enough take the one-shot path on the same board, so either
// path's slots are reused while the other's last readers may lag.
func TestTwoShot(t *testing.T) {
	const n, slot = 3, 384 // rounds of 384 bytes, parts of 128
	require.Equal(t, slot, TwoShotChunk(slot, n))
	bs := oneShotBoards(t, n, slot)
	ops := []reduce.Op{reduce.OpSum, reduce.OpMax, reduce.OpAvg}
	checkRandomCalls(t, n, 200, 9*slot/4, []ring.Collective{ring.AllReduce}, ops, func(r int, x *OneShot) error {
		var w transport.Waiter
		w.Reset(context.Background(), 30*time.Second)
		if read, fits := OneShotBytes(x.Coll, x.Bytes, n, slot); fits && read <= slot {
			return RunOneShot(bs[r], &w, r, n, x)
		}
		return RunTwoShot(bs[r], &w, r, n, &TwoShot{In: x.In, Out: x.Out, Bytes: x.Bytes, Func: x.Func})
	})
}

// TestTwoShotChunk: a round's chunk is the most of a slot that splits into
// 64-byte parts, one per rank.
func TestTwoShotChunk(t *testing.T) {
	for _, c := range []struct{ slot, size, want int }{
		{1 << 20, 4, 1 << 20},
		{1 << 20, 3, 1048512}, // 3 × 349504: 64-byte parts
		{384, 3, 384},
		{383, 3, 192},
		{64, 2, 0}, // too small for a part each: the board's slots never are (BoardSlot)
	} {
		assert.Equal(t, c.want, TwoShotChunk(c.slot, c.size), "slot %d, %d ranks", c.slot, c.size)
	}
	assert.Equal(t, TwoShotSlot, TwoShotChunk(BoardSlot(true), 4), "4 crowded ranks: a round per MiB")
}

// TestTwoShotAbort: a rank whose peer never publishes its reduced part ends
// its wait when the communicator breaks, with an error naming the rank
// and the step.
func TestTwoShotAbort(t *testing.T) {
	bs := oneShotBoards(t, 2, 256)
	var w transport.Waiter
	var broken transport.Abort
	w.Reset(context.Background(), time.Minute, &broken)
	f, err := reduce.New(reduce.Float32, reduce.OpSum, 2)
	require.NoError(t, err)
	// Rank 1 loads and publishes its first round, then is lost.
	bs[1].Publish(bs[1].Next())
	time.AfterFunc(20*time.Millisecond, func() { broken.Set(fmt.Errorf("rank 1 lost: %w", errs.ErrPeerLost)) })
	buf := make([]byte, 1024)
	err = RunTwoShot(bs[0], &w, 0, 2, &TwoShot{In: buf, Out: buf, Bytes: len(buf), Func: f})
	require.ErrorIs(t, err, errs.ErrPeerLost)
	assert.Contains(t, err.Error(), "allreduce rank 0 two-shot: waiting for the reduced part (peer rank 1)")
}

// TestTwoShotAllocs: a two-shot all-reduce of several rounds does not
// allocate.
func TestTwoShotAllocs(t *testing.T) {
	const n = 2
	bs := oneShotBoards(t, n, 64<<10)
	f, err := reduce.New(reduce.Float32, reduce.OpSum, n)
	require.NoError(t, err)
	xs := make([]*TwoShot, n)
	for r := range n {
		xs[r] = &TwoShot{In: make([]byte, 1<<18), Out: make([]byte, 1<<18), Bytes: 1 << 18, Func: f}
	}
	assert.Zero(t, twoRankAllocs(t, func(r int, w *transport.Waiter) error { return RunTwoShot(bs[r], w, r, n, xs[r]) }))
}
