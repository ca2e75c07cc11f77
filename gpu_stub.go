//go:build !cuda

package ringo

import (
	"context"
	"fmt"

	"github.com/ringo-ccl/ringo/internal/cuda"
)

// Without the cuda tag, GPU communicators cannot be made: their
// constructors, Split and the device memory and stream functions return
// noCUDA's error, which wraps ErrNotSupported.

func newLocalGPUs([]int, *Config) ([]*Comm, error) { return nil, noCUDA() }

func newGPUComm(context.Context, UniqueID, int, int, int, *Config) (*Comm, error) {
	return nil, noCUDA()
}

func (c *Comm) split(context.Context, int, int, *Config) (*Comm, error) { return nil, noCUDA() }

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
