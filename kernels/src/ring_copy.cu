// ring_copy.cu: the copy kernel of the collectives that only move bytes
// (a compile unit, see ring.cuh).
#include "ring.cuh"

extern "C" __global__ void __launch_bounds__(RINGO_NTHREADS) ringo_copy RINGO_PARAMS {
  ringoKernel<uint8_t, Copy<uint8_t> >(RINGO_ARGS);
}
