/*
 * nccl-tests-gpus.h — pre-included into every nccl-tests source by
 * scripts/nccl-tests.sh (nvcc -include), the sources themselves unmodified.
 *
 * nccl-tests gives its ranks distinct CUDA devices: rank i of a process
 * runs on device NCCL_TESTS_DEVICE (or its first) + i, so -g 2 needs two
 * GPUs, and without MPI there is no other way to run two ranks. ringo, not
 * NCCL, lets ranks share a GPU. With RINGO_NCCL_TESTS_GPUS=N (N >= 1) set
 * when a test runs, the device ordinals nccl-tests passes to the CUDA
 * runtime are taken modulo N (device i runs on GPU i mod N) and
 * cudaGetDeviceCount answers a large count, so that -g 2 or -g 4 on one GPU
 * (N = 1) puts every rank on GPU 0. Unset (or 0), every call is CUDA's own.
 */
#ifndef RINGO_NCCL_TESTS_GPUS_H
#define RINGO_NCCL_TESTS_GPUS_H

#include <cuda_runtime.h>
#include <stdlib.h>

/* ringoTestsGPUs returns RINGO_NCCL_TESTS_GPUS, read once (0: unset). */
static inline int ringoTestsGPUs(void) {
  static int n = -1;
  if (n < 0) {
    const char* s = getenv("RINGO_NCCL_TESTS_GPUS");
    int v = s ? atoi(s) : 0;
    n = v > 0 ? v : 0;
  }
  return n;
}

static inline int ringoTestsDevice(int dev) {
  int n = ringoTestsGPUs();
  return n > 0 && dev >= 0 ? dev % n : dev;
}

static inline cudaError_t ringoTestsSetDevice(int dev) { return cudaSetDevice(ringoTestsDevice(dev)); }

static inline cudaError_t ringoTestsDeviceGetAttribute(int* value, enum cudaDeviceAttr attr, int dev) {
  return cudaDeviceGetAttribute(value, attr, ringoTestsDevice(dev));
}

static inline cudaError_t ringoTestsGetDeviceProperties(struct cudaDeviceProp* prop, int dev) {
  return cudaGetDeviceProperties(prop, ringoTestsDevice(dev));
}

static inline cudaError_t ringoTestsGetDeviceCount(int* count) {
  cudaError_t err = cudaGetDeviceCount(count);
  if (err == cudaSuccess && ringoTestsGPUs() > 0) *count = 1024;
  return err;
}

#undef cudaSetDevice
#undef cudaDeviceGetAttribute
#undef cudaGetDeviceProperties
#undef cudaGetDeviceCount
#define cudaSetDevice ringoTestsSetDevice
#define cudaDeviceGetAttribute ringoTestsDeviceGetAttribute
#define cudaGetDeviceProperties ringoTestsGetDeviceProperties
#define cudaGetDeviceCount ringoTestsGetDeviceCount

#endif
