package group

import (
	"context"
	"errors"
	"sync"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/ringo-ccl/ringo/internal/calls"
	"github.com/ringo-ccl/ringo/internal/errs"
)

// TestWorld: a world's ranks disagreeing on a call are refused; Fail
// breaks every rank; Done runs once, when the last rank is released.
func TestWorld(t *testing.T) {
	done := 0
	w := NewWorld(2, nil, func() error { done++; return nil })
	require.NoError(t, w.Enter(0, &calls.Record{Seq: 1, Count: 8, Stream: calls.Stream{GPU: -1}}))
	require.Error(t, w.Enter(1, &calls.Record{Seq: 1, Count: 9, Stream: calls.Stream{GPU: -1}}))

	cause := errors.New("rank 0 called Abort")
	w.Fail(cause)
	assert.ErrorIs(t, w.Broken().Err(), cause)

	require.NoError(t, w.Release(0))
	assert.Equal(t, 0, done)
	require.NoError(t, w.Release(1))
	assert.Equal(t, 1, done)
}

// TestWorldLose: a rank marked lost fails the world with ErrPeerLost
// naming it, and Lost lists it; Revoke fails it with ErrRevoked.
func TestWorldLose(t *testing.T) {
	w := NewWorld(3, nil, func() error { return nil })
	assert.Empty(t, w.Lost())
	w.Lose(2, "gone for the test")
	err := w.Broken().Err()
	require.ErrorIs(t, err, errs.ErrPeerLost)
	assert.ErrorContains(t, err, "rank 2 lost: gone for the test")
	assert.Equal(t, []int{2}, w.Lost())

	w = NewWorld(2, nil, func() error { return nil })
	w.Revoke("rank 1 called Revoke")
	require.ErrorIs(t, w.Broken().Err(), errs.ErrRevoked)
}

// meetAll has ranks meet in w, each with its own members and ctx, and
// returns their results and errors by rank.
func meetAll(w *World, ctx func(r int) context.Context, members map[int][]int) (map[int]any, map[int]error) {
	var mu sync.Mutex
	var wg sync.WaitGroup
	res, errs := map[int]any{}, map[int]error{}
	made := 0
	for r, m := range members {
		wg.Go(func() {
			got, err := w.Meet(ctx(r), "shrink", r, m, r*10, func(values map[int]any) (map[int]any, error) {
				made++
				out := map[int]any{}
				for q, v := range values {
					out[q] = v.(int) + 1
				}
				return out, nil
			})
			mu.Lock()
			res[r], errs[r] = got, err
			mu.Unlock()
		})
	}
	wg.Wait()
	if made > 1 {
		panic("the maker ran twice")
	}
	return res, errs
}

// TestMeet: members that agree get their results from one run of the
// maker; members that disagree all fail naming it, whichever comes first;
// a member whose ctx ends fails every member, naming the ranks that never
// came.
func TestMeet(t *testing.T) {
	bg := func(int) context.Context { return context.Background() }
	w := NewWorld(4, nil, nil)
	res, errs := meetAll(w, bg, map[int][]int{0: {0, 1, 3}, 1: {0, 1, 3}, 3: {0, 1, 3}})
	for _, r := range []int{0, 1, 3} {
		require.NoError(t, errs[r])
		assert.Equal(t, r*10+1, res[r])
	}
	for range 20 { // the arrival order varies
		_, errs = meetAll(w, bg, map[int][]int{0: {0, 1, 2}, 1: {0, 1, 2}, 2: {0, 2}})
		for r, err := range errs {
			assert.ErrorContains(t, err, "the ranks disagree on who takes part in the shrink", "rank %d", r)
		}
	}
	ended, cancel := context.WithCancel(context.Background())
	cancel()
	_, errs = meetAll(w, func(r int) context.Context {
		if r == 1 {
			return ended
		}
		return context.Background()
	}, map[int][]int{0: {0, 1, 3}, 1: {0, 1, 3}})
	for r, err := range errs {
		assert.ErrorContains(t, err, "gave up waiting for ranks", "rank %d", r)
	}
	// Rank 3, awaited by the failed meeting, fails as it comes.
	_, errs = meetAll(w, bg, map[int][]int{3: {0, 1, 3}})
	assert.ErrorContains(t, errs[3], "gave up waiting for ranks")
}
