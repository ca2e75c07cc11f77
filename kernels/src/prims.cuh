// prims.cuh: what both protocols share: waiting on a counter with abort
// checks, what each primitive reads and writes (Move, the one table of it),
// and the data movement of a primitive over contiguous memory (simpleMove
// over reduceCopy), which Simple uses for its slices and both use for a
// one-rank copy.
#pragma once
#include "common.cuh"
#include "copy.cuh"
#include "moves.cuh"

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

// simpleMove moves bytes of contiguous memory as M says, with the block's
// workers: d0 is the output when M writes one, else the send slot; the send
// slot is also d1 when M writes both.
template <typename T, typename R, typename M>
__device__ __forceinline__ void simpleMove(const R& r, const char* recv, char* send, const char* in, char* out,
                                           int64_t bytes) {
  reduceCopy<T, R, M>(r, recv, in, M::output ? out : send, send, bytes);
}

// runStep moves one step (Simple: one slice) of prim over contiguous memory.
template <typename T, typename R>
__device__ void runStep(const R& r, uint32_t prim, const char* recv, char* send, const char* in, char* out, int64_t bytes) {
  switch (prim) {
    case PrimSend:
      simpleMove<T, R, Move<PrimSend> >(r, recv, send, in, out, bytes);
      break;
    case PrimRecv:
      simpleMove<T, R, Move<PrimRecv> >(r, recv, send, in, out, bytes);
      break;
    case PrimRecvReduceSend:
      simpleMove<T, R, Move<PrimRecvReduceSend> >(r, recv, send, in, out, bytes);
      break;
    case PrimRecvReduceCopy:
      simpleMove<T, R, Move<PrimRecvReduceCopy> >(r, recv, send, in, out, bytes);
      break;
    case PrimRecvReduceCopySend:
      simpleMove<T, R, Move<PrimRecvReduceCopySend> >(r, recv, send, in, out, bytes);
      break;
    case PrimRecvCopySend:
      simpleMove<T, R, Move<PrimRecvCopySend> >(r, recv, send, in, out, bytes);
      break;
    case PrimCopySend:
      if (out == in) {
        simpleMove<T, R, Move<PrimSend> >(r, recv, send, in, out, bytes);  // in place: a Send
      } else {  // the send slot first, then the output
        reduceCopy<T, R, Move<PrimCopySend> >(r, recv, in, send, out, bytes);
      }
      break;
    case PrimCopy:
      if (out != in) simpleMove<T, R, Move<PrimCopy> >(r, recv, send, in, out, bytes);
      break;
    case PrimReduceCopy:
      simpleMove<T, R, Move<PrimReduceCopy> >(r, recv, send, in, out, bytes);
      break;
  }
}

// primRecvs and primSends: whether primitive p receives (sends). Only the
// point-to-point kernel (P2P, runP2P) runs SendRecv steps; the collectives'
// kernels leave it out of the test, so their code has no SendRecv at all.
template <bool P2P>
__device__ __forceinline__ bool primRecvs(uint32_t p) {
  return primIs<MoveMask<>::recv & (P2P ? ~0u : ~(1u << PrimSendRecv))>(p);
}

template <bool P2P>
__device__ __forceinline__ bool primSends(uint32_t p) {
  return primIs<MoveMask<>::send & (P2P ? ~0u : ~(1u << PrimSendRecv))>(p);
}
