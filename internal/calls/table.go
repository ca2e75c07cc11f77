package calls

import (
	"context"
	"fmt"
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
}

// NewTable returns the table of n ranks, none of which has called yet.
func NewTable(n int) *Table { return &Table{recs: make([]Record, n)} }

// Enter records rank's call rec and checks it against every other rank's
// record of the same collective. A mismatch is returned (and the caller
// aborts the communicator: the ranks already inside will never complete).
func (t *Table) Enter(rank int, rec Record) error {
	t.mu.Lock()
	defer t.mu.Unlock()
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
