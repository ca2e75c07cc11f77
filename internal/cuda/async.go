//go:build cuda

package cuda

/*
#include "helpers.h"
*/
import "C"

import "runtime"

// CopyAsync enqueues a copy of n bytes from device address src to dst on
// s (the driver's device-to-device copy, at the GPU's copy bandwidth), in
// one cgo crossing; inside a stream capture it becomes a graph's copy node.
func (d *Device) CopyAsync(dst, src Ptr, n int64, s Stream) error {
	runtime.LockOSThread()
	r := C.ringoCopyAsync(d.cctx(), C.CUdeviceptr(dst), C.CUdeviceptr(src), C.size_t(n), C.uintptr_t(s))
	runtime.UnlockOSThread()
	return check("copy on device", r)
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
