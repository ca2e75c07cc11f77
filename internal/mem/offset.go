package mem

import "unsafe"

// Offset returns where sub starts inside base, in bytes, and whether sub
// lies wholly inside base. A nil sub never is; an empty one is not
// reliable (Go may point a zero-capacity slice anywhere), so callers should
// not ask about one.
func Offset(base, sub []byte) (int, bool) {
	if unsafe.SliceData(sub) == nil || unsafe.SliceData(base) == nil {
		return 0, false
	}
	b0 := uintptr(unsafe.Pointer(unsafe.SliceData(base)))
	s0 := uintptr(unsafe.Pointer(unsafe.SliceData(sub)))
	if s0 < b0 || s0-b0 > uintptr(len(base)) || uintptr(len(sub)) > uintptr(len(base))-(s0-b0) {
		return 0, false
	}
	return int(s0 - b0), true
}

// Addr returns the address of b's first byte, for handing memory that the
// caller keeps alive and unmoved to a device (an RDMA registration). It is
// 0 for a nil slice.
func Addr(b []byte) uintptr {
	return uintptr(unsafe.Pointer(unsafe.SliceData(b)))
}

// AddrOf returns the address of *p (for checking that two views of memory
// agree).
func AddrOf[T any](p *T) uintptr { return uintptr(unsafe.Pointer(p)) }
