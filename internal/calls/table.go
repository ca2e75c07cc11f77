package calls

import (
	"context"
	"fmt"
	"runtime"
	"strings"
	"sync"
	"time"

	"github.com/ringo-ccl/ringo/bootstrap"
	"github.com/ringo-ccl/ringo/transport"
)

// Table is the latest call of each rank of a communicator whose ranks are
// all in this process. It is safe for concurrent use.
type Table struct {
	mu   sync.Mutex // guards recs
	recs []Record
	wait time.Duration // OrderWait; 0: no order (Unordered)
}

// Unordered makes Enter keep no order between the ranks of a GPU
// (RINGO_LAUNCH_ORDER=0).
func (t *Table) Unordered() {
	t.mu.Lock()
	t.wait = 0
	t.mu.Unlock()
}

// NewTable returns the table of n ranks, none of which has called yet.
func NewTable(n int) *Table { return &Table{recs: make([]Record, n), wait: OrderWait} }

// OrderWait bounds how long a GPU rank's call waits in Enter for the
// other ranks of its GPU to have enqueued the call before.
const OrderWait = 50 * time.Millisecond

// Enter records rank's call rec and checks it against every other rank's
// record of the same collective. A mismatch is returned (and the caller
// aborts the communicator: the ranks already inside will never complete).
//
// A GPU call first waits, at most OrderWait, until every other rank that
// may share its GPU has left the collective before: so the ranks' kernels
// reach the GPU in the order of their collectives, and none can sit in a
// hardware queue behind its own rank's next kernel, which waits for it.
// CUDA may give two ranks' streams one queue (BENCHMARKS "The graph hang
// outside ringo"), and ranks of one process that share a GPU then
// deadlock so when one enqueues two calls before the other its first.
// Past the bound it goes on (one thread may drive several ranks in any
// order).
func (t *Table) Enter(rank int, rec Record) error {
	t.mu.Lock()
	defer t.mu.Unlock()
	if t.wait > 0 && rec.Stream.GPU >= 0 && rec.Seq > 1 {
		t.awaitPrevious(rank, rec)
	}
	t.recs[rank] = rec
	for r, o := range t.recs {
		if r == rank || o.Seq != rec.Seq {
			continue
		}
		if err := rec.Mismatch(rank, o, r); err != nil {
			return err
		}
		if err := SameStream(rec.Seq, r, o.Stream, rank, rec.Stream); err != nil {
			return err
		}
	}
	return nil
}

// Leave marks rank's current call finished.
func (t *Table) Leave(rank int) {
	t.mu.Lock()
	t.recs[rank].Done = true
	t.mu.Unlock()
}

// awaitPrevious waits (t.mu held, released while waiting), at most
// t.wait, until every other rank whose latest call was on rec's GPU, or
// that has not called yet, has left collective rec.Seq-1. It spins,
// yielding, for the few microseconds a peer's launch takes, then sleeps
// between polls; a call that need not wait allocates nothing and reads no
// clock.
func (t *Table) awaitPrevious(rank int, rec Record) {
	var start time.Time
	for polls := 0; ; polls++ {
		behind := false
		for r, o := range t.recs {
			if r != rank && (o.Seq == 0 || o.Stream.GPU == rec.Stream.GPU) && (o.Seq < rec.Seq-1 || o.Seq == rec.Seq-1 && !o.Done) {
				behind = true
				break
			}
		}
		if !behind {
			return
		}
		var waited time.Duration
		if polls == 0 {
			start = time.Now()
		} else if waited = time.Since(start); waited > t.wait {
			return
		}
		t.mu.Unlock()
		if waited < orderSpin {
			runtime.Gosched()
		} else {
			time.Sleep(orderSpin / 4)
		}
		t.mu.Lock()
	}
}

// orderSpin is how long awaitPrevious spins before it sleeps: a few
// launches' time (a launch costs about 5 µs on an H200).
const orderSpin = 200 * time.Microsecond

// Stalled describes, for a call that timed out, which ranks have not yet
// entered it and which are still inside it.
func (t *Table) Stalled(seq uint64) string {
	t.mu.Lock()
	defer t.mu.Unlock()
	ps := make([]bootstrap.Progress, len(t.recs))
	for r, c := range t.recs {
		ps[r] = bootstrap.NewProgress(r, c.Seq, c.Done)
	}
	return StallReport(seq, ps)
}

// Compare all-gathers rank's record rec through ex and checks it against
// every rank's, within timeout (0: none): RINGO_CHECK=1 across processes.
// Every rank calls it for every collective.
func Compare(ex transport.Exchanger, rank int, rec Record, timeout time.Duration) error {
	ctx := context.Background()
	if timeout > 0 {
		var cancel context.CancelFunc
		ctx, cancel = context.WithTimeout(ctx, timeout)
		defer cancel()
	}
	all, err := ex.AllGather(ctx, rec.Encode())
	if err != nil {
		return fmt.Errorf("RINGO_CHECK: comparing collective #%d with the other ranks: %w", rec.Seq, err)
	}
	for r, b := range all {
		o, err := Decode(b)
		if err != nil {
			return fmt.Errorf("RINGO_CHECK: rank %d's record of collective #%d: %w", r, rec.Seq, err)
		}
		if err := rec.Mismatch(rank, o, r); err != nil {
			return err
		}
	}
	return nil
}

// StallReport describes where every rank is when this rank's collective
// #seq timed out, Horovod's stall inspector's way: the ranks that have not
// called it (with the collective each is at), those still inside it, those
// done with it, and those that did not answer or are gone.
func StallReport(seq uint64, ps []bootstrap.Progress) string {
	var missing, inside, finished, silent, gone []int
	var at []string
	for _, p := range ps {
		switch {
		case p.State == bootstrap.Silent:
			silent = append(silent, p.Rank)
		case p.State == bootstrap.Gone:
			gone = append(gone, p.Rank)
		case p.Seq < seq:
			missing = append(missing, p.Rank)
			at = append(at, fmt.Sprintf("rank %d at #%d", p.Rank, p.Seq))
		case p.Seq == seq && p.State == bootstrap.Inside:
			inside = append(inside, p.Rank)
		default:
			finished = append(finished, p.Rank)
		}
	}
	out := fmt.Sprintf("collective #%d: ranks that never called it %v, ranks still inside it %v", seq, missing, inside)
	for _, l := range []struct {
		what  string
		ranks []int
	}{{"ranks past it", finished}, {"ranks not answering", silent}, {"ranks gone", gone}} {
		if len(l.ranks) > 0 {
			out += fmt.Sprintf(", %s %v", l.what, l.ranks)
		}
	}
	if len(at) > 0 {
		out += " (" + strings.Join(at, ", ") + ")"
	}
	return out
}
