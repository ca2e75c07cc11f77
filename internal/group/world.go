package group

import (
	"context"
	"fmt"
	"sync"

	"github.com/ringo-ccl/ringo/device"
	"github.com/ringo-ccl/ringo/internal/calls"
	"github.com/ringo-ccl/ringo/internal/errs"
	"github.com/ringo-ccl/ringo/transport"
)

// World is what the in-process ranks of one communicator share: the
// transport, an abort flag that fails every rank once the ring is broken,
// and a record of each rank's calls (calls.Table), used to detect ranks
// that disagree on a collective and to name the ranks a stalled collective
// waits for.
type World struct {
	n     int
	tr    transport.Transport
	abort transport.Abort
	// Set by the world's maker before any rank uses it: what frees what
	// the ranks share, when the last one closes, and the ranks' device
	// executors, for a GPU world (Fail stops their kernels).
	Done func() error
	GPUs []*device.Rank
	// ConnectGPU makes a GPU world's connections of edges, if new, and
	// gives rank's executor its table (nil for host worlds, whose
	// in-memory connections are made on first use).
	ConnectGPU func(rank int, edges []transport.Edge) error

	calls *calls.Table
	match calls.Matcher

	mu       sync.Mutex // guards the fields below
	open     int        // ranks not yet closed
	lost     []bool     // ranks marked lost (Lose), by rank
	meetings meetings   // Meet's
}

var _ Group = (*World)(nil)

// NewWorld returns the world of n ranks over tr (nil for GPU ranks), which
// done (nil: set Done later) frees when the last rank closes.
func NewWorld(n int, tr transport.Transport, done func() error) *World {
	return &World{n: n, tr: tr, calls: calls.NewTable(n), open: n, Done: done, lost: make([]bool, n)}
}

// enter records rank's call and checks it against every other rank's
// record of the same collective. A mismatch is returned (and the caller
// aborts the world: the ranks already inside will never complete).
func (w *World) Enter(rank int, rec *calls.Record) error { return w.calls.Enter(rank, *rec) }

func (w *World) Leave(rank int) { w.calls.Leave(rank) }

// Unordered lets the world's GPU ranks enqueue their collectives without
// waiting for each other (calls.Table.Unordered).
func (w *World) Unordered() { w.calls.Unordered() }

func (w *World) Stalled(seq uint64) string { return w.calls.Stalled(seq) }

func (w *World) Broken() *transport.Abort { return &w.abort }

func (w *World) Proxied() bool { return false }

// fail breaks the world: every rank's waits end, and every rank's kernels
// stop at their next check of the abort flag.
func (w *World) Fail(cause error) {
	w.abort.Set(cause)
	for _, g := range w.GPUs {
		g.Abort()
	}
}

// Told does nothing: Fail stops a world's kernels at once.
func (w *World) Told() {}

// Revoke fails the world with reason: every rank is in this process.
func (w *World) Revoke(reason string) { w.Fail(fmt.Errorf("%s: %w", reason, errs.ErrRevoked)) }

// Lose marks rank lost, as a bootstrap marks a rank whose process died,
// and fails the world with ErrPeerLost naming it and why. The ranks of a
// world share a process, so none dies alone: this is how a test (or a
// rank's owner that has given it up) makes one lost.
func (w *World) Lose(rank int, why string) {
	w.mu.Lock()
	w.lost[rank] = true
	w.mu.Unlock()
	w.Fail(fmt.Errorf("rank %d lost: %s: %w", rank, why, errs.ErrPeerLost))
}

// Lost returns the ranks marked lost.
func (w *World) Lost() []int {
	w.mu.Lock()
	defer w.mu.Unlock()
	var out []int
	for r, gone := range w.lost {
		if gone {
			out = append(out, r)
		}
	}
	return out
}

// release closes the transport when the last rank leaves.
func (w *World) Release(int) error {
	w.mu.Lock()
	w.open--
	last := w.open == 0
	w.mu.Unlock()
	if last {
		return w.Done()
	}
	return nil
}

func (w *World) Match(_ context.Context, rank int, msgs []calls.Msg) error {
	return w.match.Match(rank, msgs)
}

// Connect makes a GPU world's connections (ConnectGPU); a host world's
// in-memory connections are made on first use.
func (w *World) Connect(_ context.Context, rank int, edges []transport.Edge) error {
	if w.ConnectGPU == nil {
		return nil
	}
	return w.ConnectGPU(rank, edges)
}
