//go:build cuda

package p2p

import (
	"fmt"
	"sync"

	"github.com/ringo-ccl/ringo/internal/cuda"
)

var (
	probeMu sync.Mutex
	probed  = map[[2]int]error{}
)

// Probe reports whether GPU a can access GPU b's memory: nil when it can,
// ErrNoPeerAccess when the driver says it cannot, another error when the
// probe itself failed. The answer is cached per ordered pair; a GPU can
// always access its own memory.
func Probe(a, b int) error {
	if a == b {
		return nil
	}
	probeMu.Lock()
	defer probeMu.Unlock()
	key := [2]int{a, b}
	if err, ok := probed[key]; ok {
		return err
	}
	err := probe(a, b)
	probed[key] = err
	return err
}

func probe(a, b int) error {
	da, err := cuda.Open(a)
	if err != nil {
		return err
	}
	db, err := cuda.Open(b)
	if err != nil {
		return err
	}
	ok, err := da.CanAccessPeer(db)
	switch {
	case err != nil:
		return err
	case !ok:
		return fmt.Errorf("%w: GPU %d cannot access GPU %d", ErrNoPeerAccess, a, b)
	}
	return nil
}
