// ring_f16.cu: the kernels of the 16-bit floats (a compile unit, see ring.cuh).
#include "ring.cuh"

RINGO_KERNELS_FOR(half, __half)
RINGO_KERNELS_FOR(bfloat16, __nv_bfloat16)
