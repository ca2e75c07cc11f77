package ringo

import (
	"context"
	"sync/atomic"

	"github.com/ringo-ccl/ringo/device"
	"github.com/ringo-ccl/ringo/internal/direct"
	"github.com/ringo-ccl/ringo/internal/errs"
	"github.com/ringo-ccl/ringo/internal/group"
)

// Window is a buffer of GPU memory that every rank of a communicator
// registered together (RegisterWindow), as NCCL's symmetric windows
// (ncclCommWindowRegister). Every rank maps every other's window, so a
// direct all-reduce (up to RINGO_DIRECT_MAX) whose input lies inside one
// is read where it is; ranks in separate processes otherwise first copy
// each input into a staging buffer the others have mapped. Ranks of one
// process read each other's memory anyway: there a window is checked and
// kept, nothing more.
type Window struct {
	c     *Comm
	w     *direct.Window // nil where the communicator runs no direct all-reduces
	addr  uintptr
	bytes int64
	done  atomic.Bool
}

// RegisterWindow registers bytes of this rank's GPU memory at addr (the
// rank's GPU's, in one allocation where ranks are in separate processes:
// cuMemAlloc's — DeviceAlloc, PyTorch's caching allocator — which they map
// through CUDA IPC, or one of CUDA's virtual memory API —
// DeviceAllocShared, ncclMemAlloc — whose file descriptor they borrow) as
// a window. It is collective: every
// rank calls it, with a buffer of the same size, and the ranks register
// and deregister their windows in the same order; a communicator holds
// up to 64 at once. Errors name the rank whose buffer was refused, or the
// ranks whose sizes differ.
func (c *Comm) RegisterWindow(ctx context.Context, addr uintptr, bytes int64) (*Window, error) {
	const op = "register window"
	if c.gpu == nil {
		return nil, errs.Invalid(op, c.rank, "a window on a communicator of host ranks")
	}
	if err := c.failed(op); err != nil {
		return nil, err
	}
	if bytes <= 0 {
		return nil, errs.Invalid(op, c.rank, "a window of %d bytes", bytes)
	}
	win := &Window{c: c, addr: addr, bytes: bytes}
	var ex direct.Exchanger // nil for ranks of one process
	if g, ok := c.group.(*group.Procs); ok {
		ex = g.BS
	}
	if c.gpu.reads == nil { // checked and kept: the ring reads no window
		_, _, bad := device.CheckPtr(c.gpu.dev, addr, bytes)
		if ex != nil {
			bad = direct.Agree(ctx, ex, c.rank, bytes, bad)
		}
		if bad != nil {
			return nil, errs.At(op, c.rank, bad)
		}
		return win, nil
	}
	w, err := c.gpu.reads.Register(ctx, ex, addr, bytes)
	if err != nil {
		return nil, errs.At(op, c.rank, err)
	}
	win.w = w
	return win, nil
}

// Addr returns the window's address on this rank; Bytes its size.
func (w *Window) Addr() uintptr { return w.addr }

// Bytes returns the window's size.
func (w *Window) Bytes() int64 { return w.bytes }

// Deregister ends the window on this rank (not collective, as NCCL's):
// after this rank's GPU has finished what it enqueued, the other ranks'
// buffers are unmapped. No call on any rank may still use the window.
func (w *Window) Deregister() error {
	const op = "deregister window"
	if w.done.Swap(true) {
		return errs.Invalid(op, w.c.rank, "the window of %d bytes at %#x was deregistered already", w.bytes, w.addr)
	}
	if w.w == nil {
		return nil
	}
	if err := w.w.Deregister(); err != nil {
		return errs.At(op, w.c.rank, err)
	}
	return nil
}
