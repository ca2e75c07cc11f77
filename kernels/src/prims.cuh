// prims.cuh: what both protocols share: waiting on a counter with abort
// checks, what each primitive reads and writes, and the data movement of a
// primitive over contiguous memory (reduceCopy), which Simple uses for its
// slices and both use for a one-rank copy.
#pragma once
#include "common.cuh"
#include "copy.cuh"

// spinUntil waits until *p ≥ want, checking the abort flag every
// RINGO_SPINS_BEFORE_CHECK polls. It returns false on abort.
__device__ __forceinline__ bool spinUntil(const uint64_t* p, uint64_t want, const volatile uint32_t* abortFlag) {
  int spins = 0;
  while (ringoLoadAcquire(p) < want) {
    if (++spins == RINGO_SPINS_BEFORE_CHECK) {
      spins = 0;
      if (*abortFlag) return false;
    }
  }
  return true;
}

template <typename T, typename R>
__device__ void runStep(const R& r, uint32_t prim, const char* recv, char* send, const char* in, char* out, int64_t bytes) {
  switch (prim) {
    case PrimSend:
      reduceCopy<T, R, false, true, false, false>(r, nullptr, in, send, nullptr, bytes);
      break;
    case PrimRecv:
      reduceCopy<T, R, true, false, false, false>(r, recv, nullptr, out, nullptr, bytes);
      break;
    case PrimRecvReduceSend:
      reduceCopy<T, R, true, true, false, false>(r, recv, in, send, nullptr, bytes);
      break;
    case PrimRecvReduceCopy:
      reduceCopy<T, R, true, true, true, false>(r, recv, in, out, nullptr, bytes);
      break;
    case PrimRecvReduceCopySend:
      reduceCopy<T, R, true, true, true, true>(r, recv, in, out, send, bytes);
      break;
    case PrimRecvCopySend:
      reduceCopy<T, R, true, false, false, true>(r, recv, nullptr, out, send, bytes);
      break;
    case PrimCopySend:
      if (out == in) {
        reduceCopy<T, R, false, true, false, false>(r, nullptr, in, send, nullptr, bytes);
      } else {
        reduceCopy<T, R, false, true, false, true>(r, nullptr, in, send, out, bytes);
      }
      break;
    case PrimCopy:
      if (out != in) reduceCopy<T, R, false, true, false, false>(r, nullptr, in, out, nullptr, bytes);
      break;
    case PrimReduceCopy:
      reduceCopy<T, R, false, true, true, false>(r, nullptr, in, out, nullptr, bytes);
      break;
  }
}

__device__ __forceinline__ bool primRecvs(uint32_t p) {
  return p == PrimRecv || p == PrimRecvReduceSend || p == PrimRecvReduceCopy || p == PrimRecvReduceCopySend ||
         p == PrimRecvCopySend;
}

__device__ __forceinline__ bool primSends(uint32_t p) {
  return p == PrimSend || p == PrimRecvReduceSend || p == PrimRecvReduceCopySend || p == PrimRecvCopySend ||
         p == PrimCopySend;
}
