package mem

import (
	"sync/atomic"
	"testing"

	"github.com/stretchr/testify/assert"
)

// TestStoreRelease: the release stores write what an atomic load reads,
// every bit of it, and Pause returns.
func TestStoreRelease(t *testing.T) {
	var w atomic.Uint64
	StoreRelease(&w, 0xfedc_ba98_7654_3210)
	assert.Equal(t, uint64(0xfedc_ba98_7654_3210), w.Load())
	var b atomic.Bool
	StoreReleaseBool(&b, true)
	assert.True(t, b.Load())
	StoreReleaseBool(&b, false)
	assert.False(t, b.Load())
	Pause()
}
