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
