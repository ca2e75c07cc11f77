// copy.cuh: reduceCopy, the one data mover every primitive uses. It reads a
// received slice (a) and/or this rank's input (in), combines them with the
// operator, and writes one or two destinations, in 16-byte packs with four
// (two sources) or eight (one) packs in flight per thread when every
// pointer is 16-byte aligned, element by element otherwise. What it reads
// and writes is a primitive's Move (moves.cuh).
#pragma once
#include "common.cuh"
#include "reduce.cuh"

#define RINGO_UNROLL 4

template <typename T>
struct Pack {
  static const int N = 16 / sizeof(T);
};

// combine computes one element of Move M: a ⊕ pre(in), a, or pre(in), then
// post (a chunk's final value) when M::post.
template <typename T, typename R, typename M>
__device__ __forceinline__ T combine(const R& r, T a, T in) {
  T v;
  if (M::recv && M::input) {
    v = r.op(a, r.pre(in));
  } else if (M::recv) {
    v = a;
  } else {
    v = r.pre(in);
  }
  return M::post ? r.post(v) : v;
}

// combinePack combines every element of a pack P (16 bytes for the Simple
// copies, 8 for an LL line's data).
template <typename T, typename R, typename M, typename P>
__device__ __forceinline__ P combinePack(const R& r, P a, P in) {
  P out;
  const T* ea = reinterpret_cast<const T*>(&a);
  const T* ei = reinterpret_cast<const T*>(&in);
  T* eo = reinterpret_cast<T*>(&out);
#pragma unroll
  for (int e = 0; e < (int)(sizeof(P) / sizeof(T)); e++) eo[e] = combine<T, R, M>(r, ea[e], ei[e]);
  return out;
}

// ldcg loads one element through L2 (ld.global.cg), whatever its type.
template <typename T>
__device__ __forceinline__ T ldcg(const T* p) {
  T v;
  if (sizeof(T) == 1) {
    unsigned char x = __ldcg(reinterpret_cast<const unsigned char*>(p));
    memcpy(&v, &x, 1);
  } else if (sizeof(T) == 2) {
    unsigned short x = __ldcg(reinterpret_cast<const unsigned short*>(p));
    memcpy(&v, &x, 2);
  } else if (sizeof(T) == 4) {
    unsigned int x = __ldcg(reinterpret_cast<const unsigned int*>(p));
    memcpy(&v, &x, 4);
  } else {
    unsigned long long x = __ldcg(reinterpret_cast<const unsigned long long*>(p));
    memcpy(&v, &x, 8);
  }
  return v;
}

__device__ __forceinline__ bool aligned16(const void* p) { return ((uintptr_t)p & 15) == 0; }

// packRound moves the packs p, p+nt, … p+(U−1)·nt of Move M, all loads
// before any store; Guard: only those below npacks (a move's last round).
template <typename T, typename R, typename M, int U, bool Guard>
__device__ __forceinline__ void packRound(const R& r, const uint4* a4, const uint4* i4, uint4* o4, uint4* p4, int64_t p,
                                          int nt, int64_t npacks) {
  uint4 va[U] = {}, vi[U] = {};
#pragma unroll
  for (int u = 0; u < U; u++) {
    if (Guard && p + u * nt >= npacks) continue;
    if (M::recv) va[u] = __ldcg(a4 + p + u * nt);
    if (M::input) vi[u] = i4[p + u * nt];
  }
#pragma unroll
  for (int u = 0; u < U; u++) va[u] = combinePack<T, R, M>(r, va[u], vi[u]);
#pragma unroll
  for (int u = 0; u < U; u++) {
    if (Guard && p + u * nt >= npacks) continue;
    o4[p + u * nt] = va[u];
    if (M::output && M::send) p4[p + u * nt] = va[u];
  }
}

// reduceCopy moves bytes bytes (a whole number of T) as Move M says, using
// the block's RINGO_NWORKERS worker threads. a is FIFO data (read through
// L2, never a stale L1 line), read when M::recv; in the user's input, read
// when M::input; d0 is written, and d1 too when M writes both the output and
// the send FIFO (the caller says which is which). A block's copy is bound
// by the loads it has in flight (one block an SM): a move from one source
// keeps 2·RINGO_UNROLL packs a thread in flight, in the registers two
// sources' RINGO_UNROLL take, and its last, partial round all of its packs
// at once.
template <typename T, typename R, typename M>
__device__ void reduceCopy(const R& r, const char* a, const char* in, char* d0, char* d1, int64_t bytes) {
  const bool hasA = M::recv, hasIn = M::input;  // compile-time, as dst1
  const bool dst1 = M::output && M::send;
  constexpr int U = (M::recv && M::input) ? RINGO_UNROLL : 2 * RINGO_UNROLL;
  const int tid = threadIdx.x;
  const int nt = RINGO_NWORKERS;
  int64_t done = 0;
  if ((!hasA || aligned16(a)) && (!hasIn || aligned16(in)) && aligned16(d0) && (!dst1 || aligned16(d1))) {
    const int64_t npacks = bytes / 16;
    const uint4* a4 = reinterpret_cast<const uint4*>(a);
    const uint4* i4 = reinterpret_cast<const uint4*>(in);
    uint4* o4 = reinterpret_cast<uint4*>(d0);
    uint4* p4 = reinterpret_cast<uint4*>(d1);
    int64_t p = tid;
    for (; p + (U - 1) * (int64_t)nt < npacks; p += U * (int64_t)nt)
      packRound<T, R, M, U, false>(r, a4, i4, o4, p4, p, nt, npacks);
    if (p < npacks) packRound<T, R, M, U, true>(r, a4, i4, o4, p4, p, nt, npacks);
    done = npacks * 16;
  }
  // The tail, or everything when a pointer is misaligned: element by element.
  const T* ae = reinterpret_cast<const T*>(a + done);
  const T* ie = reinterpret_cast<const T*>(in + done);
  T* oe = reinterpret_cast<T*>(d0 + done);
  T* pe = reinterpret_cast<T*>(d1 + done);
  const int64_t n = (bytes - done) / (int64_t)sizeof(T);
  for (int64_t i = tid; i < n; i += nt) {
    T va = T(), vi = T();
    if (hasA) va = ldcg(ae + i);
    if (hasIn) vi = ie[i];
    va = combine<T, R, M>(r, va, vi);
    oe[i] = va;
    if (dst1) pe[i] = va;
  }
}
