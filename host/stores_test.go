package host

import (
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/ringo-ccl/ringo/internal/mem"
)

// TestStores: small calls do not choose; a class's first calls time each
// kind warmTimes times, then it runs the faster, trying the other exploreRun calls in a row
// every exploreEvery calls; it follows the machine when the other kind
// becomes faster, even where the first call after a change of kind is
// slow; a slow first call or one preempted call does not hold it on the
// slower kind; classes learn apart.
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
	// left), 100× for the class's first call and 1000× for a preempted one.
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
	count := func(stream bool) (n int) {
		for _, k := range kinds {
			if k == stream {
				n++
			}
		}
		return n
	}

	run(2 * (warmTimes + 1))
	assert.Equal(t, []bool{false, false, false, true, true, true}, kinds, "each kind timed twice first, after an untimed call")
	run(2 * exploreEvery)
	assert.Equal(t, 2*exploreRun, count(true), "cached, the faster, but for %d explorations: %v", 2, kinds)
	assert.False(t, kinds[len(kinds)-1])

	preempt = calls + 1 // the next call, cached, is preempted
	run(exploreEvery)
	assert.Equal(t, exploreRun, count(true), "one preempted call does not turn the class: %v", kinds)

	streamedFaster = true // the machine changes
	run(2 * exploreEvery)
	assert.True(t, kinds[len(kinds)-1], "follows the change: %v", kinds)
	run(exploreEvery)
	assert.Equal(t, exploreRun, count(false), "then streams but for explorations: %v", kinds)

	streamedFaster = false // and back, though every change of kind costs a slow call
	run(2 * exploreEvery)
	assert.False(t, kinds[len(kinds)-1], "follows the change back: %v", kinds)

	class, stream = s.pick(64 << 20)
	assert.Equal(t, 27, class)
	assert.False(t, stream, "a new class starts with cached stores")
}
