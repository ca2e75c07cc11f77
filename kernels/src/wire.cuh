// wire.cuh: the precision variants' data mover. Their FIFOs carry a wire
// type W other than the buffers' type T (bfloat16 for float buffers: half
// the bytes; float for half and bfloat16 buffers: partial sums without
// their rounding); every hop sums in float, and what a rank writes to its
// output is the value as it travels, so every rank ends with the same bits:
//
//   Send                 wire = W(in)
//   RecvReduceSend       wire = W(a + in)
//   RecvReduceCopySend   wire = W(a + in), out = T(wire)
//   RecvReduceCopy       out = T(W(a + in))
//   RecvCopySend         wire = a, out = T(a)
//   Recv                 out = T(a)
//   CopySend             wire = W(in), out = T(wire)
//
// (a is the received wire value, widened to float). The variants are sums
// only and Simple only (package ring refuses the rest).
#pragma once
#include "prims.cuh"

template <typename X> struct Cvt;
template <> struct Cvt<float> {
  static __device__ __forceinline__ float wide(float x) { return x; }
  static __device__ __forceinline__ float narrow(float f) { return f; }
};
template <> struct Cvt<__half> {
  static __device__ __forceinline__ float wide(__half x) { return __half2float(x); }
  static __device__ __forceinline__ __half narrow(float f) { return __float2half_rn(f); }
};
template <> struct Cvt<__nv_bfloat16> {
  static __device__ __forceinline__ float wide(__nv_bfloat16 x) { return __bfloat162float(x); }
  static __device__ __forceinline__ __nv_bfloat16 narrow(float f) { return __float2bfloat16_rn(f); }
};

// wireElem computes one element of prim: from the received wire value a and
// the input element in, the wire value to send (*s) and the output (*o).
template <typename T, typename W>
__device__ __forceinline__ void wireElem(uint32_t prim, W a, T in, W* s, T* o) {
  W w;
  switch (prim) {
    case PrimSend:
    case PrimCopySend:
      w = Cvt<W>::narrow(Cvt<T>::wide(in));
      break;
    case PrimRecv:
    case PrimRecvCopySend:
      w = a;
      break;
    default:  // the three that reduce
      w = Cvt<W>::narrow(__fadd_rn(Cvt<W>::wide(a), Cvt<T>::wide(in)));
  }
  *s = w;
  *o = Cvt<T>::narrow(Cvt<W>::wide(w));
}

// WireGroup<T, W>::G elements (16 bytes of the narrower type) make whole
// 16-byte packs of both types; Group<X, G> holds G elements of X.
template <typename T, typename W>
struct WireGroup {
  static const int G = 16 / (sizeof(T) < sizeof(W) ? sizeof(T) : sizeof(W));
};
template <typename X, int G>
struct Group {
  uint4 u[G * sizeof(X) / 16];
};

// wireCopy moves n elements of one slice for prim: recv and send are FIFO
// slots (W), in and out the user's buffers (T); each is null when prim does
// not use it. Groups of G elements go in 16-byte packs when every pointer is
// 16-byte aligned, the rest element by element.
template <typename T, typename W>
__device__ void wireCopy(uint32_t prim, const char* recv, char* send, const char* in, char* out, int64_t n) {
  const int G = WireGroup<T, W>::G;
  const int tid = threadIdx.x;
  const int nt = RINGO_NWORKERS;
  const bool hasA = recv != nullptr, hasIn = prim == PrimSend || prim == PrimCopySend || prim == PrimRecvReduceSend ||
                                              prim == PrimRecvReduceCopy || prim == PrimRecvReduceCopySend;
  const bool hasS = send != nullptr;
  const bool hasO = prim == PrimRecv || prim == PrimRecvReduceCopy || prim == PrimRecvReduceCopySend ||
                    prim == PrimRecvCopySend || (prim == PrimCopySend && out != in);
  int64_t done = 0;
  if ((!hasA || aligned16(recv)) && (!hasIn || aligned16(in)) && (!hasS || aligned16(send)) && (!hasO || aligned16(out))) {
    typedef Group<W, G> GW;
    typedef Group<T, G> GT;
    const int64_t ng = n / G;
    for (int64_t g = tid; g < ng; g += nt) {
      GW a = {}, s;
      GT i = {}, o;
      if (hasA) {
#pragma unroll
        for (int k = 0; k < (int)(sizeof(GW) / 16); k++) a.u[k] = __ldcg(reinterpret_cast<const uint4*>(recv) + g * (sizeof(GW) / 16) + k);
      }
      if (hasIn) {
#pragma unroll
        for (int k = 0; k < (int)(sizeof(GT) / 16); k++) i.u[k] = reinterpret_cast<const uint4*>(in)[g * (sizeof(GT) / 16) + k];
      }
      const W* ea = reinterpret_cast<const W*>(a.u);
      const T* ei = reinterpret_cast<const T*>(i.u);
      W* es = reinterpret_cast<W*>(s.u);
      T* eo = reinterpret_cast<T*>(o.u);
#pragma unroll
      for (int e = 0; e < G; e++) wireElem<T, W>(prim, ea[e], ei[e], es + e, eo + e);
      if (hasS) {
#pragma unroll
        for (int k = 0; k < (int)(sizeof(GW) / 16); k++) reinterpret_cast<uint4*>(send)[g * (sizeof(GW) / 16) + k] = s.u[k];
      }
      if (hasO) {
#pragma unroll
        for (int k = 0; k < (int)(sizeof(GT) / 16); k++) reinterpret_cast<uint4*>(out)[g * (sizeof(GT) / 16) + k] = o.u[k];
      }
    }
    done = ng * G;
  }
  for (int64_t e = done + tid; e < n; e += nt) {
    W a = W(), s;
    T i = T(), o;
    if (hasA) a = ldcg(reinterpret_cast<const W*>(recv) + e);
    if (hasIn) i = reinterpret_cast<const T*>(in)[e];
    wireElem<T, W>(prim, a, i, &s, &o);
    if (hasS) reinterpret_cast<W*>(send)[e] = s;
    if (hasO) reinterpret_cast<T*>(out)[e] = o;
  }
}

// Mover moves one slice of a primitive whose buffers hold T and whose FIFOs
// hold W: the plain reduce-copies when they are the same type.
template <typename T, typename W, typename R>
struct Mover {
  static __device__ __forceinline__ void move(const R&, uint32_t prim, const char* recv, char* send, const char* in,
                                              char* out, int64_t bytes) {
    wireCopy<T, W>(prim, recv, send, in, out, bytes / (int64_t)sizeof(T));
  }
};
template <typename T, typename R>
struct Mover<T, T, R> {
  static __device__ __forceinline__ void move(const R& r, uint32_t prim, const char* recv, char* send, const char* in,
                                              char* out, int64_t bytes) {
    runStep<T, R>(r, prim, recv, send, in, out, bytes);
  }
};
