// prims_ll.cuh: the LL protocol's lines. Every 16-byte line of an LL slot
// carries 8 data bytes and, twice, the 32-bit flag of the step that wrote it
// ({data0, flag, data1, flag}, one 16-byte store), so a receiver knows its
// data has arrived when both flags match: no fence, no tail. The flag of
// step s is s+1 (truncated to 32 bits); a slot is never cleared, except that
// the writer of 8 steps every 2^31 rewrites its whole slot with the current
// flag, so an old line can never carry a future flag (as NCCL does). The
// step loop both flag protocols share is in prims_flagged.cuh.
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

// loadBytes and storeBytes move the n ≤ 8 bytes of a word that is a
// buffer's tail or unaligned, byte by byte: out of line, as they are rare
// and every inlined copy would grow the module.
__device__ __noinline__ uint64_t loadBytes(const char* p, int n) {
  uint64_t v = 0;
  for (int i = 0; i < n; i++) v |= (uint64_t)(uint8_t)p[i] << (8 * i);
  return v;
}

__device__ __noinline__ void storeBytes(char* p, uint64_t v, int n) {
  for (int i = 0; i < n; i++) p[i] = (char)(v >> (8 * i));
}

// loadWord reads the 8 bytes at p, or only n < 8 of them (the tail).
__device__ __forceinline__ uint64_t loadWord(const char* p, int n) {
  if (n == 8 && ((uintptr_t)p & 7) == 0) return *reinterpret_cast<const uint64_t*>(p);
  return loadBytes(p, n);
}

__device__ __forceinline__ void storeWord(char* p, uint64_t v, int n) {
  if (n == 8 && ((uintptr_t)p & 7) == 0) {
    *reinterpret_cast<uint64_t*>(p) = v;
    return;
  }
  storeBytes(p, v, n);
}

struct ProtoLL {
  static const uint32_t id = RINGO_PROTO_LL;
  static __device__ __forceinline__ const char* recvFifo(const RingoConn& c) { return c.recvLL; }
  static __device__ __forceinline__ char* sendFifo(const RingoConn& c) { return c.sendLL; }

  // move moves one step's bytes word by word as Move M says (moves.cuh):
  // receive, combine with the input, finish, write the output, send. It
  // returns false when a receive was aborted.
  template <typename T, typename R, typename M>
  static __device__ bool move(const R& r, const char* rlines, uint64_t rstep, char* slines, uint64_t sstep,
                              const char* in, char* out, int64_t bytes, const volatile uint32_t* abortFlag) {
    const uint32_t rflag = (uint32_t)(rstep + 1), sflag = (uint32_t)(sstep + 1);
    const int64_t words = (bytes + 7) / 8;
    for (int64_t w = threadIdx.x; w < words; w += blockDim.x) {
      const int n = (int)min((int64_t)8, bytes - 8 * w);
      uint64_t a = 0, i = 0;
      if (M::recv && !llRead(rlines + 16 * w, rflag, &a, abortFlag)) return false;
      if (M::input) i = loadWord(in + 8 * w, n);
      const uint64_t v = combinePack<T, R, M>(r, a, i);
      if (M::output) storeWord(out + 8 * w, v, n);
      if (M::send) llStore(slines + 16 * w, v, sflag);
    }
    return true;
  }

  // clean rewrites, every 2^31 steps, the lines of the slot the step did
  // not use, with its flag.
  static __device__ void clean(char* slines, uint64_t sstep, int64_t bytes, int64_t slotBytes) {
    if ((sstep & RINGO_LL_CLEAN_MASK) != RINGO_LL_CLEAN_MASK) return;
    for (int64_t w = (bytes + 7) / 8 + threadIdx.x; w < slotBytes / 16; w += blockDim.x)
      llStore(slines + 16 * w, 0, (uint32_t)(sstep + 1));
  }

  // postBytes is what a proxy forwarding the step counts: the bytes of
  // whole 8-byte data words (it moves 16 raw bytes per 8 of those).
  static __device__ __forceinline__ uint64_t postBytes(int64_t bytes) { return (uint64_t)((bytes + 7) / 8 * 8); }
};
