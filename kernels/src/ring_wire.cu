// ring_wire.cu: the precision variants' kernels (a compile unit, see ring.cuh).
#include "ring.cuh"

RINGO_WIRE_KERNEL(ringo_float_sum_wbfloat16, float, __nv_bfloat16)
RINGO_WIRE_KERNEL(ringo_half_sum_wfloat, __half, float)
RINGO_WIRE_KERNEL(ringo_bfloat16_sum_wfloat, __nv_bfloat16, float)
