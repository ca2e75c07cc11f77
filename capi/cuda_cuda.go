//go:build cuda

package main

/*
#cgo CFLAGS: -DRINGO_CUDA
#cgo LDFLAGS: -lcuda -ldl
#include <stdint.h>
#include <cuda.h>

int ringoCudaInit(void); // cuinit_hook.c: the driver's own cuInit(0), once

static const char* ringoCuErrorName(CUresult r) {
	const char* s = NULL;
	if (cuGetErrorName(r, &s) != CUDA_SUCCESS || s == NULL) s = "CUDA_ERROR_UNKNOWN";
	return s;
}

static const char* ringoCuErrorString(CUresult r) {
	const char* s = NULL;
	if (cuGetErrorString(r, &s) != CUDA_SUCCESS || s == NULL) s = "unknown error";
	return s;
}

// The device of the calling thread's current context; 0 when none is
// current, as cudaGetDevice answers before any cudaSetDevice.
static CUresult ringoCurrentDevice(int* dev) {
	CUresult r = (CUresult)ringoCudaInit();
	if (r != CUDA_SUCCESS) return r;
	CUdevice d;
	r = cuCtxGetDevice(&d);
	if (r == CUDA_ERROR_INVALID_CONTEXT) {
		*dev = 0;
		return CUDA_SUCCESS;
	}
	if (r == CUDA_SUCCESS) *dev = (int)d;
	return r;
}

static CUresult ringoDeviceCount(int* n) {
	CUresult r = (CUresult)ringoCudaInit();
	if (r != CUDA_SUCCESS) return r;
	return cuDeviceGetCount(n);
}

// Allocates in the current context, or in device 0's primary context when
// none is current (the caller's context is restored by nccl_abi.c).
static CUresult ringoMemAlloc(unsigned long long* out, size_t n) {
	CUresult r = (CUresult)ringoCudaInit();
	if (r != CUDA_SUCCESS) return r;
	CUcontext ctx = NULL;
	if (cuCtxGetCurrent(&ctx) != CUDA_SUCCESS || ctx == NULL) {
		CUdevice d;
		if ((r = cuDeviceGet(&d, 0)) != CUDA_SUCCESS) return r;
		if ((r = cuDevicePrimaryCtxRetain(&ctx, d)) != CUDA_SUCCESS) return r;
		if ((r = cuCtxSetCurrent(ctx)) != CUDA_SUCCESS) return r;
	}
	CUdeviceptr p = 0;
	r = cuMemAlloc(&p, n);
	*out = (unsigned long long)p;
	return r;
}

// Frees p, in its own context when none is current.
static CUresult ringoMemFree(unsigned long long p) {
	CUresult r = (CUresult)ringoCudaInit();
	if (r != CUDA_SUCCESS) return r;
	CUcontext ctx = NULL;
	if (cuCtxGetCurrent(&ctx) != CUDA_SUCCESS || ctx == NULL) {
		if ((r = cuPointerGetAttribute(&ctx, CU_POINTER_ATTRIBUTE_CONTEXT, (CUdeviceptr)p)) != CUDA_SUCCESS) return r;
		if ((r = cuCtxSetCurrent(ctx)) != CUDA_SUCCESS) return r;
	}
	return cuMemFree((CUdeviceptr)p);
}
*/
import "C"

// cudaErr describes a failed driver call.
func cudaErr(op string, r C.CUresult) error {
	if r == C.CUDA_SUCCESS {
		return nil
	}
	return &cudaError{op: op, code: int(r), name: C.GoString(C.ringoCuErrorName(r)), msg: C.GoString(C.ringoCuErrorString(r))}
}

// ensureCUDA initialises the driver on first use (cuInit(0)); it reports
// the same failure every time when that fails.
func ensureCUDA() error { return cudaErr("cuInit", C.CUresult(C.ringoCudaInit())) }

// cudaCurrentDevice returns the calling thread's current CUDA device.
func cudaCurrentDevice() (int, error) {
	if err := ensureCUDA(); err != nil {
		return 0, err
	}
	var d C.int
	if err := cudaErr("cuCtxGetDevice", C.ringoCurrentDevice(&d)); err != nil {
		return 0, err
	}
	return int(d), nil
}

// cudaDeviceCount returns the number of CUDA devices.
func cudaDeviceCount() (int, error) {
	if err := ensureCUDA(); err != nil {
		return 0, err
	}
	var n C.int
	if err := cudaErr("cuDeviceGetCount", C.ringoDeviceCount(&n)); err != nil {
		return 0, err
	}
	return int(n), nil
}

// cudaMemAlloc allocates n bytes of device memory (cuMemAlloc).
func cudaMemAlloc(n uint64) (uintptr, error) {
	if err := ensureCUDA(); err != nil {
		return 0, err
	}
	var p C.ulonglong
	if err := cudaErr("cuMemAlloc", C.ringoMemAlloc(&p, C.size_t(n))); err != nil {
		return 0, err
	}
	return uintptr(p), nil
}

// cudaMemFree frees device memory from cudaMemAlloc (cuMemFree).
func cudaMemFree(p uintptr) error {
	if err := ensureCUDA(); err != nil {
		return err
	}
	return cudaErr("cuMemFree", C.ringoMemFree(C.ulonglong(p)))
}
