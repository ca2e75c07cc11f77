package bootstrap

import (
	"context"
	"fmt"

	"github.com/ringo-ccl/ringo/internal/errs"
	"github.com/ringo-ccl/ringo/internal/mem"
)

// Progress is one rank's place in its communicator's sequence of
// collectives, as Bootstrap.Query reports it.
type Progress struct {
	Rank  int
	State ProgressState
	Seq   uint64 // collectives the rank has entered
}

// ProgressState is what a rank said when asked, or why it said nothing.
type ProgressState uint8

const (
	Inside   ProgressState = iota // inside its Seq-th collective
	Finished                      // its Seq-th collective returned (or it has called none: Seq 0)
	Silent                        // connected, but did not answer in time
	Gone                          // closed or lost
	numProgressStates
)

// NewProgress is rank's progress after entering seq collectives, the last
// one finished or not (a rank that entered none is Finished).
func NewProgress(rank int, seq uint64, finished bool) Progress {
	p := Progress{Rank: rank, State: Inside, Seq: seq}
	if finished || seq == 0 {
		p.State = Finished
	}
	return p
}

func (s ProgressState) String() string {
	switch s {
	case Inside:
		return "inside"
	case Finished:
		return "finished"
	case Silent:
		return "silent"
	case Gone:
		return "gone"
	}
	return fmt.Sprintf("ProgressState(%d)", uint8(s))
}

// SetProgress records this rank's place in its communicator's collectives,
// which it reports when a stalled rank's Query asks: seq collectives
// entered, the last one returned when finished. It is a single atomic
// store, cheap enough for every collective.
func (b *Bootstrap) SetProgress(seq uint64, finished bool) {
	v := seq << 1
	if finished {
		v |= 1
	}
	mem.StoreRelease(&b.progress, v)
}

func (b *Bootstrap) myProgress() Progress {
	v := b.progress.Load()
	return NewProgress(b.rank, v>>1, v&1 == 1)
}

// Query asks the root for every rank's progress (SetProgress), for the
// report of a collective that timed out: each rank's background reader
// answers, even while the rank itself is busy elsewhere. Ranks that do not
// answer within a second are Silent, ranks gone are Gone. It waits at most
// until ctx ends.
func (b *Bootstrap) Query(ctx context.Context) ([]Progress, error) {
	if b.nranks == 1 {
		return []Progress{b.myProgress()}, nil
	}
	b.queryMu.Lock()
	defer b.queryMu.Unlock()
	select {
	case <-b.reports: // a stale report of an earlier query that gave up
	default:
	}
	if err := b.writeRoot(frameQuery, nil); err != nil {
		return nil, fmt.Errorf("bootstrap query: %w", err)
	}
	select {
	case ps := <-b.reports:
		return ps, nil
	case <-b.watchDone:
		return nil, fmt.Errorf("bootstrap query: the root connection is closed: %w", errs.ErrPeerLost)
	case <-ctx.Done():
		return nil, fmt.Errorf("bootstrap query: %w", context.Cause(ctx))
	}
}
