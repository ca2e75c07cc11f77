package host

import (
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/ringo-ccl/ringo/internal/mem"
)

// TestStores: small calls do not choose; a class runs each kind of store
// twice, then the faster, trying the other every exploreEvery calls, and
// turns when the other becomes faster; classes learn apart.
func TestStores(t *testing.T) {
	if !mem.HasStream {
		t.Skip("no non-temporal stores on this architecture")
	}
	var s stores
	class, stream := s.pick(streamMinBytes - 1)
	assert.Equal(t, -1, class)
	assert.False(t, stream)

	// took returns a call's time by kind: streamed is faster while fast.
	fast := true
	took := func(stream bool) time.Duration {
		if stream == fast {
			return 10 * time.Microsecond
		}
		return 30 * time.Microsecond
	}
	var kinds []bool
	run := func(calls int) {
		kinds = kinds[:0]
		for range calls {
			class, stream := s.pick(1 << 20)
			require.Equal(t, 21, class)
			kinds = append(kinds, stream)
			s.done(class, stream, took(stream))
		}
	}
	run(4)
	assert.Equal(t, []bool{false, true, false, true}, kinds, "each kind twice first")
	run(exploreEvery)
	explored := 0
	for _, k := range kinds {
		if !k {
			explored++
		}
	}
	assert.Equal(t, 1, explored, "the slower kind once in %d calls: %v", exploreEvery, kinds)

	fast = false // the machine changes: cached stores are faster now
	run(4 * exploreEvery)
	assert.False(t, kinds[len(kinds)-1], "follows the change: %v", kinds)

	class, stream = s.pick(64 << 20)
	assert.Equal(t, 27, class)
	assert.False(t, stream, "a new class starts with cached stores")
}
