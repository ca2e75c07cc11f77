package ringo

import (
	"errors"
	"sync"
	"testing"
	"time"
)

// One thread closing a process's ranks of a communicator one after another
// must not block on the first (its release waits for the others, as a
// bootstrap barrier does); the last close runs every release, concurrently,
// and returns their errors.
func TestSiblingsReleaseTogether(t *testing.T) {
	const n = 3
	sibs := make([]*siblings, n)
	for r := range n {
		sibs[r] = joinSiblings("siblings-test", n)
	}
	if sibs[0] != sibs[n-1] {
		t.Fatal("ranks of one communicator got different siblings records")
	}
	if _, ok := siblingsOf["siblings-test"]; ok {
		t.Fatal("the record outlived the joins of all ranks")
	}
	var all sync.WaitGroup // the releases' barrier: met only when run together
	all.Add(n)
	ran := make(chan int, n)
	boom := errors.New("rank 1's release failed")
	free := func(r int) func() error {
		return func() error {
			all.Done()
			all.Wait()
			ran <- r
			if r == 1 {
				return boom
			}
			return nil
		}
	}
	for r := range n - 1 {
		done := make(chan error, 1)
		go func() { done <- sibs[r].close(free(r)) }()
		select {
		case err := <-done:
			if err != nil {
				t.Fatalf("close of rank %d: %v", r, err)
			}
		case <-time.After(5 * time.Second):
			t.Fatalf("close of rank %d blocked with ranks still open", r)
		}
		if len(ran) != 0 {
			t.Fatalf("rank %d's close released with ranks still open", r)
		}
	}
	done := make(chan error, 1)
	go func() { done <- sibs[n-1].close(free(n - 1)) }()
	select {
	case err := <-done:
		if !errors.Is(err, boom) {
			t.Fatalf("last close returned %v, want rank 1's error", err)
		}
	case <-time.After(5 * time.Second):
		t.Fatal("the last close did not release the ranks together")
	}
	if len(ran) != n {
		t.Fatalf("%d of %d releases ran", len(ran), n)
	}
}
