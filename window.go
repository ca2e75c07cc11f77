package ringo

import (
	"context"
	"errors"
	"sync/atomic"

	"github.com/ringo-ccl/ringo/device"
	"github.com/ringo-ccl/ringo/internal/direct"
	"github.com/ringo-ccl/ringo/internal/env"
	"github.com/ringo-ccl/ringo/internal/errs"
	"github.com/ringo-ccl/ringo/internal/group"
	"github.com/ringo-ccl/ringo/internal/mem"
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
	buffer
	w *direct.Window // nil where the communicator runs no direct all-reduces
}

// buffer is what a window and a registration share: the rank's buffer,
// and whether it was deregistered.
type buffer struct {
	c     *Comm
	addr  uintptr
	bytes int64
	done  atomic.Bool
}

// checkRegister returns why c cannot register bytes as a kind ("window",
// "registration"), or nil.
func (c *Comm) checkRegister(op, kind string, bytes int64) error {
	if c.gpu == nil {
		return errs.Invalid(op, c.rank, "a %s on a communicator of host ranks", kind)
	}
	if err := c.failed(op); err != nil {
		return err
	}
	if bytes <= 0 {
		return errs.Invalid(op, c.rank, "a %s of %d bytes", kind, bytes)
	}
	return nil
}

// deregister ends b, once, with end (nil: nothing to end), naming the
// kind of buffer in a second call's error.
func (b *buffer) deregister(op, kind string, end func() error) error {
	if b.done.Swap(true) {
		return errs.Invalid(op, b.c.rank, "the %s of %d bytes at %#x was deregistered already", kind, b.bytes, b.addr)
	}
	if end == nil {
		return nil
	}
	if err := end(); err != nil {
		return errs.At(op, b.c.rank, err)
	}
	return nil
}

// RegisterWindow registers bytes of this rank's GPU memory at addr (the
// rank's GPU's, in one allocation where ranks are in separate processes:
// cuMemAlloc's — DeviceAlloc, PyTorch's caching allocator — which they map
// through CUDA IPC, or one of CUDA's virtual memory API —
// DeviceAllocShared, ncclMemAlloc — whose file descriptor they borrow) as
// a window. It is collective: every
// rank calls it, with a buffer of the same size, and the ranks register
// and deregister their windows in the same order; a communicator holds
// up to 32 at once. Errors name the rank whose buffer was refused, or the
// ranks whose sizes differ.
func (c *Comm) RegisterWindow(ctx context.Context, addr uintptr, bytes int64) (*Window, error) {
	const op = "register window"
	if c.gpu == nil {
		return c.registerHostWindow(ctx, op, addr, bytes)
	}
	if err := c.checkRegister(op, "window", bytes); err != nil {
		return nil, err
	}
	win := &Window{buffer: buffer{c: c, addr: addr, bytes: bytes}}
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
	w, err := c.gpu.reads.RegisterWindow(ctx, ex, addr, bytes)
	if err != nil {
		return nil, errs.At(op, c.rank, err)
	}
	win.w = w
	return win, nil
}

// HostAlloc returns n zeroed elements of memory that the other processes
// of a host communicator can map once this rank registers it in a window
// (RegisterHostWindow): anonymous shared memory, its pages reserved now.
// Free it with HostFree.
func HostAlloc[T Elem](n int) ([]T, error) {
	b, err := direct.HostAlloc(n * TypeOf[T]().Size())
	if err != nil {
		return nil, errs.At("host alloc", -1, err)
	}
	return mem.Slice[T](b), nil
}

// HostFree frees memory of HostAlloc, buf being all of it. Windows over it
// no longer hold this rank's buffers there: deregister them.
func HostFree[T Elem](buf []T) error {
	if err := direct.HostFree(mem.Bytes(buf)); err != nil {
		return errs.At("host free", -1, err)
	}
	return nil
}

// RegisterHostWindow registers buf, memory of this rank's from HostAlloc,
// as a window of host communicator c (RegisterWindow). Where c's ranks are
// processes of one host, every rank maps every other's window, and a
// collective whose buffers lie in windows on every rank — too large for
// one exchange through the board, or from 8 KiB where the ranks do not
// outnumber the cores (host.WindowsFirst) — reads and writes them where
// they are: one copy or reduction per byte, no FIFO (host.Windowed). Once a window is
// registered, such calls first ask whether every rank's buffers are in
// windows — one exchange through the board, which a call whose buffers
// are not then pays — and otherwise take the path they took before.
// Elsewhere (ranks of one process, ranks on several hosts) the window is
// checked and kept. Like RegisterWindow it is collective: every rank
// calls it with a buffer of the same size, and the ranks register and
// deregister windows in the same order.
func RegisterHostWindow[T Elem](ctx context.Context, c *Comm, buf []T) (*Window, error) {
	b := mem.Bytes(buf)
	return c.RegisterWindow(ctx, mem.Addr(b), int64(len(b)))
}

// registerHostWindow is RegisterWindow for a communicator of host ranks.
func (c *Comm) registerHostWindow(ctx context.Context, op string, addr uintptr, bytes int64) (*Window, error) {
	if err := c.failed(op); err != nil {
		return nil, err
	}
	if bytes <= 0 {
		return nil, errs.Invalid(op, c.rank, "a window of %d bytes", bytes)
	}
	win := &Window{buffer: buffer{c: c, addr: addr, bytes: bytes}}
	if c.wins == nil { // no path reads windows: checked and kept
		bad := direct.HostCheck(addr, bytes)
		if g, ok := c.group.(*group.Procs); ok {
			bad = direct.Agree(ctx, g.BS, c.rank, bytes, bad)
		}
		if bad != nil {
			return nil, errs.At(op, c.rank, bad)
		}
		return win, nil
	}
	w, err := c.wins.RegisterWindow(ctx, c.group.(*group.Procs).BS, addr, bytes)
	if err != nil {
		return nil, errs.At(op, c.rank, err)
	}
	win.w = w
	c.windowed.Store(true)
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
	var end func() error
	if w.w != nil {
		end = w.w.Deregister
	}
	return w.deregister("deregister window", "window", end)
}

// Registration is a buffer of GPU memory this rank registered with its
// communicator (Register), as NCCL's ncclCommRegister.
type Registration struct {
	buffer
	r   *direct.Registration // nil where nothing is mapped
	why error                // why the others do not read it in place (nil: they do, or need not)
}

// Register registers bytes of this rank's GPU memory at addr (in one
// allocation: cuMemAlloc's, or CUDA's virtual memory API's, as for
// RegisterWindow) with the communicator. Unlike RegisterWindow it is this
// rank's call alone, as NCCL's ncclCommRegister: the other ranks need not
// call it, nor register buffers of the same size. Where ranks are in
// separate processes and all-reduces read each other's inputs (direct
// collectives), the other processes' ranks map the buffer then and there
// (each process answers such requests in the background), so that this
// rank's inputs inside it are read in place rather than staged; ranks of
// one process read each other's memory anyway, and a communicator on the
// ring reads no one's: there it is checked and kept. A rank holds up to
// 32 registrations that others map; beyond them, or where a rank could
// not map it, the registration stands and its inputs are staged, as
// before it (Unshared says why: a registration is a hint, as NCCL's).
// Errors name what was refused: no GPU communicator, memory that is not
// this GPU's.
func (c *Comm) Register(ctx context.Context, addr uintptr, bytes int64) (*Registration, error) {
	const op = "register"
	if err := c.checkRegister(op, "registration", bytes); err != nil {
		return nil, err
	}
	reg := &Registration{buffer: buffer{c: c, addr: addr, bytes: bytes}}
	if c.gpu.reads == nil {
		if _, _, err := device.CheckPtr(c.gpu.dev, addr, bytes); err != nil {
			return nil, errs.At(op, c.rank, err)
		}
		return reg, nil
	}
	r, err := c.gpu.reads.Register(ctx, addr, bytes)
	switch {
	case errors.Is(err, direct.ErrNotShared):
		reg.why = errs.At(op, c.rank, err)
		env.Info(env.SubReg, "rank %d: %v", c.rank, reg.why)
	case err != nil:
		return nil, errs.At(op, c.rank, err)
	}
	reg.r = r
	return reg, nil
}

// Unshared returns why the other processes' ranks do not read this rank's
// inputs inside the registration in place, or nil when they do (or need
// not: ranks of one process, a communicator on the ring).
func (r *Registration) Unshared() error { return r.why }

// Deregister ends the registration (this rank's call alone): once this
// rank's GPU has finished what it enqueued, the other processes' ranks
// unmap the buffer.
func (r *Registration) Deregister() error {
	var end func() error
	if r.r != nil {
		end = r.r.Deregister
	}
	return r.deregister("deregister", "registration", end)
}
