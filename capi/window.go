package main

import (
	"cmp"
	"context"
	"fmt"
	"math"
	"sync"
	"unsafe"
)

// NCCL's window flags (nccl.h): NCCL_WIN_DEFAULT and
// NCCL_WIN_COLL_SYMMETRIC, which a ringo window always is (every rank's
// buffer of one size, registered together).
const (
	winDefault       = 0x00
	winCollSymmetric = 0x01
)

// commWindow is a registered window (ringo.Window, or a fake's).
type commWindow interface{ Deregister() error }

// windowOp is an ncclCommWindowRegister inside a group, run at its end.
type windowOp struct {
	fn     string
	entry  *commEntry
	handle unsafe.Pointer // its regTable handle
	out    unsafe.Pointer // the caller's ncclWindow_t, written once it is registered
	buff   uintptr
	size   int64
}

// windowRegister is ncclCommWindowRegister: collective over the
// communicator's ranks, so inside a group it runs at the group's end, each
// communicator's on a goroutine of its own (one thread registers for
// several ranks: nccl-tests -g, -R 2), and *win is written then.
func (l *library) windowRegister(tid uint64, h unsafe.Pointer, buff uintptr, size uint64, out unsafe.Pointer, flags int32) error {
	const fn = "ncclCommWindowRegister"
	e, err := l.handles.lookup(fn, h)
	if err != nil {
		return err
	}
	switch {
	case out == nil:
		return invalidArg("%s: win is NULL", fn)
	case flags != winDefault && flags != winCollSymmetric:
		return invalidArg("%s: winFlags %#x (NCCL_WIN_DEFAULT 0 or NCCL_WIN_COLL_SYMMETRIC 1)", fn, flags)
	case buff == 0:
		return invalidArg("%s: buff is NULL", fn)
	case size == 0 || size > math.MaxInt64:
		return invalidArg("%s: size %d", fn, size)
	}
	putPtr(out, nil)
	if _, err := e.get(fn); err != nil {
		return err
	}
	op := &windowOp{fn: fn, entry: e, handle: l.regs.add(e, true), out: out, buff: buff, size: int64(size)}
	deferred, err := l.reg.deferWindow(tid, op)
	if err != nil {
		l.regs.remove(fn, e, op.handle, true)
		return err
	}
	if deferred {
		return nil
	}
	ctx, cancel := l.reg.context()
	defer cancel()
	return l.runWindow(ctx, op)
}

// runWindow registers op's window, and hands its handle out.
func (l *library) runWindow(ctx context.Context, op *windowOp) error {
	st, err := op.entry.get(op.fn)
	if err == nil {
		op.entry.mu.Lock()
		var w commWindow
		w, err = st.comm.RegisterWindow(ctx, op.buff, op.size)
		op.entry.mu.Unlock()
		if err == nil {
			l.regs.set(op.handle, w)
			putPtr(op.out, op.handle)
			return nil
		}
	}
	l.regs.remove(op.fn, op.entry, op.handle, true)
	return fmt.Errorf("%s: %w", op.fn, err)
}

// runWindows runs a group's window registrations: each communicator's in
// the order they were made (every rank registers its windows in one
// order), the communicators' at once, each on a goroutine of its own. It
// returns the first failure.
func (l *library) runWindows(ops []*windowOp) error {
	ctx, cancel := l.reg.context()
	defer cancel()
	var comms []*commEntry
	byComm := map[*commEntry][]*windowOp{}
	for _, op := range ops {
		if byComm[op.entry] == nil {
			comms = append(comms, op.entry)
		}
		byComm[op.entry] = append(byComm[op.entry], op)
	}
	errs := make([]error, len(ops))
	var wg sync.WaitGroup
	i := 0
	for _, e := range comms {
		first := i
		i += len(byComm[e])
		wg.Go(func() {
			for k, op := range byComm[e] {
				errs[first+k] = l.runWindow(ctx, op)
			}
		})
	}
	wg.Wait()
	return cmp.Or(errs...)
}

// windowDeregister is ncclCommWindowDeregister: local to the rank, as
// NCCL's (nccl-tests deregisters its ranks' windows one after another on
// one thread).
func (l *library) windowDeregister(h, win unsafe.Pointer) error {
	const fn = "ncclCommWindowDeregister"
	if _, err := l.handles.lookup(fn, h); err != nil {
		return err
	}
	if win == nil {
		return invalidArg("%s: win is NULL", fn)
	}
	return l.endRegistration(fn, h, win, true)
}
