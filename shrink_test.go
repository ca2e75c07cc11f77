package ringo_test

import (
	"context"
	"fmt"
	"math/rand/v2"
	"runtime"
	"slices"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/ringo-ccl/ringo"
)

// Surviving a lost rank with ranks in one process (NewLocal): a rank is
// marked lost (ringo.Lose, the test's stand-in for a process that dies),
// the survivors learn who (Lost), shrink, and carry on. The same across
// processes, with kill -9: shrink_proc_test.go and TestFaultShrinkRandom.

// testCtx is a context for a test's calls: generous, for a busy machine.
func testCtx(t *testing.T) context.Context {
	ctx, cancel := context.WithTimeout(context.Background(), 2*time.Minute)
	t.Cleanup(cancel)
	return ctx
}

// closeAll closes comms when the test ends.
func closeAll(t *testing.T, comms []*ringo.Comm) {
	t.Cleanup(func() {
		for _, c := range comms {
			if c != nil {
				assert.NoError(t, c.Close(), "close rank %d", c.Rank())
			}
		}
	})
}

// shrinkEach has the ranks of survivors shrink comms (ShrinkAbort with
// abort, else Shrink) excluding exclude, each on its goroutine, and
// returns the new communicator's ranks, by new rank, closed when the test
// ends.
func shrinkEach(t *testing.T, comms []*ringo.Comm, survivors, exclude []int, abort bool) []*ringo.Comm {
	t.Helper()
	ctx := testCtx(t)
	out := make([]*ringo.Comm, len(survivors))
	errs := make([]error, len(survivors))
	done := make(chan struct{})
	for i, r := range survivors {
		go func() {
			defer func() { done <- struct{}{} }()
			shrink := comms[r].Shrink
			if abort {
				shrink = comms[r].ShrinkAbort
			}
			out[i], errs[i] = shrink(ctx, exclude, nil)
		}()
	}
	for range survivors {
		<-done
	}
	closeAll(t, out)
	for i, err := range errs {
		require.NoError(t, err, "rank %d", survivors[i])
		require.Equal(t, i, out[i].Rank(), "old rank %d", survivors[i])
		require.Equal(t, len(survivors), out[i].Size())
	}
	return out
}

// allReduceOK runs one all-reduce on every rank of comms and checks it.
func allReduceOK(t *testing.T, comms []*ringo.Comm) {
	t.Helper()
	n := len(comms)
	recvs := make([][]float32, n)
	noErrors(t, each(comms, func(r int, c *ringo.Comm) error {
		send := make([]float32, 1000)
		for i := range send {
			send[i] = float32(r*1000 + i)
		}
		recvs[r] = make([]float32, len(send))
		return ringo.AllReduce(bg, c, send, recvs[r], ringo.OpSum)
	}))
	for r := range n {
		for i, v := range recvs[r] {
			want := float32(0)
			for q := range n {
				want += float32(q*1000 + i)
			}
			require.Equal(t, want, v, "rank %d element %d", r, i)
		}
	}
}

// TestShrinkLocalAfterLoss: three ranks wait in an all-reduce for a
// fourth, which is lost; their calls end with ErrPeerLost naming it, Lost
// lists it on every survivor, and ShrinkAbort with that list gives a
// communicator of the three, renumbered in order, on which every
// collective, datatype and op is bit-exact — with the plain ring, and with
// the hierarchical variant (its sub-communicators' waits end with their
// parent's).
func TestShrinkLocalAfterLoss(t *testing.T) {
	for _, cfg := range []*ringo.Config{nil, {Variant: "hierarchical", Group: 2}} {
		t.Run(fmt.Sprint(cfg != nil), func(t *testing.T) { shrinkAfterLoss(t, cfg) })
	}
}

func shrinkAfterLoss(t *testing.T, cfg *ringo.Config) {
	comms := newComms(t, 4, cfg)
	survivors := []int{0, 1, 3}
	errs := make(chan error, len(survivors))
	for _, r := range survivors {
		go func() {
			buf := make([]float32, 100)
			errs <- ringo.AllReduce(bg, comms[r], buf, buf, ringo.OpSum)
		}()
	}
	ringo.Lose(comms[2])
	for range survivors {
		err := <-errs
		require.ErrorIs(t, err, ringo.ErrPeerLost)
		assert.ErrorContains(t, err, "rank 2 lost")
	}
	for _, r := range survivors {
		assert.Equal(t, []int{2}, comms[r].Lost(), "rank %d", r)
	}
	shrunk := shrinkEach(t, comms, survivors, comms[0].Lost(), true)
	everyTypeAndOp(t, shrunk, rand.New(rand.NewPCG(21, 1)))
}

// TestShrinkAbortEndsStuckCall: ShrinkAbort, called on another goroutine
// while this rank's all-reduce waits for ranks that never come, ends that
// call with ErrAborted and shrinks; ranks that were idle shrink in the
// default mode beside it.
func TestShrinkAbortEndsStuckCall(t *testing.T) {
	comms := newComms(t, 3, nil)
	stuck := make(chan error, 1)
	go func() {
		buf := make([]float32, 100)
		stuck <- ringo.AllReduce(bg, comms[0], buf, buf, ringo.OpSum)
	}()
	ctx := testCtx(t)
	shrunk := make([]*ringo.Comm, 3)
	errs := each(comms, func(r int, c *ringo.Comm) (err error) {
		if r == 0 {
			shrunk[r], err = c.ShrinkAbort(ctx, nil, nil)
		} else {
			shrunk[r], err = c.Shrink(ctx, nil, nil)
		}
		return err
	})
	closeAll(t, shrunk)
	noErrors(t, errs)
	err := <-stuck
	require.ErrorIs(t, err, ringo.ErrAborted)
	assert.ErrorContains(t, err, "rank 0 called ShrinkAbort")
	allReduceOK(t, shrunk)
}

// TestRevokeLocal: a rank's Revoke ends the others' calls in progress and
// every later call, its own included, with ErrRevoked naming it; the
// revoked communicator shrinks in the default mode.
func TestRevokeLocal(t *testing.T) {
	comms := newComms(t, 3, nil)
	errs := make(chan error, 2)
	for _, r := range []int{0, 1} {
		go func() {
			buf := make([]float32, 100)
			errs <- ringo.AllReduce(bg, comms[r], buf, buf, ringo.OpSum)
		}()
	}
	comms[2].Revoke()
	for range 2 {
		err := <-errs
		require.ErrorIs(t, err, ringo.ErrRevoked)
		require.ErrorIs(t, err, ringo.ErrAborted)
		assert.ErrorContains(t, err, "rank 2 called Revoke")
	}
	buf := make([]float32, 10)
	for _, c := range comms {
		require.ErrorIs(t, ringo.AllReduce(bg, c, buf, buf, ringo.OpSum), ringo.ErrRevoked)
		require.ErrorIs(t, c.Err(), ringo.ErrRevoked)
		assert.Empty(t, c.Lost())
	}
	allReduceOK(t, shrinkEach(t, comms, []int{0, 1, 2}, nil, false))
}

// TestShrinkLocalDefault: healthy ranks drop a live one (the default
// mode); the new communicator works, and so does the old one, on all its
// ranks.
func TestShrinkLocalDefault(t *testing.T) {
	comms := newComms(t, 4, nil)
	shrunk := shrinkEach(t, comms, []int{0, 2, 3}, []int{1}, false)
	allReduceOK(t, shrunk)
	allReduceOK(t, comms)
}

// TestShrinkBadInput: a bad exclude list is refused before anything
// starts, naming what is wrong, and leaves the communicator usable;
// shrinking a closed communicator is refused; ranks that disagree on whom
// to exclude all fail, naming the disagreement.
func TestShrinkBadInput(t *testing.T) {
	comms := newComms(t, 4, nil)
	ctx := testCtx(t)
	for _, c := range []struct {
		exclude []int
		want    string
	}{
		{[]int{4}, "exclude[0] = 4 is no rank of this communicator of 4 ranks (0…3)"},
		{[]int{2, -1}, "exclude[1] = -1 is no rank"},
		{[]int{1, 2, 1}, "rank 1 is excluded twice (exclude[0] and exclude[2])"},
		{[]int{3, 2, 1, 0}, "exclude names every rank of this communicator of 4 ranks: none would remain"},
		{[]int{0, 2}, "exclude names this rank (0): an excluded rank does not call Shrink"},
	} {
		for _, abort := range []bool{false, true} {
			shrink := comms[0].Shrink
			if abort {
				shrink = comms[0].ShrinkAbort
			}
			nc, err := shrink(ctx, c.exclude, nil)
			require.Nil(t, nc)
			require.ErrorIs(t, err, ringo.ErrInvalidArgument, "exclude %v", c.exclude)
			assert.ErrorContains(t, err, c.want)
			assert.ErrorContains(t, err, "shrink rank 0")
		}
	}
	require.NoError(t, comms[0].Err(), "a refused shrink left the communicator broken")
	allReduceOK(t, comms)

	// Ranks 0 and 1 exclude rank 3; rank 2 excludes ranks 1 and 3.
	excludes := map[int][]int{0: {3}, 1: {3}, 2: {1, 3}}
	errs := each(comms, func(r int, c *ringo.Comm) error {
		nc, err := c.Shrink(ctx, excludes[r], nil)
		if nc != nil {
			nc.Close()
		}
		return err
	}, 3)
	for r := range 3 {
		require.Error(t, errs[r], "rank %d", r)
		assert.ErrorContains(t, errs[r], "the ranks disagree on who takes part in the shrink", "rank %d", r)
	}

	c := newComms(t, 2, nil)[1]
	require.NoError(t, c.Close())
	_, err := c.Shrink(ctx, []int{0}, nil)
	require.ErrorIs(t, err, ringo.ErrInvalidArgument)
	assert.ErrorContains(t, err, "communicator is closed")
	_, err = c.ShrinkAbort(ctx, []int{0}, nil)
	assert.ErrorContains(t, err, "communicator is closed")
}

// TestShrinkLocalNoLeak: shrink cycles — a world of 4, a rank lost at
// random, the survivors shrink and all-reduce, everything closed — leave
// no goroutine behind. It must not run in parallel with other tests.
func TestShrinkLocalNoLeak(t *testing.T) {
	cycle := func(rng *rand.Rand) {
		comms, err := ringo.NewLocal(4, nil)
		require.NoError(t, err)
		victim := rng.IntN(4)
		ringo.Lose(comms[victim])
		var survivors []int
		for r := range 4 {
			if r != victim {
				survivors = append(survivors, r)
			}
		}
		t.Run(fmt.Sprintf("lose %d", victim), func(t *testing.T) {
			shrunk := shrinkEach(t, comms, survivors, []int{victim}, true)
			allReduceOK(t, shrunk)
		})
		for _, c := range comms {
			require.NoError(t, c.Close())
		}
	}
	rng := rand.New(rand.NewPCG(22, 1))
	cycle(rng) // warm up whatever is made once
	before := runtime.NumGoroutine()
	for range 20 {
		cycle(rng)
	}
	deadline := time.Now().Add(30 * time.Second)
	for runtime.NumGoroutine() > before && time.Now().Before(deadline) {
		time.Sleep(10 * time.Millisecond)
	}
	assert.LessOrEqual(t, runtime.NumGoroutine(), before, "goroutines after 20 shrink cycles")
}

// TestSplitLocal: Split of in-process ranks: each color's ranks, ordered
// by key then rank, form a communicator that works; a negative color gets
// nil; the parent still works.
func TestSplitLocal(t *testing.T) {
	comms := newComms(t, 5, nil)
	ctx := testCtx(t)
	colors := []int{1, 0, 1, -1, 0}
	keys := []int{0, 7, -3, 0, 7}
	subs := make([]*ringo.Comm, 5)
	noErrors(t, each(comms, func(r int, c *ringo.Comm) (err error) {
		subs[r], err = c.Split(ctx, colors[r], keys[r], nil)
		return err
	}))
	closeAll(t, subs)
	require.Nil(t, subs[3])
	for r, want := range map[int][2]int{0: {1, 2}, 2: {0, 2}, 1: {0, 2}, 4: {1, 2}} {
		assert.Equal(t, want, [2]int{subs[r].Rank(), subs[r].Size()}, "rank %d", r)
	}
	allReduceOK(t, []*ringo.Comm{subs[2], subs[0]})
	allReduceOK(t, []*ringo.Comm{subs[1], subs[4]})
	allReduceOK(t, comms)
}

// TestGrowLocal: two ranks of one process grow to three with a new rank
// that joins with the id the coordinator made; the grown communicator
// runs every collective right, and the old one still works. Bad grows are
// refused, naming what is wrong.
func TestGrowLocal(t *testing.T) {
	comms := newComms(t, 2, nil)
	ctx := testCtx(t)
	_, err := comms[0].Grow(ctx, 2, nil, nil)
	require.ErrorIs(t, err, ringo.ErrInvalidArgument)
	assert.ErrorContains(t, err, "grow to 2 ranks: the communicator has 2 already")

	id, err := comms[1].GrowID()
	require.NoError(t, err)
	grown := make([]*ringo.Comm, 3)
	errs := make([]error, 3)
	done := make(chan struct{})
	for r := range 3 {
		go func() {
			defer func() { done <- struct{}{} }()
			switch r {
			case 2:
				grown[r], errs[r] = ringo.JoinGrow(ctx, id, 3, 2, nil)
			case 1:
				grown[r], errs[r] = comms[r].Grow(ctx, 3, &id, nil)
			default:
				grown[r], errs[r] = comms[r].Grow(ctx, 3, nil, nil)
			}
		}()
	}
	for range 3 {
		<-done
	}
	closeAll(t, grown)
	noErrors(t, errs)
	for r, c := range grown {
		require.Equal(t, r, c.Rank())
		require.Equal(t, 3, c.Size())
	}
	noErrors(t, each(grown, func(r int, c *ringo.Comm) error { return checkEvery(ctx, c, 3, r) }))
	allReduceOK(t, comms)

	// Nobody passes the id: every rank fails alike.
	errs = each(comms, func(r int, c *ringo.Comm) error {
		_, err := c.Grow(ctx, 3, nil, nil)
		return err
	})
	for r, err := range errs {
		assert.ErrorContains(t, err, "no rank passed the grow id", "rank %d", r)
	}
	// An id made and never used: Close stops its root.
	_, err = comms[0].GrowID()
	require.NoError(t, err)
}

// TestSurvivorsOrder: a shrink's new ranks follow the old ranks' order,
// whatever the order of exclude.
func TestSurvivorsOrder(t *testing.T) {
	comms := newComms(t, 5, nil)
	shrunk := shrinkEach(t, comms, []int{1, 2, 4}, []int{3, 0}, false)
	for i, c := range shrunk {
		assert.Equal(t, i, c.Rank())
	}
	assert.True(t, slices.IsSorted([]int{1, 2, 4}))
	allReduceOK(t, shrunk)
}
