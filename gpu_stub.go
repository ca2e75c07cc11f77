//go:build !cuda

package ringo

import (
	"context"
	"fmt"

	"github.com/ringo-ccl/ringo/internal/cuda"
)

// Without the cuda tag, GPU communicators cannot be made: their
// constructors and Split return
// noCUDA's error, which wraps ErrNotSupported.

func newLocalGPUs([]int, *Config) ([]*Comm, error) { return nil, noCUDA() }

func newGPUComm(context.Context, UniqueID, int, int, int, *Config) (*Comm, error) {
	return nil, noCUDA()
}

func (c *Comm) split(context.Context, int, int, *Config) (*Comm, error) { return nil, noCUDA() }

func noCUDA() error { return fmt.Errorf("%w: %w", ErrNotSupported, cuda.ErrNoCUDA) }
