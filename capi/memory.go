package main

import (
	"errors"
	"fmt"
	"unsafe"

	"github.com/ringo-ccl/ringo"
	"github.com/ringo-ccl/ringo/internal/env"
)

// envCuMem is NCCL_CUMEM_ENABLE: 0 makes ncclMemAlloc allocate with
// cuMemAlloc.
var envCuMem = env.Var{Name: "CUMEM_ENABLE", NCCL: true}

// memAllocAPI is ncclMemAlloc: memory of CUDA's virtual memory API, as
// NCCL's, which other processes map through a file descriptor (a window's
// across processes) — or cuMemAlloc's, which CUDA IPC maps, with
// NCCL_CUMEM_ENABLE=0 or where the driver has no virtual memory
// management.
func (l *library) memAllocAPI(out unsafe.Pointer, size uint64) error {
	const fn = "ncclMemAlloc"
	if out == nil {
		return invalidArg("%s: ptr is NULL", fn)
	}
	putPtr(out, nil)
	if size == 0 {
		return nil // as cudaMalloc(ptr, 0): a NULL pointer
	}
	shared, err := envCuMem.Int(1, 0, 1)
	if err != nil {
		return fmt.Errorf("%s: %w", fn, err)
	}
	var p uintptr
	if shared == 1 {
		p, err = l.memShared(size)
	}
	if shared == 0 || errors.Is(err, ringo.ErrNotSupported) {
		p, err = l.memAlloc(size)
	}
	if err != nil {
		return fmt.Errorf("%s: %d bytes: %w", fn, size, err)
	}
	*(*uintptr)(out) = p
	return nil
}

func (l *library) memFreeAPI(p unsafe.Pointer) error {
	if p == nil {
		return nil
	}
	if err := l.memFree(uintptr(p)); err != nil {
		return fmt.Errorf("ncclMemFree: %p: %w", p, err)
	}
	return nil
}

// register is ncclCommRegister: ringo's all-reduces need no registration
// (between processes, a buffer outside a window is staged: see
// ncclCommWindowRegister for reading in place); the handle is opaque and
// only deregistered. NCCL's registration is local to the rank, which a
// window's cannot be: its buffers may differ from rank to rank (PyTorch's
// memory pools register their segments so).
func (l *library) register(h, out unsafe.Pointer) error {
	const fn = "ncclCommRegister"
	e, err := l.handles.lookup(fn, h)
	if err != nil {
		return err
	}
	if out == nil {
		return invalidArg("%s: handle is NULL", fn)
	}
	putPtr(out, l.regs.add(e, false))
	return nil
}

func (l *library) deregister(h, reg unsafe.Pointer) error {
	const fn = "ncclCommDeregister"
	e, err := l.handles.lookup(fn, h)
	if err != nil {
		return err
	}
	_, err = l.regs.remove(fn, e, reg, false)
	return err
}
