package peers

import (
	"context"
	"errors"
	"sync"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/ringo-ccl/ringo/bootstrap"
)

// TestSplit: ranks meet over a real bootstrap; each color's
// members are ordered by key then rank and share the id its first member
// made; a negative color gets nothing; and when a color's first member
// cannot make the id, every member of that color fails naming it — none
// waits for it — while the other colors carry on.
func TestSplit(t *testing.T) {
	const n = 5
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	defer cancel()
	id, err := bootstrap.NewUniqueID()
	require.NoError(t, err)
	colors := []int{0, 1, 0, -1, 1}
	keys := []int{5, 0, 1, 0, 0}
	parts := make([]Part, n)
	errs := concurrently(n, func(r int) (err error) {
		bs, err := bootstrap.Join(ctx, id, n, r)
		if err != nil {
			return err
		}
		defer bs.Close()
		newID := bootstrap.NewUniqueID
		if r == 2 { // the first of color 0 (key 1 before rank 0's key 5)
			newID = func() (bootstrap.UniqueID, error) {
				return bootstrap.UniqueID{}, errors.New("no interface to listen on")
			}
		}
		parts[r], err = Split(ctx, bs, colors[r], keys[r], newID)
		return err
	})
	for _, r := range []int{0, 2} {
		require.Error(t, errs[r], "rank %d", r)
		assert.Contains(t, errs[r].Error(), "rank 2, the first of color 0, could not make the new communicator's id: no interface to listen on")
	}
	require.NoError(t, errs[3])
	assert.Equal(t, Part{}, parts[3])
	for _, r := range []int{1, 4} { // keys tie: ordered by rank
		require.NoError(t, errs[r], "rank %d", r)
		assert.Equal(t, 2, parts[r].Size)
		assert.Equal(t, map[int]int{1: 0, 4: 1}[r], parts[r].Rank)
	}
	assert.Equal(t, parts[1].ID, parts[4].ID)
	bootstrap.StopRoot(parts[1].ID)
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
