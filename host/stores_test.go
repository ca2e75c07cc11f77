package host

import (
	"slices"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/ringo-ccl/ringo/internal/mem"
)

// TestStores: small calls do not choose; after its coldCalls untimed
// calls a class times each kind warmTimes times, then it runs the faster, trying the other
// exploreRun calls in a row exploreEvery calls after choosing, then twice
// as many after each try that confirms the choice, up to exploreMax; it
// follows the machine when the other kind becomes faster, even where the
// first call after a change of kind is slow, and tries again soon after;
// a slow first call or one preempted call does not turn it to the slower
// kind; classes learn apart.
func TestStores(t *testing.T) {
	if !mem.HasStream {
		t.Skip("no non-temporal stores on this architecture")
	}
	var s stores
	class, stream := s.pick(streamMinBytes - 1)
	assert.Equal(t, -1, class)
	assert.False(t, stream)

	// took returns a call's time: the faster kind's 10 µs, the other's
	// 20, plus 50 right after a change of kind (the lines the other kind
	// left), 100×, 20× and 4× for the class's first three calls (first
	// touches) and 1000× for a preempted one.
	streamedFaster := false
	calls, preempt := 0, -1
	last := -1
	took := func(stream bool) time.Duration {
		d := 20 * time.Microsecond
		if stream == streamedFaster {
			d = 10 * time.Microsecond
		}
		k := 0
		if stream {
			k = 1
		}
		if last >= 0 && last != k {
			d += 50 * time.Microsecond
		}
		last = k
		calls++
		switch calls {
		case 1:
			d *= 100
		case 2:
			d *= 20
		case 3:
			d *= 4
		case preempt:
			d *= 1000
		}
		return d
	}
	var kinds []bool
	run := func(n int) {
		kinds = kinds[:0]
		for range n {
			class, stream := s.pick(1 << 20)
			require.Equal(t, 21, class)
			kinds = append(kinds, stream)
			s.done(class, stream, took(stream))
		}
	}
	// tries returns the calls of kinds that start runs of other than
	// chosen, each of exploreRun calls.
	tries := func(chosen bool) (starts []int) {
		for i := 0; i < len(kinds); i++ {
			if kinds[i] == chosen {
				continue
			}
			starts = append(starts, i)
			n := 0
			for ; i < len(kinds) && kinds[i] != chosen; i++ {
				n++
			}
			assert.Equal(t, exploreRun, n, "a try at call %d: %v", starts[len(starts)-1], kinds)
		}
		return starts
	}
	gaps := func(starts []int, from int) (g []int) {
		for _, at := range starts {
			g = append(g, at-from)
			from = at + exploreRun
		}
		return g
	}

	run(coldCalls + 2*warmTimes + 1)
	assert.Equal(t, []bool{false, false, false, false, true, true, true}, kinds, "each kind timed twice first, after untimed calls")
	run(4 * exploreMax)
	assert.Equal(t, []int{32, 64, 128, 256, 512, 512, 512}, gaps(tries(false), 0), "cached, the faster, with tries of streamed ever rarer")

	preempt = calls + 1 // the next call, cached, is preempted
	run(exploreMax)
	assert.Len(t, tries(false), 1, "one preempted call does not turn the class: %v", kinds)

	streamedFaster = true // the machine changes
	run(2 * exploreMax)
	assert.True(t, kinds[len(kinds)-1], "follows the change: %v", kinds)
	// The change shows in a try that the class keeps to: the call after it
	// makes the new choice.
	switched := -1
	for i := 0; i+exploreRun < len(kinds) && switched < 0; i++ {
		if !slices.Contains(kinds[i:i+exploreRun+1], false) {
			switched = i + exploreRun
		}
	}
	require.GreaterOrEqual(t, switched, 0, "%v", kinds)
	kinds = kinds[switched:]
	g := gaps(tries(true), 0)
	require.GreaterOrEqual(t, len(g), 2, "tries after a change: %v", kinds)
	assert.Equal(t, []int{32, 64}, g[:2], "tries again soon after a change")

	streamedFaster = false // and back, though every change of kind costs a slow call
	run(2 * exploreMax)
	assert.False(t, kinds[len(kinds)-1], "follows the change back: %v", kinds)

	class, stream = s.pick(64 << 20)
	assert.Equal(t, 27, class)
	assert.False(t, stream, "a new class starts with cached stores")
}
