// ring_copy.cu: the kernels that only move bytes, the collectives' copy
// kernel and the point-to-point kernel (a compile unit, see ring.cuh).
#include "ring.cuh"

extern "C" __global__ void __launch_bounds__(RINGO_NTHREADS) ringo_copy RINGO_PARAMS {
  ringoKernel<uint8_t, Copy<uint8_t> >(RINGO_ARGS);
}

extern "C" __global__ void __launch_bounds__(RINGO_NTHREADS) ringo_p2p RINGO_PARAMS {
  ringoKernel<uint8_t, Copy<uint8_t>, true>(RINGO_ARGS);
}
