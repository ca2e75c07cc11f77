// prims_ll128.cuh: the LL128 protocol's lines. A 128-byte line carries 120
// data bytes and, in its last 8, the 64-bit flag of the step that wrote it
// (step+1; 64 bits never wrap, so no slot is ever cleaned). Eight lanes of
// a warp write a line with one 16-byte store each, in one instruction; lane
// 7's store holds 8 data bytes and the flag. The receiver's eight lanes load
// the line the same way and trust all of it once lane 7 sees the flag —
// which holds only where a warp's 128-byte store arrives whole: NVLink
// between GPUs of one generation, as NCCL assumes. The host enables LL128
// only there (or where NCCL_PROTO forces it). A warp moves 4 lines per
// load and RINGO_LL128_UNROLL loads in flight.
#pragma once
#include "prims_ll.cuh"

#define RINGO_LL128_UNROLL 4

__device__ __forceinline__ void ll128Load(const char* p, uint64_t& a, uint64_t& b) {
  asm volatile("ld.volatile.global.v2.u64 {%0,%1}, [%2];" : "=l"(a), "=l"(b) : "l"(p) : "memory");
}

__device__ __forceinline__ void ll128Store(char* p, uint64_t a, uint64_t b) {
  asm volatile("st.volatile.global.v2.u64 [%0], {%1,%2};" ::"l"(p), "l"(a), "l"(b) : "memory");
}

struct ProtoLL128 {
  static const uint32_t id = RINGO_PROTO_LL128;
  static __device__ __forceinline__ const char* recvFifo(const RingoConn& c) { return c.recvLL128; }
  static __device__ __forceinline__ char* sendFifo(const RingoConn& c) { return c.sendLL128; }

  // move: as ProtoLL's, a warp at a time. Lane l of a warp holds part
  // j = l%8 of line 4u + l/8 of the warp's group: data bytes 120·line + 16j,
  // two words (one for j = 7, whose second word is the flag).
  template <typename T, typename R, typename M>
  static __device__ bool move(const R& r, const char* rlines, uint64_t rstep, char* slines, uint64_t sstep,
                              const char* in, char* out, int64_t bytes, const volatile uint32_t* abortFlag) {
    const int U = RINGO_LL128_UNROLL;
    const int lane = threadIdx.x & 31, j = lane & 7;
    const bool flagLane = j == 7;
    const int64_t lines = (bytes + 119) / 120;
    const int64_t group = 4 * U, stride = (int64_t)(blockDim.x >> 5) * group;
    const uint64_t rflag = rstep + 1, sflag = sstep + 1;
    for (int64_t first = (int64_t)(threadIdx.x >> 5) * group; first < lines; first += stride) {
      uint64_t v0[U], v1[U];
#pragma unroll
      for (int u = 0; u < U; u++) v0[u] = v1[u] = 0;
      if (M::recv) {
        int spins = 0;
        for (;;) {
          // The eight lanes of a line must load it in one instruction.
          __syncwarp();
          bool stale = false;
#pragma unroll
          for (int u = 0; u < U; u++) {
            const int64_t line = first + 4 * u + (lane >> 3);
            if (line < lines) {
              ll128Load(rlines + 128 * line + 16 * j, v0[u], v1[u]);
              stale |= flagLane && v1[u] != rflag;
            }
          }
          if (!__any_sync(0xffffffffu, stale)) break;
          if (++spins == RINGO_SPINS_BEFORE_CHECK) {
            spins = 0;
            if (__any_sync(0xffffffffu, *abortFlag != 0)) return false;
          }
        }
      }
#pragma unroll
      for (int u = 0; u < U; u++) {
        const int64_t line = first + 4 * u + (lane >> 3);
        const int64_t d = 120 * line + 16 * j;
        const int n0 = (int)max((int64_t)0, min((int64_t)8, bytes - d));
        const int n1 = flagLane ? 0 : (int)max((int64_t)0, min((int64_t)8, bytes - d - 8));
        uint64_t i0 = 0, i1 = 0;
        if (M::input && n0 > 0) i0 = loadWord(in + d, n0);
        if (M::input && n1 > 0) i1 = loadWord(in + d + 8, n1);
        v0[u] = combinePack<T, R, M>(r, v0[u], i0);
        v1[u] = combinePack<T, R, M>(r, v1[u], i1);
        if (M::output && n0 > 0) storeWord(out + d, v0[u], n0);
        if (M::output && n1 > 0) storeWord(out + d + 8, v1[u], n1);
      }
      if (M::send) {
        // The eight lanes of a line must store it in one instruction.
        __syncwarp();
#pragma unroll
        for (int u = 0; u < U; u++) {
          const int64_t line = first + 4 * u + (lane >> 3);
          if (line < lines) ll128Store(slines + 128 * line + 16 * j, v0[u], flagLane ? sflag : v1[u]);
        }
      }
    }
    return true;
  }

  // clean: 64-bit flags never wrap.
  static __device__ __forceinline__ void clean(char*, uint64_t, int64_t, int64_t) {}

  // postBytes: never called, as LL128 never runs over a proxy (its FIFOs
  // are in GPU memory only).
  static __device__ __forceinline__ uint64_t postBytes(int64_t bytes) { return (uint64_t)bytes; }
};
