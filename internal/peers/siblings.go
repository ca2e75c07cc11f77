package peers

import (
	"errors"
	"sync"

	"github.com/ringo-ccl/ringo/internal/calls"
)

// Siblings are the ranks of one communicator that live in this process.
// They share their memory directly, and one thread may close them one
// after another (as nccl-tests does) while the last still needs the first
// one's memory, so none is freed before all are closed: the last to close
// frees them all, concurrently (each waits in the bootstrap for the ranks
// of other processes), and returns their errors — as NCCL's ncclCommDestroy
// defers its frees to the process's last rank of a communicator.
type Siblings struct {
	mu     sync.Mutex
	joined int                  // ranks that have joined
	left   int                  // ranks not yet closed
	frees  []func() error       // the closed ranks' releases
	calls  map[int]calls.Record // each rank's latest call, by rank, for SameStream
	match  *calls.Matcher       // the sends and receives among them
}

// Match pairs rank's sends and receives with its siblings' (calls.Matcher).
func (s *Siblings) Match(rank int, msgs []calls.Msg) error { return s.match.Match(rank, msgs) }

// Local reports whether rank q lives in this process.
func (s *Siblings) Local(q int) bool { return s.match.Local(q) }

// Enter records rank's call and refuses it when another rank of this
// process enqueued the same collective on the same stream
// (calls.SameStream).
func (s *Siblings) Enter(rank int, rec calls.Record) error {
	s.mu.Lock()
	defer s.mu.Unlock()
	for r, o := range s.calls {
		if r != rank && o.Seq == rec.Seq {
			if err := calls.SameStream(rec.Seq, r, o.Stream, rank, rec.Stream); err != nil {
				return err
			}
		}
	}
	s.calls[rank] = rec
	return nil
}

var (
	siblingsMu sync.Mutex
	siblingsOf = map[string]*Siblings{} // by communicator, until all have joined
)

// JoinSiblings returns the siblings record of communicator tag, whose
// ranks in this process local marks.
func JoinSiblings(tag string, local []bool) *Siblings {
	n := 0
	for _, l := range local {
		if l {
			n++
		}
	}
	siblingsMu.Lock()
	defer siblingsMu.Unlock()
	s := siblingsOf[tag]
	if s == nil {
		s = &Siblings{left: n, calls: map[int]calls.Record{}, match: calls.NewMatcher(local)}
		siblingsOf[tag] = s
	}
	if s.joined++; s.joined == n {
		delete(siblingsOf, tag)
	}
	return s
}

// Close records one rank's release; the last rank runs them all.
func (s *Siblings) Close(free func() error) error {
	s.mu.Lock()
	s.frees = append(s.frees, free)
	if s.left--; s.left > 0 {
		s.mu.Unlock()
		return nil
	}
	frees := s.frees
	s.frees = nil
	s.mu.Unlock()
	errc := make(chan error, len(frees))
	for _, f := range frees {
		go func() { errc <- f() }()
	}
	var errs []error
	for range frees {
		errs = append(errs, <-errc)
	}
	return errors.Join(errs...)
}
