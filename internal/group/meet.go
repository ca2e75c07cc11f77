package group

import (
	"context"
	"fmt"
	"slices"

	"github.com/ringo-ccl/ringo/internal/tcp"
)

// Meetings of a world's ranks: the ranks of a Shrink, a Split or a Grow of
// an in-process communicator gather in one place, check that they agree on
// who takes part, and one of them makes what they all receive (a new
// world's communicators).
//
// A world has at most one open meeting of each kind. A rank joins the open
// one, or opens it; a rank whose members differ from the open meeting's
// fails it for every rank that came or was awaited — ranks that disagree
// on who takes part all get an error naming the disagreement, instead of
// waiting. The last member to arrive closes the meeting to others and runs
// its maker; everyone then takes their result. A rank whose ctx ends
// before the maker runs fails the meeting for all, naming the ranks that
// never came.

// meetings is a World's, guarded by its mu.
type meetings struct {
	open   map[string]*meeting // by kind
	missed map[missKey]error   // a failed meeting's error, for a rank awaited that has not come yet
}

type missKey struct {
	kind string
	rank int
}

// meeting is one gathering of Meet.
type meeting struct {
	kind    string
	first   int   // the rank that opened it
	members []int // who takes part, as first sees it
	values  map[int]any
	making  bool          // the last member runs the maker; the meeting can no longer fail
	done    chan struct{} // closed once results or err is set
	results map[int]any
	err     error
}

// Meet gathers the ranks of members (increasing, rank among them) for one
// call of kind ("shrink", "split", "grow"), each bringing value: it
// returns, once the last has come and run mk (once, with every member's
// value by rank), this rank's result from mk's map, or mk's error. Every
// member calls it with the same kind and members. Errors (for every
// member): members that differ between ranks, naming both lists; a
// member's ctx ending before all came, naming the ranks that did not (the
// maker, once running, is waited for: it must be bounded).
func (w *World) Meet(ctx context.Context, kind string, rank int, members []int, value any,
	mk func(values map[int]any) (map[int]any, error)) (any, error) {
	w.mu.Lock()
	ms := &w.meetings
	if err := ms.missed[missKey{kind, rank}]; err != nil {
		delete(ms.missed, missKey{kind, rank})
		w.mu.Unlock()
		return nil, err
	}
	m := ms.open[kind]
	if m != nil && !slices.Equal(m.members, members) {
		err := fmt.Errorf("the ranks disagree on who takes part in the %s: rank %d's has ranks %v, rank %d's %v",
			kind, m.first, m.members, rank, members)
		ms.failLocked(m, err, rank, members)
		w.mu.Unlock()
		return nil, err
	}
	if m == nil {
		m = &meeting{kind: kind, first: rank, members: members, values: map[int]any{}, done: make(chan struct{})}
		if ms.open == nil {
			ms.open = map[string]*meeting{}
		}
		ms.open[kind] = m
	}
	m.values[rank] = value
	if len(m.values) == len(m.members) {
		m.making = true
		delete(ms.open, kind)
		w.mu.Unlock()
		results, err := mk(m.values)
		w.mu.Lock()
		m.results, m.err = results, err
		close(m.done)
		w.mu.Unlock()
	} else {
		w.mu.Unlock()
	}
	select {
	case <-m.done:
	case <-ctx.Done():
		w.mu.Lock()
		if !m.making && m.err == nil {
			var missing []int
			for _, r := range m.members {
				if _, ok := m.values[r]; !ok {
					missing = append(missing, r)
				}
			}
			ms.failLocked(m, fmt.Errorf("rank %d gave up waiting for ranks %v to come to the %s: %w", rank, missing, kind, tcp.Ended(ctx)), rank, nil)
		}
		w.mu.Unlock()
		<-m.done
	}
	w.mu.Lock()
	defer w.mu.Unlock()
	if m.err != nil {
		return nil, m.err
	}
	return m.results[rank], nil
}

// failLocked fails the open meeting m with err, for the ranks that came
// and — their Meet returns err as soon as they come — for those awaited by
// m or named in also, except rank (who returns err itself).
func (ms *meetings) failLocked(m *meeting, err error, rank int, also []int) {
	m.err = err
	close(m.done)
	delete(ms.open, m.kind)
	for _, r := range append(slices.Clone(m.members), also...) {
		if _, came := m.values[r]; came || r == rank {
			continue
		}
		if ms.missed == nil {
			ms.missed = map[missKey]error{}
		}
		ms.missed[missKey{m.kind, r}] = err
	}
}
