// Package mem is the one place where ringo reinterprets host memory: typed
// slices as bytes and back, 64-bit words inside a byte buffer for atomics, and
// aligned allocation. Everything here uses package unsafe; nothing else in the
// module outside internal/cuda, internal/verbs and capi may.
//
// Views share memory with their source: they are valid only while the source
// is alive and must not be retained past it.
package mem

import (
	"fmt"
	"sync/atomic"
	"unsafe"
)

// Bytes views a typed slice as its bytes.
func Bytes[T any](s []T) []byte {
	if len(s) == 0 {
		return nil
	}
	var zero T
	return unsafe.Slice((*byte)(unsafe.Pointer(unsafe.SliceData(s))), len(s)*int(unsafe.Sizeof(zero)))
}

// Slice views b as a slice of T. len(b) must be a multiple of T's size and b
// must be aligned to T's alignment; Slice panics otherwise, because a caller
// that gets this wrong has a bug that must not be papered over.
func Slice[T any](b []byte) []T {
	if len(b) == 0 {
		return nil
	}
	var zero T
	size := int(unsafe.Sizeof(zero))
	if len(b)%size != 0 {
		panic(fmt.Sprintf("mem.Slice: %d bytes is not a multiple of element size %d", len(b), size))
	}
	p := unsafe.Pointer(unsafe.SliceData(b))
	if uintptr(p)%unsafe.Alignof(zero) != 0 {
		panic(fmt.Sprintf("mem.Slice: address %#x not aligned to %d", uintptr(p), unsafe.Alignof(zero)))
	}
	return unsafe.Slice((*T)(p), len(b)/size)
}

// Aligned reports whether b's first byte sits at a multiple of align bytes.
// An empty slice is aligned.
func Aligned(b []byte, align int) bool {
	if len(b) == 0 {
		return true
	}
	return uintptr(unsafe.Pointer(unsafe.SliceData(b)))%uintptr(align) == 0
}

// Same reports whether a and b start at the same address (an in-place
// operation). Empty slices are never the same.
func Same(a, b []byte) bool {
	return len(a) > 0 && len(b) > 0 && unsafe.SliceData(a) == unsafe.SliceData(b)
}

// Overlap reports whether a and b share at least one byte.
func Overlap(a, b []byte) bool {
	if len(a) == 0 || len(b) == 0 {
		return false
	}
	a0 := uintptr(unsafe.Pointer(unsafe.SliceData(a)))
	b0 := uintptr(unsafe.Pointer(unsafe.SliceData(b)))
	return a0 < b0+uintptr(len(b)) && b0 < a0+uintptr(len(a))
}

// Word returns the 64-bit word at byte offset off of b for atomic access. off
// must be 8-byte aligned within an 8-byte aligned buffer.
func Word(b []byte, off int) *atomic.Uint64 {
	w := b[off : off+8 : off+8]
	p := unsafe.Pointer(unsafe.SliceData(w))
	if uintptr(p)%8 != 0 {
		panic(fmt.Sprintf("mem.Word: offset %d of buffer at %#x is not 8-byte aligned", off, uintptr(unsafe.Pointer(unsafe.SliceData(b)))))
	}
	return (*atomic.Uint64)(p)
}

// Alloc returns n zeroed bytes whose first byte is aligned to align, which
// must be a power of two no larger than 4096.
func Alloc(n, align int) []byte {
	if align <= 0 || align&(align-1) != 0 || align > 4096 {
		panic(fmt.Sprintf("mem.Alloc: bad alignment %d", align))
	}
	if n == 0 {
		return []byte{}
	}
	words := make([]uint64, (n+align+7)/8)
	raw := unsafe.Slice((*byte)(unsafe.Pointer(unsafe.SliceData(words))), len(words)*8)
	skip := int(-uintptr(unsafe.Pointer(unsafe.SliceData(raw))) & uintptr(align-1))
	return raw[skip : skip+n : skip+n]
}

// Word32 returns the 32-bit word at byte offset off of b for atomic access
// (a futex word). off must be 4-byte aligned within a 4-byte aligned buffer.
func Word32(b []byte, off int) *atomic.Uint32 {
	w := b[off : off+4 : off+4]
	p := unsafe.Pointer(unsafe.SliceData(w))
	if uintptr(p)%4 != 0 {
		panic(fmt.Sprintf("mem.Word32: offset %d is not 4-byte aligned", off))
	}
	return (*atomic.Uint32)(p)
}

// checkHalves panics unless src holds 4 bytes for every word of dst
// (StoreHalves).
func checkHalves(dst []atomic.Uint64, src []byte) {
	if len(src) != 4*len(dst) {
		panic(fmt.Sprintf("mem.StoreHalves: %d bytes for %d words", len(src), len(dst)))
	}
}
