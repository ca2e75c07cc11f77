// ring_f32.cu: the kernels of float (a compile unit, see ring.cuh).
#include "ring.cuh"

RINGO_KERNELS_FOR(float, float)
