//go:build !cuda

package p2p

import "github.com/ringo-ccl/ringo/internal/cuda"

// Probe reports whether GPU a can access GPU b's memory.
func Probe(a, b int) error { return cuda.ErrNoCUDA }
