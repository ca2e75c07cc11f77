package ringo

import (
	"context"
	"errors"
	"sync"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/ringo-ccl/ringo/internal/peers"
	"github.com/ringo-ccl/ringo/ring"
)

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
		return c.procHier(ctx, nil, func(p peers.Part, cfg *Config) (*Comm, error) {
			calls++
			sub, err := NewComm(ctx, p.ID, p.Size, p.Rank, cfg)
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
