package peers

import (
	"testing"

	"github.com/stretchr/testify/assert"
)

// TestHostCPUs: a host's ranks run on the union of their affinities — two
// bound to a core each on two, two bound to one core on one, any number
// that may run anywhere on all — and, where a rank could not tell its
// affinity, on the fewest CPUs any may run on.
func TestHostCPUs(t *testing.T) {
	bound := func(cpus ...int) Info { return Info{CPUs: len(cpus), Affinity: cpus} }
	assert.Equal(t, 2, HostCPUs([]Info{bound(0), bound(1)}))
	assert.Equal(t, 1, HostCPUs([]Info{bound(0), bound(0), bound(0)}))
	assert.Equal(t, 4, HostCPUs([]Info{bound(0, 1, 2, 3), bound(0, 1, 2, 3)}))
	assert.Equal(t, 3, HostCPUs([]Info{bound(0, 1), bound(1, 2)}))
	assert.Equal(t, 1, HostCPUs([]Info{bound(0), {CPUs: 8}}), "no affinity: the fewest CPUs")
	assert.Equal(t, 4, HostCPUs([]Info{{CPUs: 4}, bound(0, 1, 2, 3, 4, 5)}))
	assert.Equal(t, 1, HostCPUs([]Info{{CPUs: 8}, bound(0)}), "the fewest of every rank's, not of those before the one without")
}

// TestCoreShare: ranks that may all run on the same cores share them
// evenly, rounded down; where any rank's affinity differs or is not known,
// there is no share.
func TestCoreShare(t *testing.T) {
	bound := func(cpus ...int) Info { return Info{CPUs: len(cpus), Affinity: cpus} }
	all := bound(0, 1)
	assert.Equal(t, 2, CoreShare([]Info{all, all, all, all}))
	assert.Equal(t, 1, CoreShare([]Info{all, all, all}))
	assert.Equal(t, 4, CoreShare([]Info{all, all, all, all, all, all, all, all, all}))
	assert.Equal(t, 0, CoreShare([]Info{all, all, all, bound(0)}), "one rank bound apart")
	assert.Equal(t, 0, CoreShare([]Info{bound(0), bound(0), bound(1), bound(1)}), "ranks bound to cores")
	assert.Equal(t, 0, CoreShare([]Info{all, all, all, {CPUs: 2}}), "an affinity not known")
}
