//go:build !cuda

package p2p

import "github.com/ringo-ccl/ringo/internal/cuda"

func probe(a, b int) error { return cuda.ErrNoCUDA }
