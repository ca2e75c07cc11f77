package ringo_test

import (
	"context"
	"fmt"
	"sync"

	"github.com/ringo-ccl/ringo"
)

// Four ranks in one process, each driven by its own goroutine, sum their
// vectors with a ring all-reduce.
func Example() {
	comms, err := ringo.NewLocal(4, nil)
	if err != nil {
		panic(err)
	}
	results := make([][]float32, len(comms))
	var wg sync.WaitGroup
	for r, c := range comms {
		wg.Add(1)
		go func() {
			defer wg.Done()
			defer c.Close()
			send := []float32{float32(r), 10 * float32(r), 1}
			results[r] = make([]float32, len(send))
			if err := ringo.AllReduce(context.Background(), c, send, results[r], ringo.OpSum); err != nil {
				panic(err)
			}
		}()
	}
	wg.Wait()
	fmt.Println(results[0], results[3])
	// Output: [6 60 4] [6 60 4]
}
