package peers

import (
	"context"
	"errors"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/ringo-ccl/ringo/bootstrap"
	ringoerrs "github.com/ringo-ccl/ringo/internal/errs"
)

// joinAll joins n ranks to a fresh root and returns their bootstraps,
// closed when the test ends.
func joinAll(t *testing.T, ctx context.Context, n int) []*bootstrap.Bootstrap {
	t.Helper()
	id, err := bootstrap.NewUniqueID()
	require.NoError(t, err)
	bs := make([]*bootstrap.Bootstrap, n)
	require.NoError(t, errors.Join(concurrently(n, func(r int) (err error) {
		bs[r], err = bootstrap.Join(ctx, id, n, r)
		return err
	})...))
	t.Cleanup(func() {
		for _, b := range bs {
			b.Close()
		}
	})
	return bs
}

// shrinkAmong runs Shrink on ranks (the others idle), rank r excluding
// exclude[r], and returns their parts and errors by rank; it counts the
// roots made and stopped.
func shrinkAmong(ctx context.Context, bs []*bootstrap.Bootstrap, exclude map[int][]int) (map[int]Part, map[int]error, *int) {
	parts, errs := map[int]Part{}, map[int]error{}
	type res struct {
		r    int
		part Part
		err  error
	}
	out := make(chan res, len(exclude))
	stopped := new(int)
	for r, ex := range exclude {
		go func() {
			var survivors []int
			for q := range bs {
				if !contains(ex, q) {
					survivors = append(survivors, q)
				}
			}
			p, err := Shrink(ctx, bs[r], survivors, ex, bootstrap.NewUniqueID, func(id bootstrap.UniqueID) {
				*stopped++
				bootstrap.StopRoot(id)
			})
			out <- res{r, p, err}
		}()
	}
	for range exclude {
		x := <-out
		parts[x.r], errs[x.r] = x.part, x.err
	}
	return parts, errs, stopped
}

func contains(s []int, v int) bool {
	for _, x := range s {
		if x == v {
			return true
		}
	}
	return false
}

// TestShrinkAgreement: survivors of a rank that closed (its listener
// gone, the root told nothing) agree over their point-to-point connections
// and share the id the first survivor made, numbered in order.
func TestShrinkAgreement(t *testing.T) {
	ctx, cancel := context.WithTimeout(context.Background(), time.Minute)
	defer cancel()
	bs := joinAll(t, ctx, 4)
	bs[1].Close()
	parts, errs, stopped := shrinkAmong(ctx, bs, map[int][]int{0: {1}, 2: {1}, 3: {1}})
	for r, want := range map[int]int{0: 0, 2: 1, 3: 2} {
		require.NoError(t, errs[r], "rank %d", r)
		assert.Equal(t, want, parts[r].Rank, "rank %d", r)
		assert.Equal(t, 3, parts[r].Size)
		assert.Equal(t, parts[0].ID, parts[r].ID)
	}
	assert.Zero(t, *stopped)
	bootstrap.StopRoot(parts[0].ID)
}

// TestShrinkDisagreement: survivors that exclude different ranks (here:
// one has not learned yet that rank 2 is gone) fail alike, naming both
// lists, without waiting for their context.
func TestShrinkDisagreement(t *testing.T) {
	ctx, cancel := context.WithTimeout(context.Background(), time.Minute)
	defer cancel()
	bs := joinAll(t, ctx, 4)
	bs[2].Close()
	bs[3].Close()
	_, errs, stopped := shrinkAmong(ctx, bs, map[int][]int{0: {3}, 1: {2, 3}})
	for r := range 2 {
		require.Error(t, errs[r], "rank %d", r)
		assert.ErrorContains(t, errs[r], "the ranks disagree on whom to exclude", "rank %d", r)
	}
	assert.ErrorContains(t, errs[0], "rank 1 excludes [2 3], rank 0 excludes [3]")
	assert.ErrorContains(t, errs[1], "rank 0 excludes [3], rank 1 excludes [2 3]")
	assert.Equal(t, 0, *stopped, "rank 0 disagreed before it made an id")
	assert.NoError(t, ctx.Err())
}

// TestShrinkSurvivorLost: a rank the survivors count on has closed (its
// listener refuses): every survivor fails, naming it lost, without waiting
// for their context.
func TestShrinkSurvivorLost(t *testing.T) {
	ctx, cancel := context.WithTimeout(context.Background(), time.Minute)
	defer cancel()
	bs := joinAll(t, ctx, 3)
	bs[2].Close()
	_, errs, _ := shrinkAmong(ctx, bs, map[int][]int{0: nil, 1: nil})
	for r := range 2 {
		require.ErrorIs(t, errs[r], ringoerrs.ErrPeerLost, "rank %d", r)
		assert.ErrorContains(t, errs[r], "rank 2 lost", "rank %d", r)
	}
	assert.NoError(t, ctx.Err())
}

// TestShrinkExcludedCaller: a live rank that the other survivors exclude
// but that calls Shrink anyway (NCCL's excluded ranks must not) fails at
// once, naming a survivor that excludes it and both lists; the others
// agree without it.
func TestShrinkExcludedCaller(t *testing.T) {
	ctx, cancel := context.WithTimeout(context.Background(), time.Minute)
	defer cancel()
	bs := joinAll(t, ctx, 3)
	parts, errs, _ := shrinkAmong(ctx, bs, map[int][]int{0: {2}, 1: {2}, 2: nil})
	for r := range 2 {
		require.NoError(t, errs[r], "rank %d", r)
		assert.Equal(t, 2, parts[r].Size)
	}
	require.ErrorIs(t, errs[2], errExcluded)
	assert.Regexp(t, `rank [01] excludes this rank \(rank 2\): it excludes \[2\], this rank \[\]`, errs[2].Error())
	assert.NoError(t, ctx.Err(), "the excluded rank waited for its context")
	bootstrap.StopRoot(parts[0].ID)
}
