//go:build !cuda

package ringo

import (
	"context"
	"fmt"

	"github.com/ringo-ccl/ringo/internal/cuda"
)

// NewLocalGPUs makes one rank per entry of gpus in this process. This build
// has no GPU support: it returns an error wrapping ErrNotSupported.
func NewLocalGPUs(gpus []int, cfg *Config) ([]*Comm, error) { return nil, noCUDA() }

// NewGPUComm makes this process a rank of a GPU communicator. This build
// has no GPU support: it returns an error wrapping ErrNotSupported.
func NewGPUComm(ctx context.Context, id UniqueID, nranks, rank, gpu int, cfg *Config) (*Comm, error) {
	return nil, noCUDA()
}

func noCUDA() error { return fmt.Errorf("%w: %w", ErrNotSupported, cuda.ErrNoCUDA) }

func deviceAlloc(int, int64) (uintptr, error)                      { return 0, noCUDA() }
func deviceFree(int, uintptr) error                                { return noCUDA() }
func copyHtoD(int, uintptr, []byte) error                          { return noCUDA() }
func copyDtoH(int, []byte, uintptr) error                          { return noCUDA() }
func newStream(int) (uintptr, error)                               { return 0, noCUDA() }
func destroyStream(int, uintptr) error                             { return noCUDA() }
func syncStream(int, uintptr) error                                { return noCUDA() }
func streamOwned(int, uintptr) (bool, error)                       { return false, noCUDA() }
func checkDevicePtr(int, uintptr, int64) (uintptr, uintptr, error) { return 0, 0, noCUDA() }

func gpuName(int) (string, error) { return "", noCUDA() }

// Split makes communicators of subsets of c's ranks. This build has no GPU
// support: it returns an error wrapping ErrNotSupported.
func (c *Comm) Split(ctx context.Context, color, key int, cfg *Config) (*Comm, error) {
	return nil, noCUDA()
}
