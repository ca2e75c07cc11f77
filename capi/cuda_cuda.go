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

// The stream work of point-to-point (p2p_run.go), in the primary context of
// device dev, which the caller's is restored over by nccl_abi.c. Each
// retains the context for the call only: ringo's communicator holds it.
static CUresult ringoOnDevice(int dev, CUdevice* d, CUcontext* ctx) {
	CUresult r = (CUresult)ringoCudaInit();
	if (r != CUDA_SUCCESS) return r;
	if ((r = cuDeviceGet(d, dev)) != CUDA_SUCCESS) return r;
	if ((r = cuDevicePrimaryCtxRetain(ctx, *d)) != CUDA_SUCCESS) return r;
	if ((r = cuCtxSetCurrent(*ctx)) != CUDA_SUCCESS) cuDevicePrimaryCtxRelease(*d);
	return r;
}

static CUresult ringoStreamAlloc(int dev, uintptr_t stream, size_t n, unsigned long long* out) {
	CUdevice d;
	CUcontext ctx;
	CUresult r = ringoOnDevice(dev, &d, &ctx);
	if (r != CUDA_SUCCESS) return r;
	CUdeviceptr p = 0;
	r = cuMemAllocAsync(&p, n, (CUstream)stream);
	*out = (unsigned long long)p;
	cuDevicePrimaryCtxRelease(d);
	return r;
}

static CUresult ringoStreamCopy(int dev, uintptr_t stream, unsigned long long dst, unsigned long long src, size_t n) {
	CUdevice d;
	CUcontext ctx;
	CUresult r = ringoOnDevice(dev, &d, &ctx);
	if (r != CUDA_SUCCESS) return r;
	r = cuMemcpyDtoDAsync((CUdeviceptr)dst, (CUdeviceptr)src, n, (CUstream)stream);
	cuDevicePrimaryCtxRelease(d);
	return r;
}

static CUresult ringoStreamFree(int dev, uintptr_t stream, unsigned long long p) {
	CUdevice d;
	CUcontext ctx;
	CUresult r = ringoOnDevice(dev, &d, &ctx);
	if (r != CUDA_SUCCESS) return r;
	r = cuMemFreeAsync((CUdeviceptr)p, (CUstream)stream);
	cuDevicePrimaryCtxRelease(d);
	return r;
}

// waiter waits for the work enqueued on on so far (an event, destroyed at
// once: the driver keeps it until the wait is done).
static CUresult ringoStreamWait(int dev, uintptr_t waiter, uintptr_t on) {
	CUdevice d;
	CUcontext ctx;
	CUresult r = ringoOnDevice(dev, &d, &ctx);
	if (r != CUDA_SUCCESS) return r;
	CUevent ev;
	if ((r = cuEventCreate(&ev, CU_EVENT_DISABLE_TIMING)) == CUDA_SUCCESS) {
		r = cuEventRecord(ev, (CUstream)on);
		if (r == CUDA_SUCCESS) r = cuStreamWaitEvent((CUstream)waiter, ev, 0);
		cuEventDestroy(ev);
	}
	cuDevicePrimaryCtxRelease(d);
	return r;
}
*/
import "C"

import "github.com/ringo-ccl/ringo/device"

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

// cudaMemShared allocates n bytes of the current device's memory from
// CUDA's virtual memory API (device.AllocShared).
func cudaMemShared(n uint64) (uintptr, error) {
	dev, err := cudaCurrentDevice()
	if err != nil {
		return 0, err
	}
	return device.AllocShared(dev, int64(n))
}

// cudaMemFree frees device memory from cudaMemShared or cudaMemAlloc
// (cuMemFree).
func cudaMemFree(p uintptr) error {
	if err := ensureCUDA(); err != nil {
		return err
	}
	if shared, err := device.FreeShared(p); shared || err != nil {
		return err
	}
	return cudaErr("cuMemFree", C.ringoMemFree(C.ulonglong(p)))
}

// cudaStreamAlloc allocates n bytes on GPU dev, ordered on stream
// (cuMemAllocAsync).
func cudaStreamAlloc(dev int, stream uintptr, n int64) (uintptr, error) {
	var p C.ulonglong
	if err := cudaErr("cuMemAllocAsync", C.ringoStreamAlloc(C.int(dev), C.uintptr_t(stream), C.size_t(n), &p)); err != nil {
		return 0, err
	}
	return uintptr(p), nil
}

// cudaStreamCopy enqueues the copy of n bytes from src to dst on stream
// (cuMemcpyDtoDAsync).
func cudaStreamCopy(dev int, stream, dst, src uintptr, n int64) error {
	return cudaErr("cuMemcpyDtoDAsync", C.ringoStreamCopy(C.int(dev), C.uintptr_t(stream), C.ulonglong(dst), C.ulonglong(src), C.size_t(n)))
}

// cudaStreamFree frees p from cudaStreamAlloc, ordered on stream
// (cuMemFreeAsync).
func cudaStreamFree(dev int, stream, p uintptr) error {
	return cudaErr("cuMemFreeAsync", C.ringoStreamFree(C.int(dev), C.uintptr_t(stream), C.ulonglong(p)))
}

// cudaStreamWait makes stream waiter wait for the work enqueued on stream
// on so far (cuEventRecord, cuStreamWaitEvent).
func cudaStreamWait(dev int, waiter, on uintptr) error {
	return cudaErr("cuStreamWaitEvent", C.ringoStreamWait(C.int(dev), C.uintptr_t(waiter), C.uintptr_t(on)))
}
