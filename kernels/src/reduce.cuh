// reduce.cuh: the element operations, per datatype, matching package reduce
// bit for bit: integers wrap; half and bfloat16 use the correctly rounded
// __hadd/__hmul/__hmin/__hmax; float and double use round-to-nearest
// intrinsics, which the compiler never contracts into a fused multiply-add;
// the 8-bit floats widen to half, operate, and convert back saturating to
// the largest finite value (__NV_SATFINITE), as NCCL does.
#pragma once
#include <cuda_bf16.h>
#include <cuda_fp16.h>
#include <cuda_fp8.h>
#include <stdint.h>

// Op kinds, as package reduce lowers them for the device (Func.Device).
#define RINGO_OP_SUM 0
#define RINGO_OP_PROD 1
#define RINGO_OP_MAX 2
#define RINGO_OP_MIN 3
#define RINGO_OP_PREMULSUM 4
#define RINGO_OP_SUMPOSTDIV 5

// Integers: arithmetic in the unsigned type of the same width (wrapping).
template <typename T, typename U>
struct IntOps {
  static __device__ __forceinline__ T add(T a, T b) { return (T)((U)a + (U)b); }
  static __device__ __forceinline__ T mul(T a, T b) { return (T)((U)a * (U)b); }
  static __device__ __forceinline__ T max(T a, T b) { return a > b ? a : b; }
  static __device__ __forceinline__ T min(T a, T b) { return a < b ? a : b; }
  // div truncates toward zero (C division), widened so that n never
  // overflows T.
  static __device__ __forceinline__ T div(T a, uint64_t n) {
    if (T(-1) < T(0)) return (T)((long long)a / (long long)n);
    return (T)((unsigned long long)a / n);
  }
  static __device__ __forceinline__ T fromBits(uint64_t b) { return (T)b; }
};

template <typename T> struct Ops;
template <> struct Ops<int8_t> : IntOps<int8_t, uint8_t> {};
template <> struct Ops<uint8_t> : IntOps<uint8_t, uint8_t> {};
template <> struct Ops<int32_t> : IntOps<int32_t, uint32_t> {};
template <> struct Ops<uint32_t> : IntOps<uint32_t, uint32_t> {};
template <> struct Ops<int64_t> : IntOps<int64_t, uint64_t> {};
template <> struct Ops<uint64_t> : IntOps<uint64_t, uint64_t> {};

template <> struct Ops<float> {
  static __device__ __forceinline__ float add(float a, float b) { return __fadd_rn(a, b); }
  static __device__ __forceinline__ float mul(float a, float b) { return __fmul_rn(a, b); }
  static __device__ __forceinline__ float max(float a, float b) { return fmaxf(a, b); }
  static __device__ __forceinline__ float min(float a, float b) { return fminf(a, b); }
  static __device__ __forceinline__ float fromBits(uint64_t b) { return __uint_as_float((uint32_t)b); }
};

template <> struct Ops<double> {
  static __device__ __forceinline__ double add(double a, double b) { return __dadd_rn(a, b); }
  static __device__ __forceinline__ double mul(double a, double b) { return __dmul_rn(a, b); }
  static __device__ __forceinline__ double max(double a, double b) { return fmax(a, b); }
  static __device__ __forceinline__ double min(double a, double b) { return fmin(a, b); }
  static __device__ __forceinline__ double fromBits(uint64_t b) { return __longlong_as_double((long long)b); }
};

template <> struct Ops<__half> {
  static __device__ __forceinline__ __half add(__half a, __half b) { return __hadd(a, b); }
  static __device__ __forceinline__ __half mul(__half a, __half b) { return __hmul(a, b); }
  static __device__ __forceinline__ __half max(__half a, __half b) { return __hmax(a, b); }
  static __device__ __forceinline__ __half min(__half a, __half b) { return __hmin(a, b); }
  static __device__ __forceinline__ __half fromBits(uint64_t b) {
    __half_raw r;
    r.x = (unsigned short)b;
    return __half(r);
  }
};

template <> struct Ops<__nv_bfloat16> {
  static __device__ __forceinline__ __nv_bfloat16 add(__nv_bfloat16 a, __nv_bfloat16 b) { return __hadd(a, b); }
  static __device__ __forceinline__ __nv_bfloat16 mul(__nv_bfloat16 a, __nv_bfloat16 b) { return __hmul(a, b); }
  static __device__ __forceinline__ __nv_bfloat16 max(__nv_bfloat16 a, __nv_bfloat16 b) { return __hmax(a, b); }
  static __device__ __forceinline__ __nv_bfloat16 min(__nv_bfloat16 a, __nv_bfloat16 b) { return __hmin(a, b); }
  static __device__ __forceinline__ __nv_bfloat16 fromBits(uint64_t b) {
    __nv_bfloat16_raw r;
    r.x = (unsigned short)b;
    return __nv_bfloat16(r);
  }
};

// The 8-bit floats travel as their storage byte; the arithmetic goes
// through half.
template <__nv_fp8_interpretation_t K>
struct Fp8 {
  __nv_fp8_storage_t v;
};

template <__nv_fp8_interpretation_t K>
struct Fp8Ops {
  typedef Fp8<K> T;
  static __device__ __forceinline__ __half widen(T a) { return __half(__nv_cvt_fp8_to_halfraw(a.v, K)); }
  static __device__ __forceinline__ T narrow(__half h) {
    T r;
    r.v = __nv_cvt_halfraw_to_fp8(__half_raw(h), __NV_SATFINITE, K);
    return r;
  }
  static __device__ __forceinline__ T add(T a, T b) { return narrow(__hadd(widen(a), widen(b))); }
  static __device__ __forceinline__ T mul(T a, T b) { return narrow(__hmul(widen(a), widen(b))); }
  static __device__ __forceinline__ T max(T a, T b) { return narrow(__hmax(widen(a), widen(b))); }
  static __device__ __forceinline__ T min(T a, T b) { return narrow(__hmin(widen(a), widen(b))); }
  static __device__ __forceinline__ T fromBits(uint64_t b) {
    T r;
    r.v = (__nv_fp8_storage_t)b;
    return r;
  }
};
template <> struct Ops<Fp8<__NV_E4M3>> : Fp8Ops<__NV_E4M3> {};
template <> struct Ops<Fp8<__NV_E5M2>> : Fp8Ops<__NV_E5M2> {};

// Red<T, K> is one operator kind on T: pre(x) on this rank's input, op(a, b)
// combining, post(x) on a chunk's final value.
template <typename T, int K>
struct Red {
  T scalar;      // PreMulSum
  uint64_t div;  // SumPostDiv
  __device__ __forceinline__ Red(uint64_t arg) : scalar(Ops<T>::fromBits(arg)), div(arg) {}
  __device__ __forceinline__ T pre(T x) const {
    if (K == RINGO_OP_PREMULSUM) return Ops<T>::mul(x, scalar);
    return x;
  }
  __device__ __forceinline__ T op(T a, T b) const {
    if (K == RINGO_OP_PROD) return Ops<T>::mul(a, b);
    if (K == RINGO_OP_MAX) return Ops<T>::max(a, b);
    if (K == RINGO_OP_MIN) return Ops<T>::min(a, b);
    return Ops<T>::add(a, b);
  }
  __device__ __forceinline__ T post(T x) const;
};

template <typename T, int K, bool Int>
struct PostImpl {
  static __device__ __forceinline__ T apply(T x, uint64_t) { return x; }
};
template <typename T>
struct PostImpl<T, RINGO_OP_SUMPOSTDIV, true> {
  static __device__ __forceinline__ T apply(T x, uint64_t n) { return Ops<T>::div(x, n); }
};
template <typename T> struct IsInt { static const bool v = false; };
template <> struct IsInt<int8_t> { static const bool v = true; };
template <> struct IsInt<uint8_t> { static const bool v = true; };
template <> struct IsInt<int32_t> { static const bool v = true; };
template <> struct IsInt<uint32_t> { static const bool v = true; };
template <> struct IsInt<int64_t> { static const bool v = true; };
template <> struct IsInt<uint64_t> { static const bool v = true; };

template <typename T, int K>
__device__ __forceinline__ T Red<T, K>::post(T x) const {
  return PostImpl<T, K, IsInt<T>::v>::apply(x, div);
}

// Copy is the "operator" of the collectives that only move data.
template <typename T>
struct Copy {
  __device__ __forceinline__ Copy(uint64_t) {}
  __device__ __forceinline__ T pre(T x) const { return x; }
  __device__ __forceinline__ T op(T a, T) const { return a; }
  __device__ __forceinline__ T post(T x) const { return x; }
};

// What the compile units instantiate, one list each, for their kernel
// macros: RINGO_FOR_OPS(K, tname, T) expands K(tname, opname, T, op) for
// every operator of a type, RINGO_FOR_INT_OPS adds the integers'
// sum-then-divide; RINGO_FOR_TYPES(K, KINT) expands K(tname, T), or
// KINT(tname, T) for an integer, for every type but the 8-bit floats,
// which RINGO_FOR_FP8_TYPES(K) lists for the units to instantiate from
// sm_90 on. tname is the kernels' name for the type (package kernels'
// typeNames), opname the operator's (its opNames).
#define RINGO_FOR_OPS(K, tname, T)       \
  K(tname, sum, T, RINGO_OP_SUM)         \
  K(tname, prod, T, RINGO_OP_PROD)       \
  K(tname, max, T, RINGO_OP_MAX)         \
  K(tname, min, T, RINGO_OP_MIN)         \
  K(tname, premulsum, T, RINGO_OP_PREMULSUM)

#define RINGO_FOR_INT_OPS(K, tname, T) \
  RINGO_FOR_OPS(K, tname, T)           \
  K(tname, sumpostdiv, T, RINGO_OP_SUMPOSTDIV)

#define RINGO_FOR_TYPES(K, KINT) \
  KINT(int8, int8_t)             \
  KINT(uint8, uint8_t)           \
  KINT(int32, int32_t)           \
  KINT(uint32, uint32_t)         \
  KINT(int64, int64_t)           \
  KINT(uint64, uint64_t)         \
  K(half, __half)                \
  K(float, float)                \
  K(double, double)              \
  K(bfloat16, __nv_bfloat16)

#define RINGO_FOR_FP8_TYPES(K) \
  K(f8e4m3, Fp8<__NV_E4M3>)    \
  K(f8e5m2, Fp8<__NV_E5M2>)
