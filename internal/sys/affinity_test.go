package sys

import (
	"runtime"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// TestAffinity: this process may run on as many CPUs as Go counts, each
// named once, ascending.
func TestAffinity(t *testing.T) {
	cpus, err := Affinity()
	require.NoError(t, err)
	assert.Len(t, cpus, runtime.NumCPU())
	for i := 1; i < len(cpus); i++ {
		assert.Less(t, cpus[i-1], cpus[i])
	}
}

// TestMoveTo: the thread lands on each CPU it may run on (by getcpu, right
// after, in one of a few tries: the kernel may move it on at once) and
// keeps its mask; a CPU outside the mask is refused, the mask unchanged.
func TestMoveTo(t *testing.T) {
	runtime.LockOSThread()
	defer runtime.UnlockOSThread()
	cpus, err := Affinity()
	require.NoError(t, err)
	for _, cpu := range cpus {
		landed := false
		for range 5 {
			require.NoError(t, MoveTo(cpu))
			if got, ok := getcpu(); ok && got == cpu {
				landed = true
				break
			}
		}
		assert.True(t, landed, "cpu %d", cpu)
		after, err := Affinity()
		require.NoError(t, err)
		assert.Equal(t, cpus, after, "the mask after moving to %d", cpu)
	}
	for _, bad := range []int{-1, 1 << 20} {
		assert.ErrorContains(t, MoveTo(bad), "not in this thread's affinity")
	}
	after, err := Affinity()
	require.NoError(t, err)
	assert.Equal(t, cpus, after)
}
