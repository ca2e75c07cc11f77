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
