//go:build !amd64 || race

package mem

import (
	"encoding/binary"
	"sync/atomic"
)

// StoreRelease stores v into w: w.Store where no release-only store is
// wired up, and under the race detector, which sees only sync/atomic's
// operations as synchronising.
func StoreRelease(w *atomic.Uint64, v uint64) { w.Store(v) }

// StoreReleaseBool is StoreRelease for a flag.
func StoreReleaseBool(w *atomic.Bool, v bool) { w.Store(v) }

// StoreHalves stores into each word of dst 4 bytes of src, in order and
// little-endian, as its low half and hi as its high half, each word by one
// atomic store, the words in order. len(src) must be 4×len(dst).
func StoreHalves(dst []atomic.Uint64, src []byte, hi uint32) {
	checkHalves(dst, src)
	for i := range dst {
		dst[i].Store(uint64(hi)<<32 | uint64(binary.LittleEndian.Uint32(src[4*i:])))
	}
}
