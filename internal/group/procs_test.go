package group

import (
	"errors"
	"fmt"
	"sync/atomic"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/ringo-ccl/ringo/internal/errs"
)

// procsWithStop returns a Procs (no bootstrap: fail and Told need none)
// whose kernels' stop counts its calls.
func procsWithStop(grace time.Duration) (*Procs, *atomic.Int32) {
	g := NewProcs(nil, false, 0)
	g.StopGrace = grace
	var stops atomic.Int32
	g.SetStop(func() { stops.Add(1) })
	return g, &stops
}

// TestProcsStopGrace: a lost peer breaks the group at once but, under
// StopGrace, stops the kernels only when the application is told (or the
// grace ends); every other failure, and a loss without a grace, stops
// them at once.
func TestProcsStopGrace(t *testing.T) {
	lost := fmt.Errorf("rank 1 lost: %w", errs.ErrPeerLost)
	revoked := fmt.Errorf("rank 2 called Revoke: %w", errs.ErrRevoked)

	for _, cause := range []error{lost, revoked} {
		g, stops := procsWithStop(time.Hour)
		g.fail(cause, true)
		require.ErrorIs(t, g.Broken().Err(), cause, "the group is broken before the kernels stop")
		assert.Zero(t, stops.Load(), "%v: kernels stopped before the application was told", cause)
		g.Told()
		assert.Equal(t, int32(1), stops.Load(), "%v: Told did not stop the kernels", cause)
		g.stopTimer.Load().Stop()
	}

	g, stops := procsWithStop(time.Millisecond)
	g.fail(lost, true)
	require.Eventually(t, func() bool { return stops.Load() == 1 }, 10*time.Second, time.Millisecond,
		"the grace ended and the kernels did not stop")

	g, stops = procsWithStop(time.Hour)
	g.Told()
	assert.Zero(t, stops.Load(), "Told stopped the kernels of a healthy group")
	g.fail(errors.New("rank 0 called Abort"), false)
	assert.Equal(t, int32(1), stops.Load(), "an abort waited for the grace")

	g, stops = procsWithStop(time.Hour)
	g.fail(lost, false) // this rank's own revocation, or a failed call of its own
	assert.Equal(t, int32(1), stops.Load(), "a failure this rank raised waited for the grace")

	g, stops = procsWithStop(0)
	g.fail(lost, true)
	assert.Equal(t, int32(1), stops.Load(), "without a grace a loss waited")
}
