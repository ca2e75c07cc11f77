package mem

// cachedPiece is the most CachedCopy moves in one copy: under the 1 MiB
// from which Go's runtime (memmove on amd64) writes with non-temporal
// stores.
const cachedPiece = 512 << 10

// CachedCopy copies src into dst, of src's length, like copy, but with
// cached stores at every length: for data another core reads next from
// this core's cache. Go's copy writes copies of 1 MiB and more with
// non-temporal stores, which send every line to memory; on the 2-core
// development VM that took a 2-rank all-reduce's FIFO copies of 1 MiB
// slices to 1.8× the time of cached ones (BENCHMARKS.md, issue 25).
func CachedCopy(dst, src []byte) {
	if len(dst) != len(src) {
		panic("mem.CachedCopy: lengths differ")
	}
	for len(src) > cachedPiece {
		copy(dst[:cachedPiece], src[:cachedPiece])
		dst, src = dst[cachedPiece:], src[cachedPiece:]
	}
	copy(dst, src)
}
