package main

import (
	"context"
	"errors"
	"fmt"
	"strings"

	"github.com/ringo-ccl/ringo"
)

// result is an ncclResult_t.
type result int32

// The ncclResult_t values of NCCL 2.27.
const (
	ncclSuccess            result = 0
	ncclUnhandledCudaError result = 1
	ncclSystemError        result = 2
	ncclInternalError      result = 3
	ncclInvalidArgument    result = 4
	ncclInvalidUsage       result = 5
	ncclRemoteError        result = 6
	ncclInProgress         result = 7
	ncclNumResults         result = 8
)

var resultNames = [ncclNumResults]string{
	"ncclSuccess", "ncclUnhandledCudaError", "ncclSystemError", "ncclInternalError",
	"ncclInvalidArgument", "ncclInvalidUsage", "ncclRemoteError", "ncclInProgress",
}

func (r result) String() string {
	if r >= 0 && r < ncclNumResults {
		return resultNames[r]
	}
	return fmt.Sprintf("ncclResult_t(%d)", int32(r))
}

// versionCode is ncclGetVersion's answer: include/nccl.h's NCCL_VERSION_CODE.
const versionCode = 22707

// versionString names this library in NCCL's version banner.
const versionString = "2.27.7+ringo"

// apiError is a failure whose ncclResult_t the C ABI decides itself, not
// ringo: a bad argument of a C call, or a feature ringo does not have.
type apiError struct {
	res result
	msg string
}

func (e *apiError) Error() string { return e.msg }

func apiErrorf(res result, format string, a ...any) error {
	return &apiError{res: res, msg: fmt.Sprintf(format, a...)}
}

// invalidArg is ncclInvalidArgument: a bad handle, pointer, count or value.
func invalidArg(format string, a ...any) error {
	return apiErrorf(ncclInvalidArgument, format, a...)
}

// invalidUsage is ncclInvalidUsage: a valid call ringo cannot serve, or one
// made at the wrong time.
func invalidUsage(format string, a ...any) error {
	return apiErrorf(ncclInvalidUsage, format, a...)
}

// cudaError is a CUDA driver call that failed in the C ABI itself.
type cudaError struct {
	op   string
	code int
	name string
	msg  string
}

func (e *cudaError) Error() string {
	return fmt.Sprintf("cuda: %s: %s (%s)", e.op, e.msg, e.name)
}

// resultOf maps err to the ncclResult_t a C caller sees (nil → ncclSuccess).
func resultOf(err error) result {
	var ae *apiError
	var ce *cudaError
	switch {
	case err == nil:
		return ncclSuccess
	case errors.As(err, &ae):
		return ae.res
	case errors.Is(err, ringo.ErrInvalidArgument):
		return ncclInvalidArgument
	case errors.Is(err, ringo.ErrNotSupported):
		return ncclInvalidUsage
	case errors.Is(err, ringo.ErrPeerLost):
		return ncclRemoteError
	case errors.Is(err, ringo.ErrTimeout), errors.Is(err, ringo.ErrAborted),
		errors.Is(err, context.DeadlineExceeded), errors.Is(err, context.Canceled):
		return ncclSystemError
	case errors.As(err, &ce), fromCUDA(err):
		return ncclUnhandledCudaError
	}
	return ncclInternalError
}

// fromCUDA reports whether err's tree holds an error of ringo's CUDA layer,
// whose messages all start with "cuda: " (internal/cuda's Error and its
// wrapped gorgonia.org/cu errors; capi may not import that package).
func fromCUDA(err error) bool {
	if err == nil {
		return false
	}
	if strings.HasPrefix(err.Error(), "cuda: ") {
		return true
	}
	switch u := err.(type) {
	case interface{ Unwrap() error }:
		return fromCUDA(u.Unwrap())
	case interface{ Unwrap() []error }:
		for _, e := range u.Unwrap() {
			if fromCUDA(e) {
				return true
			}
		}
	}
	return false
}
