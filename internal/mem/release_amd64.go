//go:build !race

package mem

import (
	"sync/atomic"
	"unsafe"
)

//go:noescape
func storeRelease(w *uint64, v uint64)

//go:noescape
func storeRelease32(w *uint32, v uint32)

//go:noescape
func storeHalves(dst *uint64, src *byte, n uintptr, hi uint64)

// StoreRelease stores v into w with release order only: every load and
// store before it is seen before it, but — unlike w.Store, an XCHG that
// waits for this core's buffered stores to reach the cache — loads after
// it may run before it is seen. For a flag that publishes what was
// written before it to a reader that polls it.
func StoreRelease(w *atomic.Uint64, v uint64) { storeRelease((*uint64)(unsafe.Pointer(w)), v) }

// StoreReleaseBool is StoreRelease for a flag (an atomic.Bool is its
// uint32).
func StoreReleaseBool(w *atomic.Bool, v bool) {
	var u uint32
	if v {
		u = 1
	}
	storeRelease32((*uint32)(unsafe.Pointer(w)), u)
}

// StoreHalves stores into each word of dst 4 bytes of src, in order and
// little-endian, as its low half and hi as its high half, each word by one
// 8-byte store with release order only (see StoreRelease), the words in
// order: a reader that checks each word's high half needs no other
// ordering. len(src) must be 4×len(dst). For the host LL protocol's words,
// whose atomic stores (XCHGs) took most of a large LL call's time.
func StoreHalves(dst []atomic.Uint64, src []byte, hi uint32) {
	checkHalves(dst, src)
	if len(dst) > 0 {
		storeHalves((*uint64)(unsafe.Pointer(&dst[0])), &src[0], uintptr(len(dst)), uint64(hi)<<32)
	}
}
