// Package reduce is ringo's host-side arithmetic: NCCL's twelve datatypes, its
// reduction operators, the conversions of the half-precision and 8-bit float
// formats, and the reduction loops that the host executor runs over every
// slice of a ring collective.
//
// Results are meant to match NCCL's CUDA kernels bit for bit, so that the same
// tests can compare a GPU run with a host run:
//
//   - Integers wrap on sum and product (two's complement).
//   - float32 and float64 use Go's arithmetic, with every product rounded
//     before it is added (no fused multiply-add).
//   - Float16, BFloat16, Float8E4M3 and Float8E5M2 are widened to float32,
//     operated on, and rounded back to nearest, ties to even. This is
//     correctly rounded for + and ×, as CUDA's __hadd and __hmul are. The 8-bit
//     formats saturate to their largest finite value (CUDA's __NV_SATFINITE).
//   - Min and Max on floats are IEEE minNum/maxNum (C's fminf/fmaxf): a NaN
//     operand loses to a number, and -0 < +0.
//   - Avg is a PreMulSum by 1/nranks on float types and a sum followed by a
//     truncating division by nranks on integer types, as NCCL's
//     hostToDevRedOp arranges.
//
// Elements are raw little-endian bytes viewed through internal/mem; the package
// assumes a little-endian host, as ringo does everywhere.
//
// A Func is bound once per collective (New) and then used from any number of
// goroutines; its methods neither allocate nor retain their arguments.
package reduce
