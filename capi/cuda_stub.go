//go:build !cuda

package main

import (
	"fmt"

	"github.com/ringo-ccl/ringo"
)

// errNoCUDA answers every CUDA request of a build without the cuda tag.
var errNoCUDA = fmt.Errorf("%w: this libnccl was built without CUDA (build tag cuda)", ringo.ErrNotSupported)

func ensureCUDA() error                     { return errNoCUDA }
func cudaCurrentDevice() (int, error)       { return 0, errNoCUDA }
func cudaDeviceCount() (int, error)         { return 0, errNoCUDA }
func cudaMemAlloc(uint64) (uintptr, error)  { return 0, errNoCUDA }
func cudaMemShared(uint64) (uintptr, error) { return 0, errNoCUDA }
func cudaMemFree(uintptr) error             { return errNoCUDA }

func cudaStreamAlloc(int, uintptr, int64) (uintptr, error)       { return 0, errNoCUDA }
func cudaStreamCopy(int, uintptr, uintptr, uintptr, int64) error { return errNoCUDA }
func cudaStreamFree(int, uintptr, uintptr) error                 { return errNoCUDA }
func cudaStreamWait(int, uintptr, uintptr) error                 { return errNoCUDA }
