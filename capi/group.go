package main

import (
	"cmp"
	"fmt"
)

// groupStart is ncclGroupStart: it opens a (nested) group on thread tid.
func (l *library) groupStart(tid uint64) { l.reg.groupStart(tid) }

// groupEnd is ncclGroupEnd. Closing thread tid's outermost group runs what
// it deferred: first the creations of communicators, concurrently, then —
// once they are made — the sends and receives, all of them, on every
// communicator, as one ringo.SendRecv (runP2P), as NCCL launches a group's
// operations together. It returns the first failure: a creation's, else the
// argument error of a send or receive of the group (whose sends and
// receives then do not run, as in NCCL), else the sends' and receives'.
func (l *library) groupEnd(tid uint64) error {
	g, err := l.reg.closeGroup(tid)
	if g == nil {
		return err
	}
	err = l.reg.run(g.deferred)
	switch {
	case g.err != nil:
		return cmp.Or(err, fmt.Errorf("ncclGroupEnd: none of the group's %d sends and receives ran, because an earlier call of the group failed: %w", len(g.p2p), g.err))
	case len(g.p2p) > 0:
		err = cmp.Or(err, l.runP2P("ncclGroupEnd", g.p2p))
	}
	return err
}
