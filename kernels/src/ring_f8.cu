// ring_f8.cu: the kernels of the 8-bit floats (a compile unit, see ring.cuh).
#include "ring.cuh"

// The 8-bit floats reduce in hardware from sm_90 on (NCCL needs sm_90 for
// them too); emulating the conversions on sm_80 would only make the module
// huge and slow to build: this unit's sm_80 code is empty.
#if !defined(__CUDA_ARCH__) || __CUDA_ARCH__ >= 900
RINGO_KERNELS_FOR(f8e4m3, Fp8<__NV_E4M3>)
RINGO_KERNELS_FOR(f8e5m2, Fp8<__NV_E5M2>)
#endif
