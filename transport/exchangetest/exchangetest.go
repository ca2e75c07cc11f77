// Package exchangetest is an in-process stand-in for the bootstrap's
// transport.Exchanger: n ranks, each a goroutine, meet in rounds. It is
// imported by tests only.
package exchangetest

import (
	"context"
	"errors"
	"sync"

	"github.com/ringo-ccl/ringo/transport"
)

// Fake is n ranks' meeting place. Its zero value is not usable: use New.
type Fake struct {
	n int
	// FailAt is the round (counted from 1 by each rank) that fails for
	// every rank reaching it; 0: none. Set it before the ranks start.
	FailAt int

	mu      sync.Mutex
	cond    *sync.Cond
	round   map[int][][]byte
	arrived map[int]int
	seen    []int
}

// New returns the meeting place of n ranks.
func New(n int) *Fake {
	f := &Fake{n: n, round: map[int][][]byte{}, arrived: map[int]int{}, seen: make([]int, n)}
	f.cond = sync.NewCond(&f.mu)
	return f
}

// Size returns the number of ranks.
func (f *Fake) Size() int { return f.n }

// Each runs do for every rank, each on a goroutine of its own (ranks meet
// in rounds, so they must run at once), and returns their errors by rank.
func (f *Fake) Each(do func(rank int) error) []error {
	errs := make([]error, f.n)
	var wg sync.WaitGroup
	for r := range f.n {
		wg.Add(1)
		go func() {
			defer wg.Done()
			errs[r] = do(r)
		}()
	}
	wg.Wait()
	return errs
}

// Rank returns rank's exchanger.
func (f *Fake) Rank(rank int) transport.Exchanger { return member{f, rank} }

type member struct {
	f    *Fake
	rank int
}

func (m member) Rank() int { return m.rank }
func (m member) Size() int { return m.f.n }

// AllGather waits for every rank's blob of this rank's next round (ctx is
// not watched: a test's ranks all come, or FailAt fails them).
func (m member) AllGather(_ context.Context, blob []byte) ([][]byte, error) {
	f := m.f
	f.mu.Lock()
	defer f.mu.Unlock()
	f.seen[m.rank]++
	k := f.seen[m.rank]
	if k == f.FailAt {
		return nil, errors.New("peer lost (test)")
	}
	if f.round[k] == nil {
		f.round[k] = make([][]byte, f.n)
	}
	f.round[k][m.rank] = append([]byte(nil), blob...)
	f.arrived[k]++
	f.cond.Broadcast()
	for f.arrived[k] < f.n {
		f.cond.Wait()
	}
	return f.round[k], nil
}

func (m member) Barrier(ctx context.Context) error {
	_, err := m.AllGather(ctx, nil)
	return err
}
