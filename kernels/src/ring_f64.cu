// ring_f64.cu: the kernels of double (a compile unit, see ring.cuh).
#include "ring.cuh"

RINGO_KERNELS_FOR(double, double)
