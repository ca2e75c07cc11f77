// ring_int8.cu: the kernels of the 8-bit integers (a compile unit, see ring.cuh).
#include "ring.cuh"

RINGO_KERNELS_FOR_INT(int8, int8_t)
RINGO_KERNELS_FOR_INT(uint8, uint8_t)
