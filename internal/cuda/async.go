//go:build cuda

package cuda

/*
#include "helpers.h"
*/
import "C"

import (
	"runtime"
	"unsafe"
)

// CopyAsync enqueues a copy of n bytes from device address src to dst on
// s (the driver's device-to-device copy, at the GPU's copy bandwidth), in
// one cgo crossing; inside a stream capture it becomes a graph's copy node.
func (d *Device) CopyAsync(dst, src Ptr, n int64, s Stream) error {
	runtime.LockOSThread()
	r := C.ringoCopyAsync(d.cctx(), C.CUdeviceptr(dst), C.CUdeviceptr(src), C.size_t(n), C.uintptr_t(s))
	runtime.UnlockOSThread()
	return check("copy on device", r)
}

// UploadAsync enqueues a copy of src, which must be pinned host memory
// (AllocMapped's) left as it is until the copy has run, to device address
// dst on s, and returns without waiting for it: s's later work sees the
// bytes. When s is being captured into a graph it enqueues nothing and
// says so (captured), for the caller to copy another way.
func (d *Device) UploadAsync(dst Ptr, src []byte, s Stream) (captured bool, err error) {
	if len(src) == 0 {
		return false, nil
	}
	var c C.int
	runtime.LockOSThread()
	r := C.ringoUploadAsync(d.cctx(), C.CUdeviceptr(dst), unsafe.Pointer(&src[0]), C.size_t(len(src)), C.uintptr_t(s), &c)
	runtime.UnlockOSThread()
	return c != 0, check("copy to device on the call's stream", r)
}

// Occupancy returns how many blocks of block threads of f can be resident
// on one multiprocessor of d at once.
func (d *Device) Occupancy(f Func, block int) (int, error) {
	var n C.int
	runtime.LockOSThread()
	r := C.ringoOccupancy(d.cctx(), f.fn, C.int(block), &n)
	runtime.UnlockOSThread()
	return int(n), check("occupancy of "+f.name, r)
}
