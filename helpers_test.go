package ringo_test

import (
	"context"
	"sync"
	"testing"

	"github.com/ringo-ccl/ringo"
	"github.com/ringo-ccl/ringo/reduce"
)

func newComms(t testing.TB, n int, cfg *ringo.Config) []*ringo.Comm {
	t.Helper()
	comms, err := ringo.NewLocal(n, cfg)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() {
		for _, c := range comms {
			if err := c.Close(); err != nil {
				t.Errorf("close rank %d: %v", c.Rank(), err)
			}
		}
	})
	return comms
}

// each runs fn for every rank (except skipped ones) on its own goroutine and
// returns the errors by rank.
func each(comms []*ringo.Comm, fn func(r int, c *ringo.Comm) error, skip ...int) []error {
	out := make([]error, len(comms))
	var wg sync.WaitGroup
	for r, c := range comms {
		skipped := false
		for _, s := range skip {
			skipped = skipped || s == r
		}
		if skipped {
			continue
		}
		wg.Add(1)
		go func() {
			defer wg.Done()
			out[r] = fn(r, c)
		}()
	}
	wg.Wait()
	return out
}

func noErrors(t testing.TB, errs []error) {
	t.Helper()
	for r, err := range errs {
		if err != nil {
			t.Fatalf("rank %d: %v", r, err)
		}
	}
}

var bg = context.Background()

// toF64 and fromF64 convert between every element type and float64 (the
// small float formats round to nearest even).
func toF64[T ringo.Elem](v T) float64 {
	switch x := any(v).(type) {
	case reduce.Float16:
		return float64(x.Float32())
	case reduce.BFloat16:
		return float64(x.Float32())
	case reduce.Float8E4M3:
		return float64(x.Float32())
	case reduce.Float8E5M2:
		return float64(x.Float32())
	case int8:
		return float64(x)
	case uint8:
		return float64(x)
	case int32:
		return float64(x)
	case uint32:
		return float64(x)
	case int64:
		return float64(x)
	case uint64:
		return float64(x)
	case float32:
		return float64(x)
	case float64:
		return x
	}
	panic("unreachable")
}

func fromF64[T ringo.Elem](f float64) T {
	var z T
	var r any
	switch any(z).(type) {
	case reduce.Float16:
		r = reduce.Float16From64(f)
	case reduce.BFloat16:
		r = reduce.BFloat16From64(f)
	case reduce.Float8E4M3:
		r = reduce.Float8E4M3From64(f)
	case reduce.Float8E5M2:
		r = reduce.Float8E5M2From64(f)
	case int8:
		r = int8(f)
	case uint8:
		r = uint8(f)
	case int32:
		r = int32(f)
	case uint32:
		r = uint32(f)
	case int64:
		r = int64(f)
	case uint64:
		r = uint64(f)
	case float32:
		r = float32(f)
	case float64:
		r = f
	}
	return r.(T)
}
