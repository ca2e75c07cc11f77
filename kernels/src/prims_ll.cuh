// prims_ll.cuh: one channel's program with the LL protocol. Every 16-byte
// line of an LL slot carries 8 data bytes and, twice, the 32-bit flag of the
// step that wrote it ({data0, flag, data1, flag}, one 16-byte store), so a
// receiver knows its data has arrived when both flags match: no fence, no
// tail. One primitive call moves one slot. Credits return through head as
// in Simple; on a net connection (sendPosts set) the step is also posted
// with a tail, for the proxy that forwards it. The flag of step s is s+1; a slot is never cleared, except that
// the writer of 8 steps every 2^31 rewrites its whole slot with the current
// flag, so an old line can never carry a future flag (as NCCL does).
#pragma once
#include "prims.cuh"

#define RINGO_LL_CLEAN_MASK 0x7ffffff8u

__device__ __forceinline__ uint4 llLoad(const char* p) {
  uint4 v;
  asm volatile("ld.volatile.global.v4.u32 {%0,%1,%2,%3}, [%4];"
               : "=r"(v.x), "=r"(v.y), "=r"(v.z), "=r"(v.w)
               : "l"(p)
               : "memory");
  return v;
}

__device__ __forceinline__ void llStore(char* p, uint64_t data, uint32_t flag) {
  asm volatile("st.volatile.global.v4.u32 [%0], {%1,%2,%3,%4};" ::"l"(p), "r"((uint32_t)data), "r"(flag),
               "r"((uint32_t)(data >> 32)), "r"(flag)
               : "memory");
}

// llRead waits for line p to carry flag and returns its data; false on
// abort.
__device__ __forceinline__ bool llRead(const char* p, uint32_t flag, uint64_t* data,
                                       const volatile uint32_t* abortFlag) {
  int spins = 0;
  for (;;) {
    const uint4 v = llLoad(p);
    if (v.y == flag && v.w == flag) {
      *data = (uint64_t)v.x | (uint64_t)v.z << 32;
      return true;
    }
    if (++spins == RINGO_SPINS_BEFORE_CHECK) {
      spins = 0;
      if (*abortFlag) return false;
    }
  }
}

// loadWord reads the 8 bytes at p, or only n < 8 of them (the tail).
__device__ __forceinline__ uint64_t loadWord(const char* p, int n) {
  if (n == 8 && ((uintptr_t)p & 7) == 0) return *reinterpret_cast<const uint64_t*>(p);
  uint64_t v = 0;
  for (int i = 0; i < n; i++) v |= (uint64_t)(uint8_t)p[i] << (8 * i);
  return v;
}

__device__ __forceinline__ void storeWord(char* p, uint64_t v, int n) {
  if (n == 8 && ((uintptr_t)p & 7) == 0) {
    *reinterpret_cast<uint64_t*>(p) = v;
    return;
  }
  for (int i = 0; i < n; i++) p[i] = (char)(v >> (8 * i));
}

// llMove moves one step's bytes word by word: receive (Recv), combine with
// the input (In), finish (Post), write the output (Out), send (Send). It
// returns false when a receive was aborted.
template <typename T, typename R, bool Recv, bool In, bool Post, bool Out, bool Send>
__device__ bool llMove(const R& r, const char* rlines, uint32_t rflag, char* slines, uint32_t sflag, const char* in,
                       char* out, int64_t bytes, const volatile uint32_t* abortFlag) {
  const int64_t words = (bytes + 7) / 8;
  for (int64_t w = threadIdx.x; w < words; w += blockDim.x) {
    const int n = (int)min((int64_t)8, bytes - 8 * w);
    uint64_t a = 0, i = 0;
    if (Recv && !llRead(rlines + 16 * w, rflag, &a, abortFlag)) return false;
    if (In) i = loadWord(in + 8 * w, n);
    const uint64_t v = combinePack<T, R, Recv, In, Post>(r, a, i);
    if (Out) storeWord(out + 8 * w, v, n);
    if (Send) llStore(slines + 16 * w, v, sflag);
  }
  return true;
}

template <typename T, typename R>
__device__ bool llStep(const R& r, uint32_t prim, const char* rl, uint32_t rf, char* sl, uint32_t sf, const char* in,
                       char* out, int64_t bytes, const volatile uint32_t* abortFlag) {
  switch (prim) {
    case PrimSend:
      return llMove<T, R, false, true, false, false, true>(r, rl, rf, sl, sf, in, out, bytes, abortFlag);
    case PrimRecv:
      return llMove<T, R, true, false, false, true, false>(r, rl, rf, sl, sf, in, out, bytes, abortFlag);
    case PrimRecvReduceSend:
      return llMove<T, R, true, true, false, false, true>(r, rl, rf, sl, sf, in, out, bytes, abortFlag);
    case PrimRecvReduceCopy:
      return llMove<T, R, true, true, true, true, false>(r, rl, rf, sl, sf, in, out, bytes, abortFlag);
    case PrimRecvReduceCopySend:
      return llMove<T, R, true, true, true, true, true>(r, rl, rf, sl, sf, in, out, bytes, abortFlag);
    case PrimRecvCopySend:
      return llMove<T, R, true, false, false, true, true>(r, rl, rf, sl, sf, in, out, bytes, abortFlag);
    case PrimCopySend:
      if (out == in) return llMove<T, R, false, true, false, false, true>(r, rl, rf, sl, sf, in, out, bytes, abortFlag);
      return llMove<T, R, false, true, false, true, true>(r, rl, rf, sl, sf, in, out, bytes, abortFlag);
  }
  return true;
}

template <typename T, typename R>
__device__ void runLL(const R& r, const RingoConn& c, const RingoStep* steps, uint32_t nsteps, const char* in,
                      char* out, RingoGeom g, const volatile uint32_t* abortFlag) {
  const int tid = threadIdx.x;
  uint64_t sendStep = c.state[0], recvStep = c.state[1];
  const int64_t lines = g.slotBytes / 16;
  for (uint32_t i = 0; i < nsteps; i++) {
    const RingoStep s = steps[i];
    if (s.prim == PrimCopy || s.prim == PrimReduceCopy) {
      if (tid < RINGO_NWORKERS) runStep<T, R>(r, s.prim, nullptr, nullptr, in + s.inOff, out + s.outOff, s.bytes);
      __syncthreads();
      continue;
    }
    const bool recvs = primRecvs(s.prim), sends = primSends(s.prim);
    bool aborted = false;
    // Credit: head + NSTEPS ≥ sendStep + 1.
    if (sends && tid == 0 && sendStep + 1 > RINGO_NSTEPS)
      aborted = !spinUntil(c.sendHead, sendStep + 1 - RINGO_NSTEPS, abortFlag);
    if (__syncthreads_or(aborted)) return;
    const char* rl = c.recvLL + (recvStep % RINGO_NSTEPS) * g.slotBytes;
    char* sl = c.sendLL + (sendStep % RINGO_NSTEPS) * g.slotBytes;
    const uint32_t rf = (uint32_t)(recvStep + 1), sf = (uint32_t)(sendStep + 1);
    aborted = !llStep<T, R>(r, s.prim, rl, rf, sl, sf, in + s.inOff, out + s.outOff, s.bytes, abortFlag);
    if (sends && (sendStep & RINGO_LL_CLEAN_MASK) == RINGO_LL_CLEAN_MASK) {
      for (int64_t w = (s.bytes + 7) / 8 + tid; w < lines; w += blockDim.x) llStore(sl + 16 * w, 0, sf);
    }
    const bool posts = sends && c.sendPosts != nullptr;
    if (posts) __threadfence_system();  // every line out before the tail below
    if (__syncthreads_or(aborted)) return;
    if (recvs && tid == 0) ringoStoreRelaxed(c.recvHead, recvStep + 1);
    if (posts && tid == 0) {
      // A proxy forwards the step: its raw lines, as the bytes of whole
      // 8-byte data words (the proxy counts 8 raw bytes per 4 of those).
      c.sendPosts[sendStep % RINGO_NSTEPS] = ringoPackPost(0, 1, (uint64_t)((s.bytes + 7) / 8 * 8), RINGO_PROTO_LL);
      __threadfence_system();
      ringoStoreRelaxed(c.sendTail, sendStep + 1);
    }
    if (sends) sendStep++;
    if (recvs) recvStep++;
  }
  if (tid == 0) {
    c.state[0] = sendStep;
    c.state[1] = recvStep;
  }
}
