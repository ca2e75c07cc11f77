package main

import (
	"context"
	"errors"
	"fmt"
	"strings"
	"unsafe"

	"github.com/ringo-ccl/ringo"
	"github.com/ringo-ccl/ringo/internal/env"
)

// initRank is ncclCommInitRank, ncclCommInitRankConfig (cfgp non-NULL) and
// ncclCommInitRankScalable with one id: the calling thread's current device
// becomes rank rank of the nranks-rank communicator of the 128-byte id at
// idp, whose other ranks may be in this process or in others. Outside a
// group it blocks until all nranks ranks have joined (a non-blocking one
// returns ncclInProgress at once and joins in the background); inside one
// it returns the handle at once, and the group's end makes the rank.
func (l *library) initRank(fn string, tid uint64, out unsafe.Pointer, nranks, rank int32, idp, cfgp unsafe.Pointer) error {
	if out == nil {
		return invalidArg("%s: comm (the ncclComm_t* to fill) is NULL", fn)
	}
	putPtr(out, nil)
	if idp == nil {
		return invalidArg("%s: commId is NULL", fn)
	}
	if nranks < 1 {
		return invalidArg("%s: nranks %d: a communicator needs at least 1 rank", fn, nranks)
	}
	if rank < 0 || rank >= nranks {
		return invalidArg("%s: rank %d is outside [0, %d)", fn, rank, nranks)
	}
	cfg, err := newConfig(fn, defaultConfig(), cfgp)
	if err != nil {
		return err
	}
	dev, err := l.device()
	if err != nil {
		return fmt.Errorf("%s: finding the current CUDA device: %w", fn, err)
	}
	var id [128]byte
	copy(id[:], unsafe.Slice((*byte)(idp), len(id)))
	l.log.version(dev, int(rank))
	e := &commEntry{dev: dev, cfg: cfg}
	h := l.handles.add(e)
	l.log.infof(dev, env.SubInit, "%s comm %p rank %d nranks %d cudaDev %d commId %#x - Init START", fn, h, rank, nranks, dev, idHash(id))
	c := &creation{fn: fn, entry: e, init: &idRank{id: id, nranks: int(nranks), rank: int(rank)}, nonblocking: cfg.nonblocking()}
	c.run = func(ctx context.Context) (rankComm, error) {
		comm, err := l.join(ctx, id, int(nranks), int(rank), dev, cfg.ringo())
		if err != nil {
			what := fmt.Sprintf("rank %d of the %d-rank communicator of ncclUniqueId %#x on GPU %d", rank, nranks, idHash(id), dev)
			return nil, l.creationError(fn, what, err, l.reg.waiting(id))
		}
		l.logComplete(e, comm, fmt.Sprintf("commId %#x", idHash(id)))
		return comm, nil
	}
	return l.create(tid, c, out)
}

// create enrolls c and, once it is accepted, writes its handle (none for
// NCCL_SPLIT_NOCOLOR) at out. Inside a group c waits for the group's end;
// outside one a blocking c is made before create returns (its handle is
// removed if that fails), a non-blocking one in the background: create
// then returns its handle's async state, ncclInProgress while it runs.
func (l *library) create(tid uint64, c *creation, out unsafe.Pointer) error {
	deferred, err := l.reg.enroll(tid, c)
	now := err == nil && !deferred
	if now && !c.nonblocking {
		err = l.reg.run([]*creation{c})
	}
	if err != nil {
		if c.entry != nil {
			l.handles.remove(c.fn, c.entry.handle)
		}
		return err
	}
	if c.entry != nil {
		putPtr(out, c.entry.handle) // inside a group: now, as NCCL does; the group's end fills it
	}
	if !now || !c.nonblocking {
		return nil
	}
	l.background(&groupState{deferred: []*creation{c}})
	if c.entry == nil {
		return nil // NCCL_SPLIT_NOCOLOR: the parent says when it is done
	}
	return c.entry.async()
}

// creationError describes the failure of making what, one rank, because of
// err (ringo's, passed through). waiting are ranks of its communicator that
// this process holds back in a group that has not ended.
func (l *library) creationError(fn, what string, err error, waiting []int) error {
	var hints []string
	if len(waiting) > 0 {
		hints = append(hints, fmt.Sprintf("ranks %v were initialised inside a ncclGroupStart whose ncclGroupEnd has not run", waiting))
	}
	if errors.Is(err, ringo.ErrTimeout) || errors.Is(err, context.DeadlineExceeded) {
		hints = append(hints, fmt.Sprintf("waited %v: RINGO_TIMEOUT sets this wait", l.reg.timeout()))
	}
	if len(hints) == 0 {
		return fmt.Errorf("%s: %s: %w", fn, what, err)
	}
	return fmt.Errorf("%s: %s: %w (%s)", fn, what, err, strings.Join(hints, "; "))
}

func (l *library) logComplete(e *commEntry, c rankComm, what string) {
	l.log.infof(c.GPU(), env.SubInit, "ringo %s comm %p rank %d nranks %d cudaDev %d %s - Init COMPLETE", versionString, e.handle, c.Rank(), c.Size(), c.GPU(), what)
}

// initRankScalable is ncclCommInitRankScalable: ringo takes one id.
func (l *library) initRankScalable(tid uint64, out unsafe.Pointer, nranks, rank, nID int32, ids, cfgp unsafe.Pointer) error {
	const fn = "ncclCommInitRankScalable"
	switch {
	case out == nil:
		return invalidArg("%s: newcomm is NULL", fn)
	case nID < 1 || nID > max(nranks, 1):
		putPtr(out, nil)
		return invalidArg("%s: nId %d is outside [1, nranks %d]", fn, nID, nranks)
	case ids == nil:
		putPtr(out, nil)
		return invalidArg("%s: commIds is NULL", fn)
	case nID > 1:
		putPtr(out, nil)
		return invalidUsage("%s: nId %d: ringo supports one ncclUniqueId per communicator", fn, nID)
	}
	return l.initRank(fn, tid, out, nranks, rank, ids, cfgp)
}

// initAll is ncclCommInitAll: the ranks of a communicator of a fresh unique
// id, rank i on devlist[i] (or device i), made concurrently as
// ncclCommInitRank would make them. It blocks, in a group or not.
func (l *library) initAll(out unsafe.Pointer, ndev int32, devlist unsafe.Pointer) error {
	const fn = "ncclCommInitAll"
	if out == nil {
		return invalidArg("%s: comms is NULL", fn)
	}
	if ndev < 0 {
		return invalidArg("%s: ndev %d is negative", fn, ndev)
	}
	if ndev == 0 {
		return nil
	}
	slots := unsafe.Slice((*unsafe.Pointer)(out), ndev)
	clear(slots)
	devs := make([]int, ndev)
	for i := range devs {
		devs[i] = i
	}
	if devlist != nil {
		for i, d := range unsafe.Slice((*int32)(devlist), ndev) {
			devs[i] = int(d)
		}
	}
	n, countErr := l.devices()
	for i, d := range devs {
		if d < 0 || (countErr == nil && d >= n) {
			return invalidArg("%s: devlist[%d] = %d is not a CUDA device (%d devices)", fn, i, d, n)
		}
	}
	id, err := l.newID()
	if err != nil {
		return apiErrorf(ncclSystemError, "%s: making a unique id: %v", fn, err)
	}
	cfg, err := newConfig(fn, defaultConfig(), nil)
	if err != nil {
		return err
	}
	l.log.version(devs[0], 0)
	cs := make([]*creation, ndev)
	for r, d := range devs {
		cs[r] = &creation{fn: fn, entry: &commEntry{dev: d, cfg: cfg}}
		cs[r].run = func(ctx context.Context) (rankComm, error) {
			comm, err := l.join(ctx, id, len(devs), r, d, nil)
			if err != nil {
				return nil, l.creationError(fn, fmt.Sprintf("rank %d of %d on GPU %d", r, ndev, d), err, nil)
			}
			return comm, nil
		}
	}
	if err := l.reg.run(cs); err != nil {
		for _, c := range cs {
			if st := c.entry.state.Load(); st != nil && st.comm != nil {
				st.comm.Close()
			}
		}
		return err
	}
	for r, c := range cs {
		slots[r] = l.handles.add(c.entry)
		l.logComplete(c.entry, c.entry.state.Load().comm, "ncclCommInitAll")
	}
	return nil
}

// split is ncclCommSplit: the parent rank's part in ringo's split, which
// every rank of the parent communicator (in any process) takes. Outside a
// group it blocks until all have (a non-blocking one returns
// ncclInProgress at once and splits in the background); inside one it
// returns the handle at once, and the group's end makes the rank.
// NCCL_SPLIT_NOCOLOR gets NULL.
func (l *library) split(tid uint64, parent unsafe.Pointer, color, key int32, out, cfgp unsafe.Pointer) error {
	const fn = "ncclCommSplit"
	pe, err := l.handles.lookup(fn, parent)
	if err != nil {
		return err
	}
	if out == nil {
		return invalidArg("%s: newcomm is NULL", fn)
	}
	putPtr(out, nil)
	if color < 0 && color != ncclSplitNoColor {
		return invalidArg("%s: color %d: must be >= 0 or NCCL_SPLIT_NOCOLOR (-1)", fn, color)
	}
	pst, err := pe.get(fn)
	if err != nil {
		return err
	}
	cfg, err := newConfig(fn, pe.cfg, cfgp)
	if err != nil {
		return err
	}
	pc := pst.comm
	c := &creation{fn: fn, parent: pe, nonblocking: cfg.nonblocking()}
	if color != ncclSplitNoColor {
		c.entry = &commEntry{dev: pc.GPU(), cfg: cfg}
		l.handles.add(c.entry)
	}
	c.run = func(ctx context.Context) (rankComm, error) {
		kid, err := pe.split(ctx, pc, int(color), int(key), cfg.ringo())
		switch {
		case err != nil:
			what := fmt.Sprintf("rank %d of communicator %p (color %d, key %d)", pc.Rank(), parent, color, key)
			return nil, l.creationError(fn, what, err, nil)
		case kid == nil:
			return nil, nil // NCCL_SPLIT_NOCOLOR (or no communicator: do fails the handle)
		case c.entry == nil:
			kid.Close()
			return nil, apiErrorf(ncclInternalError, "%s: ringo made a communicator for NCCL_SPLIT_NOCOLOR", fn)
		}
		l.logComplete(c.entry, kid, fmt.Sprintf("split of %p color %d key %d", parent, color, key))
		return kid, nil
	}
	return l.create(tid, c, out)
}

// release takes handle h out of use: its operators and registrations go,
// and a creation deferred for it is dropped (one under way is waited for;
// with abort, cut short first).
func (l *library) release(fn string, h unsafe.Pointer, abort bool) (*commEntry, error) {
	e, err := l.handles.remove(fn, h)
	if err != nil {
		return nil, err
	}
	l.ops.drop(e)
	l.regs.drop(e)
	if wait := l.reg.withdraw(e, abort); wait != nil {
		<-wait // under way: the entry gets its communicator, closed below
	}
	return e, nil
}

// destroy is ncclCommDestroy: ringo's Close (doc.go says when it waits).
// As NCCL, a NULL comm is a no-op.
func (l *library) destroy(h unsafe.Pointer) error {
	return l.end("ncclCommDestroy", "Destroy", h, false)
}

// abort is ncclCommAbort: ringo's Abort, which stops the rank's kernels and
// those of its in-process peers, then Close. As NCCL, a NULL comm is a
// no-op, and the Close's error is not reported (after Abort it says only
// that the rank was aborted).
func (l *library) abort(h unsafe.Pointer) error {
	return l.end("ncclCommAbort", "Abort", h, true)
}

// end releases handle h and closes its communicator, aborting it first
// when abort is set.
func (l *library) end(fn, what string, h unsafe.Pointer, abort bool) error {
	if h == nil {
		return nil
	}
	e, err := l.release(fn, h, abort)
	if err != nil {
		return err
	}
	st := e.state.Load()
	if st == nil || st.comm == nil {
		return nil
	}
	c := st.comm
	if abort {
		c.Abort() // without e.mu: a collective being enqueued must not delay it
	}
	broken := c.Err()
	err = e.close(c)
	l.log.infof(e.dev, env.SubInit, "comm %p rank %d nranks %d cudaDev %d - %s COMPLETE", h, c.Rank(), c.Size(), c.GPU(), what)
	switch {
	case err == nil || abort:
		return nil
	case broken != nil:
		// The rank's resources are released; what the close could not do
		// with the ranks the loss took is that loss, which the caller
		// knows (ncclCommGetAsyncError). An error here costs PyTorch
		// seconds: it logs a failed destroy with its stack, importing
		// torch._dynamo to format it.
		l.log.warnf(e.dev, "%s: comm %p, broken before (%v): %v", fn, h, broken, err)
		return nil
	}
	return fmt.Errorf("%s: %w", fn, err)
}
