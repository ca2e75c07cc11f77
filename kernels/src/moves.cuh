// moves.cuh: what each primitive does with its data, the one table of it
// (ring.Prim's documentation in Go says the same). Move<P> names, field by
// field, what primitive P reads and writes:
//
//   recv    reads the receive FIFO (a)
//   input   reads this rank's input, through the op's pre-operation (in)
//   post    applies the op's post-operation to the result: a chunk's final value
//   output  writes this rank's output buffer
//   send    writes the send FIFO
//
// The result is a ⊕ pre(in) when it reads both, a or pre(in) when one. Every
// mover takes a Move as a template parameter (reduceCopy, ProtoLL::move,
// ProtoLL128::move), so what it does not do is compiled out; where the
// primitive is known only at run time, MoveMask gives the table's columns.
// (wire.cuh's wireCopy still tests its runtime prim by hand: deriving its
// tests from the table moved ptxas's register allocation.)
#pragma once
#include "common.cuh"

template <uint32_t P>
struct Move;

template <>
struct Move<PrimSend> {  // pre(input) → send FIFO
  static constexpr bool recv = false, input = true, post = false, output = false, send = true;
};
template <>
struct Move<PrimRecv> {  // recv FIFO → output
  static constexpr bool recv = true, input = false, post = false, output = true, send = false;
};
template <>
struct Move<PrimRecvReduceSend> {  // recv ⊕ pre(input) → send FIFO
  static constexpr bool recv = true, input = true, post = false, output = false, send = true;
};
template <>
struct Move<PrimRecvReduceCopy> {  // post(recv ⊕ pre(input)) → output
  static constexpr bool recv = true, input = true, post = true, output = true, send = false;
};
template <>
struct Move<PrimRecvReduceCopySend> {  // post(recv ⊕ pre(input)) → output and send FIFO
  static constexpr bool recv = true, input = true, post = true, output = true, send = true;
};
template <>
struct Move<PrimRecvCopySend> {  // recv FIFO → output and send FIFO
  static constexpr bool recv = true, input = false, post = false, output = true, send = true;
};
template <>
struct Move<PrimCopySend> {  // input → output and send FIFO (in place, the output is the input: a Send)
  static constexpr bool recv = false, input = true, post = false, output = true, send = true;
};
template <>
struct Move<PrimCopy> {  // input → output (one rank, no reduction)
  static constexpr bool recv = false, input = true, post = false, output = true, send = false;
};
template <>
struct Move<PrimReduceCopy> {  // post(pre(input)) → output (one rank, reduction)
  static constexpr bool recv = false, input = true, post = true, output = true, send = false;
};
template <>
struct Move<PrimSendRecv> {  // input → send FIFO and recv FIFO → output: two moves of their own sizes, a
                             // Send's and a Recv's (sendRecvStep, flaggedMove), never one mover's
  static constexpr bool recv = true, input = true, post = false, output = true, send = true;
};

// MoveMask<>::recv has bit p set where Move<p>::recv is, for every primitive
// p; likewise send. primIs<mask>(p) reads it for a primitive p known only at
// run time (the step loops' primRecvs and primSends).
template <uint32_t P = 0>
struct MoveMask {
  static constexpr uint32_t recv = (uint32_t)Move<P>::recv << P | MoveMask<P + 1>::recv;
  static constexpr uint32_t send = (uint32_t)Move<P>::send << P | MoveMask<P + 1>::send;
};
template <>
struct MoveMask<NumPrims> {
  static constexpr uint32_t recv = 0, send = 0;
};

// primIs<Mask>(p) is p == P0 || p == P1 || ... over the primitives P of
// Mask's set bits, in order (PrimsOf collects them as a PrimList): the very
// expression the step loops had by hand, so the kernels compile to the same
// code. A bit test ((Mask >> p) & 1) reads simpler but moves ptxas's
// register allocation (a 48-byte stack in a wire kernel).
template <uint32_t... Ps>
struct PrimList {
  static __device__ __forceinline__ bool has(uint32_t p) { return (... || (p == Ps)); }
};
template <bool Add, uint32_t P, typename L>
struct AddPrim {
  typedef L type;
};
template <uint32_t P, uint32_t... Ps>
struct AddPrim<true, P, PrimList<Ps...> > {
  typedef PrimList<Ps..., P> type;
};
template <uint32_t Mask, uint32_t P = 0, typename L = PrimList<> >
struct PrimsOf {
  typedef typename PrimsOf<Mask, P + 1, typename AddPrim<(Mask >> P & 1) != 0, P, L>::type>::type type;
};
template <uint32_t Mask, typename L>
struct PrimsOf<Mask, NumPrims, L> {
  typedef L type;
};

template <uint32_t Mask>
__device__ __forceinline__ bool primIs(uint32_t p) {
  return PrimsOf<Mask>::type::has(p);
}
