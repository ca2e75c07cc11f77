package transport

import (
	"context"
	"sync/atomic"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/ringo-ccl/ringo/internal/errs"
	"github.com/ringo-ccl/ringo/internal/mem"
	"github.com/ringo-ccl/ringo/internal/sys"
)

// placeAs is a Cores that always says place and counts its questions.
type placeAs struct {
	place Place
	asked atomic.Int64
	me    atomic.Uint32 // the core it was last asked about
}

func (p *placeAs) Place(me uint32) Place {
	p.asked.Add(1)
	p.me.Store(me)
	return p.place
}

// TestWaiterPlaces: a crowded wait (YieldCores) asks its Cores how to
// pause at each of its first awayPolls pauses past the spin — polling on
// while they say Away, yielding while Near — and no more after, about a
// core; a producer's post and ring end it, and
// nothing ends it but the deadline when nothing comes. Where the core
// cannot be read, it never asks.
func TestWaiterPlaces(t *testing.T) {
	if sys.CPU() < 0 {
		var w Waiter
		w.Reset(context.Background(), 20*time.Millisecond)
		w.YieldCores()
		cores := &placeAs{place: Away}
		var c atomic.Uint64
		require.ErrorIs(t, w.WaitAtLeastWarm(&c, 1, Bell{}, nil, cores), errs.ErrTimeout)
		assert.Zero(t, cores.asked.Load(), "asked where the core cannot be read")
		t.Skip("this host's core cannot be read (sys.CPU): the places are not used")
	}
	for _, place := range []Place{Near, Away} {
		b := mem.Alloc(64, 64)
		bell := BellAt(b, 0)
		c := mem.Word(b, 8)
		var w Waiter
		w.Reset(context.Background(), time.Minute)
		w.YieldCores()
		cores := &placeAs{place: place}
		waited := make(chan error, 1)
		go func() { waited <- w.WaitAtLeastWarm(c, 1, bell, nil, cores) }()
		require.Eventually(t, func() bool { return bell.sleepers.Load() != 0 }, time.Minute, 100*time.Microsecond,
			"%d: the waiter never slept on the bell", place)
		assert.Equal(t, int64(awayPolls), cores.asked.Load(), "place %d: questions before the wait slept", place)
		c.Store(1)
		bell.RingAll()
		require.NoError(t, <-waited, "place %d", place)
		assert.NotZero(t, cores.me.Load(), "place %d: asked about no core", place)

		w.Reset(context.Background(), 20*time.Millisecond)
		w.YieldCores()
		start := time.Now()
		require.ErrorIs(t, w.WaitAtLeastWarm(c, 2, bell, nil, cores), errs.ErrTimeout, "place %d", place)
		assert.Less(t, time.Since(start), 10*time.Second, "place %d", place) // 20 ms, generously on a busy machine
	}
}

// TestWaiterAgain: Again starts a call under its own context with the
// last Reset's timeout, aborts and pauses: the timeout counts afresh (from
// the new call's first pause), a context's deadline replaces it, a
// cancelled context and a raised abort end the wait.
func TestWaiterAgain(t *testing.T) {
	var w Waiter
	var abort Abort
	var c atomic.Uint64
	w.Reset(context.Background(), 20*time.Millisecond, &abort)
	w.YieldCores()
	require.ErrorIs(t, w.WaitAtLeast(&c, 1, Bell{}), errs.ErrTimeout)

	w.Again(context.Background())
	assert.Zero(t, w.deadline.Load(), "the call before's deadline")
	assert.True(t, w.bounded, "the timeout")
	assert.True(t, w.osYield, "the pauses set since Reset")

	ctx, cancel := context.WithCancel(context.Background())
	cancel()
	w.Again(ctx)
	require.ErrorIs(t, w.WaitAtLeast(&c, 1, Bell{}), context.Canceled)

	ctx, cancel = context.WithTimeout(context.Background(), time.Hour)
	defer cancel()
	w.Again(ctx)
	assert.False(t, w.bounded, "a context with a deadline")
	abort.Set(errs.ErrAborted)
	require.ErrorIs(t, w.WaitAtLeast(&c, 1, Bell{}), errs.ErrAborted)
}
