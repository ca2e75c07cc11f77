// onerank.cu: the kernels of a one-rank communicator. Its collectives move
// nothing in place and copy out of place (the driver's device-to-device
// copy, which package device enqueues); only PreMulSum computes: every
// element times the scalar, ringo_<type>_scale, through the ring kernels'
// reduceCopy as a ReduceCopy moves (a chunk's pre- and post-operation with
// no partner). Each block takes an equal share of the buffer, in whole
// 16-byte packs.
#include "copy.cuh"
#include "moves.cuh"

template <typename T>
__device__ __forceinline__ void scale(const char* in, char* out, uint64_t bytes, uint64_t arg) {
  typedef Red<T, RINGO_OP_PREMULSUM> R;
  const R r(arg);
  const uint64_t share = ((bytes + gridDim.x - 1) / gridDim.x + 15) / 16 * 16;
  const uint64_t lo = min((uint64_t)blockIdx.x * share, bytes);
  const uint64_t hi = min(lo + share, bytes);
  reduceCopy<T, R, Move<PrimReduceCopy> >(r, 0, in + lo, out + lo, 0, (int64_t)(hi - lo));
}

#define RINGO_SCALE_KERNEL(tname, T)                                                                    \
  extern "C" __global__ void __launch_bounds__(RINGO_NWORKERS)                                          \
      ringo_##tname##_scale(const char* in, char* out, uint64_t bytes, uint64_t arg) {                  \
    scale<T>(in, out, bytes, arg);                                                                      \
  }

RINGO_FOR_TYPES(RINGO_SCALE_KERNEL, RINGO_SCALE_KERNEL)
// As in ring_f8.cu: the 8-bit floats from sm_90 on.
#if !defined(__CUDA_ARCH__) || __CUDA_ARCH__ >= 900
RINGO_FOR_FP8_TYPES(RINGO_SCALE_KERNEL)
#endif
