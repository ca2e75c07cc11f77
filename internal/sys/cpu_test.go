package sys

import (
	"runtime"
	"testing"

	"github.com/stretchr/testify/assert"
)

// TestCPU: where CPU can read the core, it names one this process may run
// on, and the same one as the getcpu system call read right before and
// after it, in most of many tries (the thread may move between the
// reads); where it cannot, it says -1 every time.
func TestCPU(t *testing.T) {
	if CPU() < 0 {
		for range 100 {
			assert.Equal(t, -1, CPU())
		}
		t.Skipf("the core cannot be read here (%s)", runtime.GOARCH)
	}
	cpus, err := Affinity()
	assert.NoError(t, err)
	tries, agree := 1000, 0
	for range tries {
		a, okA := getcpu()
		c := CPU()
		b, okB := getcpu()
		assert.Contains(t, cpus, c)
		if okA && okB && a == b && c == a {
			agree++
		}
	}
	assert.Greater(t, agree, tries/2, "CPU agreed with getcpu %d times of %d", agree, tries)
}
