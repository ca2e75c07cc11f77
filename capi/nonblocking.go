package main

import "cmp"

// Non-blocking communicators (config.blocking = 0, or NCCL_COMM_BLOCKING=0):
// the creations of one — an ncclCommInitRank* or ncclCommSplit, Shrink or
// Grow outside a group, or the ncclGroupEnd of a group of them — run in the
// background (background), and the call returns ncclInProgress at once,
// with the handle written. Until that work is done, ncclCommGetAsyncError
// of each communicator it uses says ncclInProgress (commEntry.pending) and
// their other calls are refused, as in NCCL; ncclCommAbort cuts a creation
// short (registry.withdraw).

// errInProgress is ncclInProgress: a non-blocking call's work goes on in
// the background. The exports return it without recording it as an error.
var errInProgress = apiErrorf(ncclInProgress, "in progress")

// background runs g — its creations, then its sends and receives, as
// groupEnd runs those of a blocking group — on a goroutine of its own
// (routineGroup), and returns at once. The communicators g makes, their
// parents, and those its sends and receives run on are pending until it is
// done.
func (l *library) background(g *groupState) {
	uses := g.uses()
	for _, e := range uses {
		e.pending.Add(1)
	}
	go l.routineGroup(g, uses)
}

// routineGroup is background's goroutine; it ends once g's work does, each
// creation bounded by the timeout. Each created handle holds its own
// outcome; a failure of the sends and receives (or a panic) becomes the
// async error of the communicators they ran on, as NCCL's
// ncclCommSetAsyncError. Then uses, the communicators background marked
// pending, are released.
func (l *library) routineGroup(g *groupState, uses []*commEntry) {
	created, sent := func() (created, sent error) {
		defer func() {
			if p := recover(); p != nil {
				sent = panicError("ncclGroupEnd", p)
			}
		}()
		return l.runGroup(g)
	}()
	if sent != nil {
		for i := range g.p2p {
			g.p2p[i].entry.bgErr.CompareAndSwap(nil, &sent)
		}
	}
	if err := cmp.Or(created, sent); err != nil {
		l.log.warnf(-1, "%v (non-blocking, in the background)", err)
	}
	for _, e := range uses {
		e.pending.Add(-1)
	}
}

// uses returns the communicators that g's work uses: those its creations
// make and their parents, and — unless a failed call of the group keeps
// them from running — those of its sends and receives. An entry may come
// more than once.
func (g *groupState) uses() []*commEntry {
	var es []*commEntry
	for _, c := range g.deferred {
		for _, e := range [...]*commEntry{c.entry, c.parent} {
			if e != nil {
				es = append(es, e)
			}
		}
	}
	if g.err == nil {
		for i := range g.p2p {
			es = append(es, g.p2p[i].entry)
		}
	}
	return es
}

// panicError is the error of a panic p recovered in fn.
func panicError(fn string, p any) error {
	return apiErrorf(ncclInternalError, "%s: internal error in ringo (Go panic): %v", fn, p)
}
