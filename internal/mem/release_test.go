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

// TestStoreHalves: every word gets its 4 bytes of src, little-endian, as
// its low half and hi as its high half; the word after dst is untouched;
// lengths that do not match panic.
func TestStoreHalves(t *testing.T) {
	for _, n := range []int{0, 1, 2, 7, 100} {
		src := make([]byte, 4*n)
		for i := range src {
			src[i] = byte(i*37 + 11)
		}
		words := make([]atomic.Uint64, n+1)
		StoreHalves(words[:n], src, 0x8000_0001)
		for i := range n {
			want := uint64(0x8000_0001)<<32 | uint64(src[4*i]) | uint64(src[4*i+1])<<8 | uint64(src[4*i+2])<<16 | uint64(src[4*i+3])<<24
			assert.Equal(t, want, words[i].Load(), "n %d, word %d", n, i)
		}
		assert.Zero(t, words[n].Load(), "n %d: the word after", n)
	}
	assert.Panics(t, func() { StoreHalves(make([]atomic.Uint64, 2), make([]byte, 7), 1) })
}
