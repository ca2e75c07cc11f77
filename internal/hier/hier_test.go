package hier

import (
	"context"
	"errors"
	"fmt"
	"sync"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/ringo-ccl/ringo/bootstrap"
	"github.com/ringo-ccl/ringo/internal/peers"
	"github.com/ringo-ccl/ringo/reduce"
	"github.com/ringo-ccl/ringo/ring"
)

// fake is a sub-communicator that only records what was asked of it.
type fake struct {
	ranks           []int // the parent ranks it joins
	closed, aborted bool
	err             error
}

func (f *fake) Close() error { f.closed = true; return nil }
func (f *fake) Abort()       { f.aborted = true }
func (f *fake) Err() error   { return f.err }

var _ Sub = (*fake)(nil)

// grid is 4 ranks in groups of 2: groups [0 1] [2 3], columns [0 2] [1 3].
func grid(t *testing.T) ring.Hierarchy {
	h, err := ring.NewHierarchy(ring.Ring{Order: []int{0, 1, 2, 3}}, 2)
	require.NoError(t, err)
	return h
}

// localFakes makes each part's fakes, failing for the part fail names.
func localFakes(made *[]*fake, fail []int) Maker[*fake] {
	return Local(func(ranks []int) ([]*fake, error) {
		if fmt.Sprint(ranks) == fmt.Sprint(fail) {
			return nil, errors.New("injected failure")
		}
		subs := make([]*fake, len(ranks))
		for i := range ranks {
			subs[i] = &fake{ranks: ranks}
			*made = append(*made, subs[i])
		}
		return subs, nil
	})
}

// TestMakeLocal: every rank of the process gets its group's and column's
// communicators and its place; a part that cannot be made fails naming it,
// with every communicator made closed.
func TestMakeLocal(t *testing.T) {
	h := grid(t)
	all := []bool{true, true, true, true}
	var made []*fake
	parts, err := Make(h, all, localFakes(&made, nil))
	require.NoError(t, err)
	for r, want := range []struct{ group, pos int }{{0, 0}, {0, 1}, {1, 0}, {1, 1}} {
		p := parts[r]
		assert.Equal(t, want.group, p.Group, "rank %d", r)
		assert.Equal(t, want.pos, p.Pos, "rank %d", r)
		assert.Equal(t, 2, p.Size)
		assert.Equal(t, h.Groups[want.group], p.Intra.ranks, "rank %d", r)
		assert.Equal(t, h.Columns[want.pos], p.Inter.ranks, "rank %d", r)
	}
	parts[1].Inter.err = errors.New("lost")
	assert.EqualError(t, parts[1].Err(), "lost")
	parts[1].Abort()
	assert.True(t, parts[1].Intra.aborted && parts[1].Inter.aborted)
	require.NoError(t, parts[1].Close())
	assert.True(t, parts[1].Intra.closed && parts[1].Inter.closed)

	for _, tc := range []struct {
		fail []int
		want string
		made int
	}{
		{[]int{2, 3}, "group 1 [2 3]: injected failure", 2},
		{[]int{1, 3}, "column 1 [1 3]: injected failure", 6},
	} {
		made = nil
		parts, err := Make(h, all, localFakes(&made, tc.fail))
		require.EqualError(t, err, tc.want)
		assert.Nil(t, parts)
		assert.Len(t, made, tc.made)
		for _, f := range made {
			assert.True(t, f.closed, "%s: a communicator of %v left open", tc.want, f.ranks)
		}
	}
}

// TestMakeSplit: ranks that make their sub-communicators each on its own
// (as in separate processes; here goroutines, over a real bootstrap) fail
// together when one cannot make its column's: every rank's error names
// that column and the rank, and every sub-communicator made — the
// groups', the other column's, the failing column's other member's — is
// closed.
func TestMakeSplit(t *testing.T) {
	const n = 4
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	defer cancel()
	id, err := bootstrap.NewUniqueID()
	require.NoError(t, err)
	h := grid(t)
	var mu sync.Mutex
	var made []*fake
	errs := make([]error, n)
	var wg sync.WaitGroup
	for r := range n {
		wg.Go(func() {
			bs, err := bootstrap.Join(ctx, id, n, r)
			if err != nil {
				errs[r] = err
				return
			}
			defer bs.Close()
			local := make([]bool, n)
			local[r] = true
			calls := 0
			_, errs[r] = Make(h, local, Split(ctx, bs, func(p peers.Part) (*fake, error) {
				calls++
				if r == 3 && calls == 2 { // rank 3's column
					return nil, errors.New("injected failure")
				}
				f := &fake{ranks: []int{p.Rank, p.Size}}
				mu.Lock()
				made = append(made, f)
				mu.Unlock()
				return f, nil
			}))
		})
	}
	wg.Wait()
	for r, err := range errs {
		require.Error(t, err, "rank %d", r)
		assert.Contains(t, err.Error(), "column 1 [1 3]: ", "rank %d", r)
		if r != 3 {
			assert.Contains(t, err.Error(), "rank 3 could not make its communicator: injected failure", "rank %d", r)
		}
	}
	assert.Len(t, made, 2*n-1)
	for _, f := range made {
		assert.True(t, f.closed, "a sub-communicator was left open")
	}
}

// TestCovers: only all-reduce sums, products, maxima and minima of at
// least a group's elements run hierarchically; a nil part runs nothing.
func TestCovers(t *testing.T) {
	h := &Part[*fake]{Size: 4}
	assert.True(t, h.Covers(ring.AllReduce, reduce.Sum, 4))
	assert.True(t, h.Covers(ring.AllReduce, reduce.Max, 1<<20))
	assert.False(t, h.Covers(ring.AllReduce, reduce.Sum, 3))
	assert.False(t, h.Covers(ring.AllReduce, reduce.Avg, 64))
	assert.False(t, h.Covers(ring.AllReduce, reduce.PreMulSum, 64))
	assert.False(t, h.Covers(ring.AllGather, reduce.Sum, 64))
	assert.False(t, (*Part[*fake])(nil).Covers(ring.AllReduce, reduce.Sum, 64))

	seg, main := h.Segments(10)
	assert.Equal(t, int64(2), seg)
	assert.Equal(t, int64(8), main)
}
