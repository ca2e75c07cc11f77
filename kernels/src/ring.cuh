// ring.cuh: the kernels' entry points. One launch runs one collective for
// one rank: block b runs channel b's program (a list of steps from the
// planner, package ring) over that rank's connections — each step names
// the entries of the connection table whose receive and send ends it uses,
// so a step may talk to any peer the table holds — with the plan's
// protocol (LL, LL128 or Simple). There is one kernel per datatype and
// operator, named ringo_<type>_<op>, ringo_copy for the collectives that
// only move bytes, and ringo_p2p for point-to-point plans (bytes too; the
// only kernel with SendRecv steps and a protocol per half of a step,
// prims_p2p.cuh). The kernels are instantiated in the compile units
// ring_*.cu (each its own module, built in parallel; a kernel is in exactly
// one of them), with the macros below.
#pragma once
#include "prims_p2p.cuh"

template <typename T, typename R, bool P2P = false>
__device__ __forceinline__ void ringoKernel(const RingoConn* conns, const char* plan, const char* in, char* out,
                                            uint64_t arg, uint64_t geom, const volatile uint32_t* abortFlag) {
  ringoAwaitPrevious();
  const RingoPlanChannel pc = reinterpret_cast<const RingoPlanChannel*>(plan)[blockIdx.x];
  if (pc.count == 0) return;
  const RingoStep* steps = reinterpret_cast<const RingoStep*>(plan + RINGO_MAXCHANNELS * sizeof(RingoPlanChannel)) + pc.first;
  RingoGeom g;
  memcpy(&g, &geom, sizeof(g));
  const R r(arg);
  if constexpr (P2P) {  // arg: an LL slot's bytes (the kernel's operator has none)
    runP2P<T, R>(r, conns, steps, pc.count, in, out, g, (uint32_t)arg, abortFlag);
  } else if (g.proto == RINGO_PROTO_LL) {
    runFlagged<T, R, ProtoLL>(r, conns, steps, pc.count, in, out, g, abortFlag);
  } else if (g.proto == RINGO_PROTO_LL128) {
    runFlagged<T, R, ProtoLL128>(r, conns, steps, pc.count, in, out, g, abortFlag);
  } else {
    runSimple<T, T, R>(r, conns, steps, pc.count, in, out, g, abortFlag);
  }
  ringoLetNextLaunch();
}

// The precision variants' kernels: sums of T buffers whose FIFOs carry W,
// Simple only (package ring plans them with Simple and nothing else).
template <typename T, typename W>
__device__ __forceinline__ void ringoWireKernel(const RingoConn* conns, const char* plan, const char* in, char* out,
                                                uint64_t arg, uint64_t geom, const volatile uint32_t* abortFlag) {
  ringoAwaitPrevious();
  const RingoPlanChannel pc = reinterpret_cast<const RingoPlanChannel*>(plan)[blockIdx.x];
  if (pc.count == 0) return;
  const RingoStep* steps = reinterpret_cast<const RingoStep*>(plan + RINGO_MAXCHANNELS * sizeof(RingoPlanChannel)) + pc.first;
  RingoGeom g;
  memcpy(&g, &geom, sizeof(g));
  const Red<T, RINGO_OP_SUM> r(arg);
  runSimple<T, W, Red<T, RINGO_OP_SUM> >(r, conns, steps, pc.count, in, out, g, abortFlag);
  ringoLetNextLaunch();
}

#define RINGO_PARAMS                                                                                          \
  (const RingoConn* conns, const char* plan, const char* in, char* out, uint64_t arg, uint64_t geom,          \
   const volatile uint32_t* abortFlag)
#define RINGO_ARGS conns, plan, in, out, arg, geom, abortFlag

#define RINGO_KERNEL(name, T, K)                                                                       \
  extern "C" __global__ void __launch_bounds__(RINGO_NTHREADS) name RINGO_PARAMS {                    \
    ringoKernel<T, Red<T, K> >(RINGO_ARGS);                                                            \
  }

// A type's kernels, one per operator (reduce.cuh's lists), named
// ringo_<type>_<op>.
#define RINGO_OP_KERNEL(tname, opname, T, K) RINGO_KERNEL(ringo_##tname##_##opname, T, K)
#define RINGO_KERNELS_FOR(tname, T) RINGO_FOR_OPS(RINGO_OP_KERNEL, tname, T)
#define RINGO_KERNELS_FOR_INT(tname, T) RINGO_FOR_INT_OPS(RINGO_OP_KERNEL, tname, T)

#define RINGO_WIRE_KERNEL(name, T, W)                                                \
  extern "C" __global__ void __launch_bounds__(RINGO_NTHREADS) name RINGO_PARAMS { \
    ringoWireKernel<T, W>(RINGO_ARGS);                                             \
  }
