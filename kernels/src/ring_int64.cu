// ring_int64.cu: the kernels of the 64-bit integers (a compile unit, see ring.cuh).
#include "ring.cuh"

RINGO_KERNELS_FOR_INT(int64, int64_t)
RINGO_KERNELS_FOR_INT(uint64, uint64_t)
