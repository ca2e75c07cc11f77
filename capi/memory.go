package main

import (
	"errors"
	"fmt"
	"math"
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

// register is ncclCommRegister: ringo's Comm.Register, this rank's call
// alone, as NCCL's (PyTorch's memory pools register their segments so,
// rank by rank, of any size): where ranks are in separate processes and
// read each other's inputs, the others map the buffer, and this rank's
// inputs in it are read in place rather than staged.
func (l *library) register(h unsafe.Pointer, buff uintptr, size uint64, out unsafe.Pointer) error {
	const fn = "ncclCommRegister"
	e, err := l.handles.lookup(fn, h)
	if err != nil {
		return err
	}
	switch {
	case out == nil:
		return invalidArg("%s: handle is NULL", fn)
	case buff == 0:
		return invalidArg("%s: buff is NULL", fn)
	case size == 0 || size > math.MaxInt64:
		return invalidArg("%s: size %d", fn, size)
	}
	putPtr(out, nil)
	st, err := e.get(fn)
	if err != nil {
		return err
	}
	ctx, cancel := l.reg.context()
	defer cancel()
	e.mu.Lock()
	r, err := st.comm.Register(ctx, buff, int64(size))
	e.mu.Unlock()
	if err != nil {
		return fmt.Errorf("%s: %w", fn, err)
	}
	p := l.regs.add(e, false)
	l.regs.set(p, r)
	putPtr(out, p)
	return nil
}

// deregister is ncclCommDeregister.
func (l *library) deregister(h, reg unsafe.Pointer) error {
	return l.endRegistration("ncclCommDeregister", h, reg, false)
}

// endRegistration is ncclCommDeregister (window false) and ncclCommWindowDeregister:
// handle p of communicator h is freed, and what it stood for ended.
func (l *library) endRegistration(fn string, h, p unsafe.Pointer, window bool) error {
	e, err := l.handles.lookup(fn, h)
	if err != nil {
		return err
	}
	r, err := l.regs.remove(fn, e, p, window)
	if err != nil || r.win == nil {
		return err
	}
	if err := r.win.Deregister(); err != nil {
		return fmt.Errorf("%s: %w", fn, err)
	}
	return nil
}
