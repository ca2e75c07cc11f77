//go:build cuda

package cuda

/*
#include "helpers.h"
*/
import "C"

import (
	"fmt"
	"sync/atomic"
	"unsafe"
)

// Mapped is pinned host memory that a device reads and writes directly
// (the abort flag its kernels poll).
type Mapped struct {
	Host []byte
	Dev  Ptr
}

// AllocMapped returns n bytes of zeroed pinned host memory mapped into
// every context.
func (d *Device) AllocMapped(n int) (*Mapped, error) {
	var m *Mapped
	err := d.Do(func() error {
		var p unsafe.Pointer
		if err := check("allocate mapped host memory", C.cuMemHostAlloc(&p, C.size_t(n), C.CU_MEMHOSTALLOC_DEVICEMAP|C.CU_MEMHOSTALLOC_PORTABLE)); err != nil {
			return err
		}
		var dp C.CUdeviceptr
		if err := check("map host memory", C.cuMemHostGetDevicePointer(&dp, p, 0)); err != nil {
			C.cuMemFreeHost(p)
			return err
		}
		host := unsafe.Slice((*byte)(p), n)
		clear(host)
		m = &Mapped{Host: host, Dev: Ptr(dp)}
		return nil
	})
	return m, held(&live.mapped, err, 1)
}

// FreeMapped releases memory from AllocMapped.
func (d *Device) FreeMapped(m *Mapped) error {
	if m == nil || m.Host == nil {
		return nil
	}
	return held(&live.mapped, d.Do(func() error {
		err := check("free mapped host memory", C.cuMemFreeHost(unsafe.Pointer(&m.Host[0])))
		m.Host = nil
		return err
	}), -1)
}

// Word returns the 32-bit word at byte offset off of mapped memory, for
// atomic access from the host while kernels poll it.
func (m *Mapped) Word(off int) *atomic.Uint32 {
	return (*atomic.Uint32)(unsafe.Pointer(&m.Host[off]))
}

// Memory kinds of PointerInfo.
const (
	MemoryHost    = int(C.CU_MEMORYTYPE_HOST)
	MemoryDevice  = int(C.CU_MEMORYTYPE_DEVICE)
	MemoryUnknown = 0
)

// PointerInfo says what p is: device memory (with its GPU and the bounds of
// its allocation), pinned host memory, or unknown to CUDA (ordinary host
// memory: MemoryUnknown, no error). The query runs in d's context.
func (d *Device) PointerInfo(p Ptr) (kind, ordinal int, base Ptr, size int64, err error) {
	err = d.Do(func() error {
		var mt, ord C.int
		var b C.CUdeviceptr
		var sz C.size_t
		r := C.ringoPointerInfo(C.CUdeviceptr(p), &mt, &ord, &b, &sz)
		if r == C.CUDA_ERROR_INVALID_VALUE {
			kind, ordinal = MemoryUnknown, -1
			return nil
		}
		if err := check(fmt.Sprintf("query pointer %#x", uintptr(p)), r); err != nil {
			return err
		}
		kind, ordinal, base, size = int(mt), int(ord), Ptr(b), int64(sz)
		return nil
	})
	return kind, ordinal, base, size, err
}

// BufferID returns CUDA's identity of the allocation holding p, which no
// other allocation of the process's life shares
// (CU_POINTER_ATTRIBUTE_BUFFER_ID); an error when p is in none. One cgo
// crossing where the thread has a context current (a windowed call asks
// each time), and again with d's made current where it has none.
func (d *Device) BufferID(p Ptr) (uint64, error) {
	var id C.ulonglong
	query := func() C.CUresult {
		return C.cuPointerGetAttribute(unsafe.Pointer(&id), C.CU_POINTER_ATTRIBUTE_BUFFER_ID, C.CUdeviceptr(p))
	}
	r := query()
	if r == C.CUDA_ERROR_INVALID_CONTEXT {
		if err := d.Do(func() error { r = query(); return nil }); err != nil {
			return 0, err
		}
	}
	if r != C.CUDA_SUCCESS {
		return 0, check(fmt.Sprintf("query the allocation holding %#x", uintptr(p)), r)
	}
	return uint64(id), nil
}

// CanAccessPeer reports whether d can read and write peer's memory.
func (d *Device) CanAccessPeer(peer *Device) (bool, error) {
	var ok C.int
	err := check(fmt.Sprintf("ask whether GPU %d can access GPU %d", d.Ordinal, peer.Ordinal),
		C.cuDeviceCanAccessPeer(&ok, C.CUdevice(d.dev), C.CUdevice(peer.dev)))
	return ok != 0, err
}

// PeerAtomics reports whether the link from d to peer carries native
// atomic operations — NVLink does, PCIe peer access does not — which the
// driver reports without NVML.
func (d *Device) PeerAtomics(peer *Device) (bool, error) {
	var v C.int
	err := check(fmt.Sprintf("ask GPU %d's link to GPU %d for native atomics", d.Ordinal, peer.Ordinal),
		C.cuDeviceGetP2PAttribute(&v, C.CU_DEVICE_P2P_ATTRIBUTE_NATIVE_ATOMIC_SUPPORTED, C.CUdevice(d.dev), C.CUdevice(peer.dev)))
	return v != 0, err
}

// EnablePeerAccess lets kernels running on d access peer's memory. Enabling
// it twice is not an error.
func (d *Device) EnablePeerAccess(peer *Device) error {
	return d.Do(func() error {
		ctx := *(*C.CUcontext)(unsafe.Pointer(&peer.ctx))
		r := C.cuCtxEnablePeerAccess(ctx, 0)
		if r == C.CUDA_ERROR_PEER_ACCESS_ALREADY_ENABLED {
			return nil
		}
		return check(fmt.Sprintf("enable GPU %d's access to GPU %d", d.Ordinal, peer.Ordinal), r)
	})
}
