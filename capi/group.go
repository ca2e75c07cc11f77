package main

import (
	"cmp"
	"fmt"
)

// groupStart is ncclGroupStart: it opens a (nested) group on thread tid.
func (l *library) groupStart(tid uint64) { l.reg.groupStart(tid) }

// groupEnd is ncclGroupEnd. Closing thread tid's outermost group runs what
// it deferred (runGroup). A group of non-blocking creations runs in the
// background (nonblocking.go): the end returns ncclInProgress at once, or
// the group's error when one of its calls failed. Otherwise the end blocks
// and returns the first failure: a creation's, else the argument error of a
// call of the group (whose sends and receives then do not run, as in NCCL),
// else the sends' and receives'.
func (l *library) groupEnd(tid uint64) error {
	g, err := l.reg.closeGroup(tid)
	if g == nil {
		return err
	}
	if g.mode == groupNonblocking && len(g.deferred)+len(g.windows) > 0 {
		l.background(g)
		return cmp.Or(g.failure(), errInProgress)
	}
	created, sent := l.runGroup(g)
	err = cmp.Or(created, g.failure(), sent)
	l.reg.recycle(g)
	return err
}

// runGroup runs what group g deferred: first the creations of
// communicators, concurrently, then their window registrations,
// concurrently, then — once they are made, and unless a call of the group
// failed — the sends and receives, all of them, on every communicator, as
// one ringo.SendRecv (runP2P), as NCCL launches a group's operations
// together. It returns the creations' (or windows') first error and the
// sends' and receives'.
func (l *library) runGroup(g *groupState) (created, sent error) {
	created = l.reg.run(g.deferred)
	if len(g.windows) > 0 {
		created = cmp.Or(created, l.runWindows(g.windows))
	}
	if g.err == nil && len(g.p2p) > 0 {
		sent = l.runP2P("ncclGroupEnd", g.p2p)
	}
	return created, sent
}

// failure is the error a group's end reports for the failed call of the
// group (g.err), or nil.
func (g *groupState) failure() error {
	if g.err == nil {
		return nil
	}
	return fmt.Errorf("ncclGroupEnd: none of the group's %d sends and receives ran, because an earlier call of the group failed: %w", len(g.p2p), g.err)
}
