package ringo

import (
	"context"
	"sync"

	"github.com/ringo-ccl/ringo/device"
	"github.com/ringo-ccl/ringo/internal/calls"
	"github.com/ringo-ccl/ringo/transport"
)

// world is what the in-process ranks of one communicator share: the
// transport, an abort flag that fails every rank once the ring is broken,
// and a record of each rank's calls (calls.Table), used to detect ranks
// that disagree on a collective and to name the ranks a stalled collective
// waits for.
type world struct {
	n     int
	tr    transport.Transport
	abort transport.Abort
	done  func() error   // frees what the ranks share, when the last one closes
	gpus  []*device.Rank // the ranks' device executors, for a GPU world
	calls *calls.Table

	mu   sync.Mutex // guards open
	open int        // ranks not yet closed
}

var _ group = (*world)(nil)

// newWorld returns the world of n ranks over tr (nil for GPU ranks), which
// done frees when the last rank closes.
func newWorld(n int, tr transport.Transport, done func() error) *world {
	return &world{n: n, tr: tr, calls: calls.NewTable(n), open: n, done: done}
}

// enter records rank's call and checks it against every other rank's
// record of the same collective. A mismatch is returned (and the caller
// aborts the world: the ranks already inside will never complete).
func (w *world) enter(rank int, rec calls.Record) error { return w.calls.Enter(rank, rec) }

func (w *world) leave(rank int) { w.calls.Leave(rank) }

func (w *world) stalled(seq uint64) string { return w.calls.Stalled(seq) }

func (w *world) broken() *transport.Abort { return &w.abort }

func (w *world) proxied() bool { return false }

// fail breaks the world: every rank's waits end, and every rank's kernels
// stop at their next check of the abort flag.
func (w *world) fail(cause error) {
	w.abort.Set(cause)
	for _, g := range w.gpus {
		g.Abort()
	}
}

// release closes the transport when the last rank leaves.
func (w *world) release(int) error {
	w.mu.Lock()
	w.open--
	last := w.open == 0
	w.mu.Unlock()
	if last {
		return w.done()
	}
	return nil
}

// connect does nothing: in-memory connections are made on first use.
func (w *world) connect(context.Context, []transport.Edge) error { return nil }
