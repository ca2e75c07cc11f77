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

// probe is Probe in a build with the cuda tag.
func probe(a, b int) error {
	if a == b {
		return nil
	}
	probeMu.Lock()
	defer probeMu.Unlock()
	key := [2]int{a, b}
	if err, ok := probed[key]; ok {
		return err
	}
	err := canAccess(a, b)
	probed[key] = err
	return err
}

func canAccess(a, b int) error {
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

var ll128Probed sync.Map // [2]int → string

// LL128Unsafe says why LL128 may not run from GPU a to GPU b — why a warp's
// 128-byte store may not arrive whole — or returns "" where it may: NVLink
// (a link with native atomics) between distinct GPUs of one compute
// capability, 8.0 or later, as NCCL enables it by default. The answer is
// cached per ordered pair.
func LL128Unsafe(a, b *cuda.Device) string {
	key := [2]int{a.Ordinal, b.Ordinal}
	if why, ok := ll128Probed.Load(key); ok {
		return why.(string)
	}
	why := ll128Unsafe(a, b)
	ll128Probed.Store(key, why)
	return why
}

func ll128Unsafe(a, b *cuda.Device) string {
	if a.Ordinal == b.Ordinal {
		return fmt.Sprintf("neighbouring ranks share GPU %d", a.Ordinal)
	}
	ma, na, err := a.ComputeCapability()
	if err != nil {
		return err.Error()
	}
	mb, nb, err := b.ComputeCapability()
	if err != nil {
		return err.Error()
	}
	switch {
	case ma != mb || na != nb:
		return fmt.Sprintf("GPUs %d and %d differ in compute capability (%d.%d, %d.%d)", a.Ordinal, b.Ordinal, ma, na, mb, nb)
	case ma < 8:
		return fmt.Sprintf("GPU %d has compute capability %d.%d, below 8.0", a.Ordinal, ma, na)
	}
	nvlink, err := a.PeerAtomics(b)
	switch {
	case err != nil:
		return err.Error()
	case !nvlink:
		return fmt.Sprintf("GPUs %d and %d are not joined by NVLink (no native atomics between them)", a.Ordinal, b.Ordinal)
	}
	return ""
}
