package group

import (
	"context"

	"github.com/ringo-ccl/ringo/internal/calls"
	"github.com/ringo-ccl/ringo/transport"
)

// Group is what a rank shares with the other ranks of its communicator:
// ranks in one process share a World; ranks in separate processes share a
// bootstrap and their connections (Procs).
type Group interface {
	// Enter records rank's next call and checks it against the other
	// ranks' where it can; Leave marks it finished. rec is read during the
	// call only (a rank's own, not copied: a record passed by value took
	// a small host call ~5 ns, BENCHMARKS.md, issue 25).
	Enter(rank int, rec *calls.Record) error
	Leave(rank int)
	// Stalled describes, for a call that timed out, what it waits for.
	Stalled(seq uint64) string
	// Broken is raised when the communicator can no longer complete a
	// collective: a rank failed mid-way, aborted, or was lost.
	Broken() *transport.Abort
	// Fail raises Broken with cause and stops whatever the group's ranks
	// are still running (their GPUs' kernels included).
	Fail(cause error)
	// Told records that the application is being told, now, that the
	// group is broken: kernels that a lost peer left waiting stop (see
	// Procs.StopGrace).
	Told()
	// Revoke fails the group on every rank with reason wrapping
	// errs.ErrRevoked: on the ranks of this process at once, on the others
	// as the bootstrap's notice reaches them.
	Revoke(reason string)
	// Lost returns the ranks known gone, in increasing order.
	Lost() []int
	// Release is called once by each rank's Close.
	Release(rank int) error
	// Proxied reports whether net proxies run in this process, so waits
	// must not yield (transport.Waiter.SleepSoon).
	Proxied() bool
	// Connect makes the connections of edges that rank's communicator does
	// not have yet (host or GPU ones), and gives a GPU rank's executor its
	// grown table; every rank calls it at once with the same edges.
	Connect(ctx context.Context, rank int, edges []transport.Edge) error
	// Match pairs rank's sends and receives of a call with those of the
	// ranks in this process, in order per pair (calls.Matcher), and —
	// with RINGO_CHECK=1 — of ranks in other processes, and fails at a
	// pair whose sizes differ.
	Match(ctx context.Context, rank int, msgs []calls.Msg) error
}
