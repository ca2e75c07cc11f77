package ringtest_test

import (
	"bytes"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/ringo-ccl/ringo/ring"
	"github.com/ringo-ccl/ringo/ring/ringtest"
)

// TestDirectAllGatherVerifies: a plan whose steps name every other rank —
// no ring — runs to completion and computes the all-gather (Verify), and
// round-trips through a version-2 schedule; as a version-1 document, which
// names only ring neighbours, it is refused.
func TestDirectAllGatherVerifies(t *testing.T) {
	for _, spec := range []ring.Spec{
		{Coll: ring.AllGather, Ring: ring.Identity(4), Count: 96, EltSize: 4, Channels: 2, Proto: ring.Simple, BuffSize: 8 * 1024},
		{Coll: ring.AllGather, Ring: ring.Identity(3), Count: 40, EltSize: 2, Channels: 1, Proto: ring.LL, BuffSize: 8 * 512},
		{Coll: ring.AllGather, Ring: ring.Identity(2), Count: 7, EltSize: 1, Channels: 1, Proto: ring.Simple, BuffSize: 8 * 64},
	} {
		plans, err := ringtest.DirectAllGather(spec)
		require.NoError(t, err)
		require.NoError(t, ring.Verify(plans), "%v", spec)

		d, err := ring.NewSchedule(plans)
		require.NoError(t, err)
		assert.Equal(t, ring.ScheduleVersion, d.Version)
		var buf bytes.Buffer
		require.NoError(t, d.Write(&buf))
		back, err := ring.ReadSchedule(&buf)
		require.NoError(t, err)
		got, err := back.Plans()
		require.NoError(t, err)
		for r := range plans {
			assert.Equal(t, plans[r].Channels, got[r].Channels, "rank %d", r)
		}

		if spec.Ring.Size() > 2 {
			back.Version = 1
			_, err = back.Plans()
			assert.ErrorContains(t, err, "version-1 schedule names only ring neighbours")
		}
	}
}
