package mem

import "unsafe"

// HasStream reports whether StreamCopy has non-temporal stores here.
const HasStream = true

//go:noescape
func streamCopy(dst, src *byte, n uintptr)

// StreamCopy copies src into dst, of src's length, like copy, but writes
// the bulk of dst with non-temporal stores, which bypass this core's
// caches: for data another core reads next. The slices must not overlap.
func StreamCopy(dst, src []byte) {
	n := len(src)
	if len(dst) != n {
		panic("mem.StreamCopy: lengths differ")
	}
	head := int(-uintptr(unsafe.Pointer(unsafe.SliceData(dst))) % 16) // to dst's first 16-byte boundary
	if n < head+64 {
		copy(dst, src)
		return
	}
	copy(dst[:head], src[:head])
	body := (n - head) &^ 63
	streamCopy(&dst[head], &src[head], uintptr(body))
	copy(dst[head+body:], src[head+body:])
}
