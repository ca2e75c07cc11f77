// ring_int32.cu: the kernels of the 32-bit integers (a compile unit, see ring.cuh).
#include "ring.cuh"

RINGO_KERNELS_FOR_INT(int32, int32_t)
RINGO_KERNELS_FOR_INT(uint32, uint32_t)
