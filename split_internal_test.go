package ringo

import (
	"context"
	"errors"
	"sync"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/ringo-ccl/ringo/bootstrap"
	"github.com/ringo-ccl/ringo/ring"
)

// TestSplitRendezvous: ranks meet over a real bootstrap; each color's
// members are ordered by key then rank and share the id its first member
// made; a negative color gets nothing; and when a color's first member
// cannot make the id, every member of that color fails naming it — none
// waits for it — while the other colors carry on.
func TestSplitRendezvous(t *testing.T) {
	const n = 5
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	defer cancel()
	id, err := bootstrap.NewUniqueID()
	require.NoError(t, err)
	colors := []int{0, 1, 0, -1, 1}
	keys := []int{5, 0, 1, 0, 0}
	parts := make([]splitPart, n)
	errs := concurrently(n, func(r int) (err error) {
		bs, err := bootstrap.Join(ctx, id, n, r)
		if err != nil {
			return err
		}
		defer bs.Close()
		newID := bootstrap.NewUniqueID
		if r == 2 { // the first of color 0 (key 1 before rank 0's key 5)
			newID = func() (UniqueID, error) { return UniqueID{}, errors.New("no interface to listen on") }
		}
		parts[r], err = splitRendezvous(ctx, bs, colors[r], keys[r], newID)
		return err
	})
	for _, r := range []int{0, 2} {
		require.Error(t, errs[r], "rank %d", r)
		assert.Contains(t, errs[r].Error(), "rank 2, the first of color 0, could not make the new communicator's id: no interface to listen on")
	}
	require.NoError(t, errs[3])
	assert.Equal(t, splitPart{}, parts[3])
	for _, r := range []int{1, 4} { // keys tie: ordered by rank
		require.NoError(t, errs[r], "rank %d", r)
		assert.Equal(t, 2, parts[r].size)
		assert.Equal(t, map[int]int{1: 0, 4: 1}[r], parts[r].rank)
	}
	assert.Equal(t, parts[1].id, parts[4].id)
	bootstrap.StopRoot(parts[1].id)
}

// TestProcHierFailure: ranks that make their sub-communicators each on its
// own (as in separate processes; here goroutines) fail together when one
// cannot make its column's: every rank's error names that column and the
// rank, and every sub-communicator made — the groups', the other
// column's, the failing column's other member's — is closed.
func TestProcHierFailure(t *testing.T) {
	const n = 4
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	defer cancel()
	id, err := NewUniqueID()
	require.NoError(t, err)
	var mu sync.Mutex
	var made []*Comm
	errs := concurrently(n, func(r int) error {
		c, err := NewComm(ctx, id, n, r, nil)
		if err != nil {
			return err
		}
		defer c.Close()
		c.cfg.Variant, c.cfg.Group = ring.Hierarchical, 2 // groups [0 1] [2 3], columns [0 2] [1 3]
		calls := 0
		return c.procHier(ctx, nil, func(p splitPart, cfg *Config) (*Comm, error) {
			calls++
			sub, err := NewComm(ctx, p.id, p.size, p.rank, cfg)
			if err != nil {
				return nil, err
			}
			if r == 3 && calls == 2 { // rank 3's column, made by both its members, then lost
				sub.Close()
				return nil, errors.New("injected failure")
			}
			mu.Lock()
			made = append(made, sub)
			mu.Unlock()
			return sub, nil
		})
	})
	for r, err := range errs {
		require.Error(t, err, "rank %d", r)
		assert.Contains(t, err.Error(), "column 1 [1 3]: ", "rank %d", r)
		if r != 3 {
			assert.Contains(t, err.Error(), "rank 3 could not make its communicator: injected failure", "rank %d", r)
		}
	}
	assert.Len(t, made, 2*n-1)
	for _, c := range made {
		assert.True(t, c.closed.Load(), "a sub-communicator of rank %d's part was left open", c.rank)
	}
}

// concurrently runs fn for ranks 0…n−1, each on a goroutine of its own (as
// ranks in processes of their own would run), and returns their errors.
func concurrently(n int, fn func(r int) error) []error {
	errs := make([]error, n)
	var wg sync.WaitGroup
	for r := range n {
		wg.Add(1)
		go func() {
			defer wg.Done()
			errs[r] = fn(r)
		}()
	}
	wg.Wait()
	return errs
}
