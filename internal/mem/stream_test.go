package mem

import (
	"testing"

	"github.com/stretchr/testify/assert"
)

// TestStreamCopy: every length and alignment of head, body and tail
// copies exactly, and nothing around dst is touched.
func TestStreamCopy(t *testing.T) {
	src := make([]byte, 4096)
	for i := range src {
		src[i] = byte(i*31 + 7)
	}
	for _, n := range []int{0, 1, 15, 63, 64, 65, 127, 128, 200, 1000, 4000} {
		for d := range 17 {
			for s := range 3 {
				buf := make([]byte, n+64)
				StreamCopy(buf[d:d+n], src[s:s+n])
				assert.Equal(t, src[s:s+n], buf[d:d+n], "n %d, dst offset %d, src offset %d", n, d, s)
				assert.Equal(t, make([]byte, d), buf[:d], "before dst")
				assert.Equal(t, make([]byte, 64-d), buf[d+n:], "after dst")
			}
		}
	}
	assert.Panics(t, func() { StreamCopy(make([]byte, 3), make([]byte, 4)) })
}

// TestCachedCopy: lengths about its pieces' and Go's non-temporal
// threshold copy exactly, nothing after dst is touched, and lengths that
// differ panic.
func TestCachedCopy(t *testing.T) {
	src := make([]byte, 3<<20+5)
	for i := range src {
		src[i] = byte(i*31 + 7)
	}
	for _, n := range []int{0, 1, cachedPiece - 1, cachedPiece, cachedPiece + 1, 1<<20 - 1, 1 << 20, 1<<20 + 1, 3<<20 + 5} {
		buf := make([]byte, n+64)
		CachedCopy(buf[:n], src[:n])
		assert.Equal(t, src[:n], buf[:n], "n %d", n)
		assert.Equal(t, make([]byte, 64), buf[n:], "after dst, n %d", n)
	}
	assert.Panics(t, func() { CachedCopy(make([]byte, 3), make([]byte, 4)) })
}
