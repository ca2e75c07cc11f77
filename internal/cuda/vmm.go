//go:build cuda

package cuda

/*
#include "helpers.h"
*/
import "C"

import (
	"fmt"
	"slices"
)

// Shared memory: device memory of CUDA's virtual memory API (cuMemCreate,
// cuMemMap), as NCCL's ncclMemAlloc allocates it. Its physical handle can
// be exported as a file descriptor, which another process imports and maps
// (ExportShared, ImportShared): CUDA IPC (ExportIPC) refuses such memory.
// Every GPU that can access the allocating GPU's memory may read and write
// it. PyTorch's expandable segments are memory of the same API.

// AllocShared returns n bytes (rounded up to CUDA's granularity, 2 MiB on
// an H200) of d's memory from the virtual memory API, exportable as a file
// descriptor. An error wraps CUDA_ERROR_NOT_SUPPORTED where the GPU or
// driver has no virtual memory management.
func (d *Device) AllocShared(n int64) (Ptr, error) {
	var p C.CUdeviceptr
	var size C.size_t
	err := d.Do(func() error {
		return check(fmt.Sprintf("allocate %d bytes of shareable memory on GPU %d", n, d.Ordinal),
			C.ringoVmmAlloc(C.CUdevice(d.dev), C.size_t(max(n, 1)), &p, &size))
	})
	return Ptr(p), held(&live.shared, err, 1)
}

// SharedBounds reports whether p lies in memory of the virtual memory API
// and, if so, the mapping that holds it (one allocation, for AllocShared's
// and ImportShared's) and the ordinal of the GPU whose memory it is. The
// mapping is asked for with a GPU's context current: a thread without one
// is refused (CUDA_ERROR_INVALID_CONTEXT), and which OS thread a goroutine
// runs on is not its choice. That GPU's first; then, where its context does
// not find the mapping (CUDA_ERROR_NOT_FOUND: memory of another process,
// imported for another of this process's GPUs only — seen on two H200s),
// each GPU this process has opened.
func SharedBounds(p Ptr) (ok bool, base Ptr, size int64, ordinal int, err error) {
	what := fmt.Sprintf("query the mapping holding %#x", uintptr(p))
	var vmm, dev C.int
	if err = check(what, C.ringoVmmDevice(C.CUdeviceptr(p), &vmm, &dev)); err != nil || vmm == 0 {
		return false, 0, 0, 0, err
	}
	d, err := Open(int(dev))
	if err != nil {
		return true, 0, 0, int(dev), err
	}
	var b C.CUdeviceptr
	var sz C.size_t
	query := func(d *Device) error {
		return d.Do(func() error { return check(what, C.ringoVmmRange(C.CUdeviceptr(p), &b, &sz)) })
	}
	err = query(d)
	for _, o := range opened() {
		if e, ok := err.(*Error); !ok || e.Code != C.CUDA_ERROR_NOT_FOUND {
			break
		}
		if o != d {
			err = query(o)
		}
	}
	return true, Ptr(b), int64(sz), int(dev), err
}

// opened returns the GPUs this process has opened, by ordinal.
func opened() []*Device {
	devMu.Lock()
	defer devMu.Unlock()
	ds := make([]*Device, 0, len(devices))
	for _, d := range devices {
		ds = append(ds, d)
	}
	slices.SortFunc(ds, func(a, b *Device) int { return a.Ordinal - b.Ordinal })
	return ds
}

// FreeShared releases memory from AllocShared (p is where it starts) once
// d has finished its work, as cuMemFree waits: unmapping alone would not
// wait for the kernels that may still use it.
func (d *Device) FreeShared(p Ptr) error {
	return held(&live.shared, d.unmapShared(p, true), -1)
}

// CloseShared unmaps memory of another process from ImportShared at once,
// as CloseIPC: the caller has waited for the kernels that read it.
func (d *Device) CloseShared(p Ptr) error {
	return held(&live.ipc, d.unmapShared(p, false), -1)
}

// unmapShared unmaps the shareable mapping starting at p, after d's work
// when wait says so.
func (d *Device) unmapShared(p Ptr, wait bool) error {
	ok, base, size, _, err := SharedBounds(p)
	switch {
	case err != nil:
		return err
	case !ok || base != p:
		return fmt.Errorf("cuda: %#x is not the start of shareable memory", uintptr(p))
	}
	if wait {
		if err := d.Synchronize(); err != nil {
			return err
		}
	}
	return d.Do(func() error {
		return check(fmt.Sprintf("unmap %d bytes of shareable memory at %#x", size, uintptr(p)), C.ringoVmmFree(C.CUdeviceptr(base), C.size_t(size)))
	})
}

// ExportShared returns a file descriptor for the shareable allocation
// starting at base, and its size; the caller closes the descriptor.
func ExportShared(base Ptr) (fd int, size int64, err error) {
	ok, b, sz, ord, err := SharedBounds(base)
	switch {
	case err != nil:
		return -1, 0, err
	case !ok || b != base:
		return -1, 0, fmt.Errorf("cuda: %#x is not the start of shareable memory", uintptr(base))
	}
	d, err := Open(ord)
	if err != nil {
		return -1, 0, err
	}
	var cfd C.int
	err = d.Do(func() error {
		return check("export shareable memory as a file descriptor", C.ringoVmmExport(C.CUdeviceptr(base), &cfd))
	})
	if err != nil {
		return -1, 0, err
	}
	return int(cfd), sz, nil
}

// ImportShared maps size bytes of another process's shareable allocation,
// exported as fd (which it does not close), for d's kernels, and returns
// where. CloseShared unmaps it.
func (d *Device) ImportShared(fd int, size int64) (Ptr, error) {
	var p C.CUdeviceptr
	err := d.Do(func() error {
		return check(fmt.Sprintf("import %d bytes of another process's shareable memory into GPU %d", size, d.Ordinal),
			C.ringoVmmImport(C.CUdevice(d.dev), C.int(fd), C.size_t(size), &p))
	})
	return Ptr(p), held(&live.ipc, err, 1)
}
