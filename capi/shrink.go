package main

import (
	"context"
	"fmt"
	"unsafe"

	"github.com/ringo-ccl/ringo"
)

// Surviving a lost rank through the C ABI (NCCL 2.27's ncclCommShrink,
// 2.29's ncclCommRevoke, ncclCommGetUniqueId and ncclCommGrow): each call
// is ringo's of the same name on the handle's communicator. Shrink and Grow
// make a communicator as ncclCommSplit does — a creation, deferred to the
// group's end inside a group — so their new handles follow the same rules.

// The flags of ncclCommShrink and ncclCommRevoke (nccl.h).
const (
	ncclShrinkDefault = 0 // NCCL_SHRINK_DEFAULT
	ncclShrinkAbort   = 1 // NCCL_SHRINK_ABORT
	ncclRevokeDefault = 0 // NCCL_REVOKE_DEFAULT
)

// shrink is ncclCommShrink: the parent rank's part in ringo's Shrink (or
// ShrinkAbort, with NCCL_SHRINK_ABORT), which every rank not excluded
// takes; the excluded ranks do not call. Under NCCL_SHRINK_ABORT the
// parent's work is aborted first, without waiting for a launch under way on
// another thread; the parent is then only to be destroyed.
func (l *library) shrink(tid uint64, parent, excl unsafe.Pointer, nExcl int32, out, cfgp unsafe.Pointer, flags int32) error {
	const fn = "ncclCommShrink"
	if out == nil {
		return invalidArg("%s: newcomm is NULL", fn)
	}
	putPtr(out, nil)
	pe, err := l.handles.lookup(fn, parent)
	if err != nil {
		return err
	}
	switch {
	case flags != ncclShrinkDefault && flags != ncclShrinkAbort:
		return invalidArg("%s: shrinkFlags %d: must be NCCL_SHRINK_DEFAULT (0) or NCCL_SHRINK_ABORT (1)", fn, flags)
	case nExcl < 0:
		return invalidArg("%s: excludeRanksCount %d is negative", fn, nExcl)
	case nExcl > 0 && excl == nil:
		return invalidArg("%s: excludeRanksList is NULL but excludeRanksCount is %d", fn, nExcl)
	}
	pst, err := pe.get(fn)
	if err != nil {
		return err
	}
	pc := pst.comm
	exclude := make([]int, nExcl)
	for i, r := range unsafe.Slice((*int32)(excl), nExcl) {
		exclude[i] = int(r)
	}
	if err := checkExclude(pc.Rank(), pc.Size(), exclude); err != nil {
		return invalidArg("%s: %v", fn, err)
	}
	cfg, err := newConfig(fn, pe.cfg, cfgp) // as a split: without a config, the parent's
	if err != nil {
		return err
	}
	abort := flags == ncclShrinkAbort
	what := fmt.Sprintf("rank %d of communicator %p (excluding ranks %v)", pc.Rank(), parent, exclude)
	return l.remake(tid, fn, out, pe, pc, cfg, what, func(ctx context.Context) (rankComm, error) {
		return pe.shrink(ctx, pc, exclude, cfg.ringo(), abort)
	})
}

// remake enrolls the creation of fn's new communicator from pc, this
// rank's parent (of handle entry pe), made by make (what names the rank, in
// errors and the log), and puts its handle at out: at once inside a group
// or when it is non-blocking, when it is made otherwise (library.create).
func (l *library) remake(tid uint64, fn string, out unsafe.Pointer, pe *commEntry, pc rankComm, cfg commConfig, what string,
	make func(ctx context.Context) (rankComm, error)) error {
	c := &creation{fn: fn, entry: &commEntry{dev: pc.GPU(), cfg: cfg}, parent: pe, nonblocking: cfg.nonblocking()}
	l.handles.add(c.entry)
	c.run = func(ctx context.Context) (rankComm, error) {
		kid, err := make(ctx)
		if err != nil {
			return nil, l.creationError(fn, what, err, nil)
		}
		l.logComplete(c.entry, kid, fmt.Sprintf("%s of %s", fn, what))
		return kid, nil
	}
	return l.create(tid, c, out)
}

// checkExclude is ncclCommShrink's check of the excluded ranks of rank,
// of a communicator of size ranks, before anything waits: ringo's Shrink
// checks them again.
func checkExclude(rank, size int, exclude []int) error {
	seen := make(map[int]bool, len(exclude))
	for i, r := range exclude {
		switch {
		case r < 0 || r >= size:
			return fmt.Errorf("excludeRanksList[%d] = %d is outside [0, %d)", i, r, size)
		case r == rank:
			return fmt.Errorf("excludeRanksList[%d] is this rank (%d): an excluded rank does not call ncclCommShrink", i, r)
		case seen[r]:
			return fmt.Errorf("rank %d is in excludeRanksList twice", r)
		}
		seen[r] = true
	}
	return nil
}

// revoke is ncclCommRevoke: ringo's Revoke, which ends every call in
// progress on the communicator, on every rank, and every later one. It
// returns at once (ncclSuccess: ringo needs no ncclInProgress phase); the
// communicator is then to be shrunk or destroyed.
func (l *library) revoke(h unsafe.Pointer, flags int32) error {
	const fn = "ncclCommRevoke"
	e, err := l.handles.lookup(fn, h)
	if err != nil {
		return err
	}
	if flags != ncclRevokeDefault {
		return invalidArg("%s: revokeFlags %d: must be NCCL_REVOKE_DEFAULT (0)", fn, flags)
	}
	st, err := e.made(fn) // even while background work uses it: that is what it is for
	if err != nil {
		return err
	}
	st.comm.Revoke() // without e.mu: it must reach a launch stuck on another thread
	return nil
}

// commGetUniqueID is ncclCommGetUniqueId: ringo's GrowID, the id of a
// communicator grown from this one, which this rank (the coordinator)
// passes to ncclCommGrow and hands to the new ranks.
func (l *library) commGetUniqueID(h, out unsafe.Pointer) error {
	const fn = "ncclCommGetUniqueId"
	e, err := l.handles.lookup(fn, h)
	if err != nil {
		return err
	}
	if out == nil {
		return invalidArg("%s: uniqueId is NULL", fn)
	}
	st, err := e.get(fn)
	if err != nil {
		return err
	}
	e.mu.Lock()
	id, err := st.comm.GrowID()
	e.mu.Unlock()
	if err != nil {
		return fmt.Errorf("%s: %w", fn, err)
	}
	copy(unsafe.Slice((*byte)(out), len(id)), id[:])
	return nil
}

// grow is ncclCommGrow. An existing rank passes its communicator and rank
// -1, and keeps its rank (ringo's Grow; the coordinator passes the id that
// ncclCommGetUniqueId gave it, the others NULL). A new rank passes a NULL
// comm, the id and its rank in the grown communicator (ringo's JoinGrow,
// which is ncclCommInitRankConfig's creation under another name).
func (l *library) grow(tid uint64, parent unsafe.Pointer, nranks int32, idp unsafe.Pointer, rank int32, out, cfgp unsafe.Pointer) error {
	const fn = "ncclCommGrow"
	if out == nil {
		return invalidArg("%s: newcomm is NULL", fn)
	}
	putPtr(out, nil)
	if parent == nil {
		switch {
		case idp == nil:
			return invalidArg("%s: uniqueId is NULL: a new rank (comm NULL) passes the id the coordinator's ncclCommGetUniqueId made", fn)
		case rank < 0:
			return invalidArg("%s: rank %d: a new rank (comm NULL) gives its rank in the grown communicator", fn, rank)
		}
		return l.initRank(fn, tid, out, nranks, rank, idp, cfgp)
	}
	pe, err := l.handles.lookup(fn, parent)
	if err != nil {
		return err
	}
	if rank != -1 {
		return invalidArg("%s: rank %d: an existing rank (comm non-NULL) passes -1 and keeps its rank", fn, rank)
	}
	pst, err := pe.get(fn)
	if err != nil {
		return err
	}
	pc := pst.comm
	if int(nranks) <= pc.Size() {
		return invalidArg("%s: nRanks %d: the grown communicator must have more than the %d ranks of comm", fn, nranks, pc.Size())
	}
	var id *ringo.UniqueID
	if idp != nil {
		id = new(ringo.UniqueID)
		copy(id[:], unsafe.Slice((*byte)(idp), len(id)))
	}
	cfg, err := newConfig(fn, pe.cfg, cfgp)
	if err != nil {
		return err
	}
	what := fmt.Sprintf("rank %d of communicator %p growing to %d ranks", pc.Rank(), parent, nranks)
	return l.remake(tid, fn, out, pe, pc, cfg, what, func(ctx context.Context) (rankComm, error) {
		return pe.grow(ctx, pc, int(nranks), id, cfg.ringo())
	})
}
