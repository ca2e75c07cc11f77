//go:build !amd64 || race

package mem

import "sync/atomic"

// StoreRelease stores v into w: w.Store where no release-only store is
// wired up, and under the race detector, which sees only sync/atomic's
// operations as synchronising.
func StoreRelease(w *atomic.Uint64, v uint64) { w.Store(v) }

// StoreReleaseBool is StoreRelease for a flag.
func StoreReleaseBool(w *atomic.Bool, v bool) { w.Store(v) }
