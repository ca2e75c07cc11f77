// prims_simple.cuh: one channel's program with the Simple protocol, as
// NCCL's genericOp runs it. The block's first RINGO_NWORKERS threads move
// data; its last warp only publishes, so the workers never wait for a
// system-scope fence. For every slice of every step:
//
//   1. worker 0 waits for the received slice (tail), worker 32 for room in
//      the successor's FIFO (head), polling their own GPU's memory;
//   2. the workers meet (barrier 1) and move the slice;
//   3. everyone meets (barrier 0, which also tells everyone whether a wait
//      was aborted); the publishing warp then fences at system scope and
//      stores tail into the successor's memory, and head into the
//      predecessor's, while the workers go on to the next slice.
//
// Counters persist across launches in each connection entry's state,
// rounded up at the entry's first use in a launch so that a two-slot slice
// never wraps the FIFO. A step names the entries whose receive and send
// ends it uses (RingoStep); a ring plan names its channel's one entry.
// On a net connection (sendPosts set) the poster also records, before each
// tail, what the post carries, for the proxy that forwards it. The FIFOs
// hold W, the buffers T (W is T except in the precision variants, whose
// slots carry n/sizeof(T) elements of W for a slice of n buffer bytes).
#pragma once
#include "prims.cuh"
#include "wire.cuh"

struct ChannelState {
  uint64_t sendStep, recvStep, posted;
};

__device__ __forceinline__ void barWorkers() { asm volatile("bar.sync 1, %0;" ::"r"(RINGO_NWORKERS) : "memory"); }

// runSimple runs one channel's program of a collective with the Simple
// protocol (the point-to-point kernel's is runP2P's, prims_p2p.cuh).
template <typename T, typename W, typename R>
__device__ void runSimple(const R& r, const RingoConn* conns, const RingoStep* steps, uint32_t nsteps, const char* in,
                          char* out, RingoGeom g, const volatile uint32_t* abortFlag) {
  __shared__ ChannelState st;
  const int tid = threadIdx.x;
  const bool worker = tid < RINGO_NWORKERS;
  const bool poster = tid == RINGO_NTHREADS - 32;  // lane 0 of the publishing warp
  const uint64_t sps = g.slotsPerSlice;
  const uint64_t per = sps * g.slicesPerStep;
  // The ends in use: entry curR's receive end and curS's send end (-1: none
  // yet), their counters in registers while in use, in the entries' state
  // before and after.
  int curR = -1, curS = -1;
  const RingoConn* rc = conns;
  const RingoConn* sc = conns;
  uint64_t sendStep = 0, recvStep = 0;
  uint64_t posted = 0;  // the poster's: the tail of the last post (net connections)
  TraceCursor tc(conns[blockIdx.x].trace);
  for (uint32_t i = 0; i < nsteps; i++) {
    const RingoStep s = steps[i];
    tc.begin();
    if (s.prim == PrimCopy || s.prim == PrimReduceCopy) {
      if (worker) runStep<T, R>(r, s.prim, nullptr, nullptr, in + s.inOff, out + s.outOff, s.bytes);
      tc.end();
      continue;
    }
    const bool recvs = primRecvs<false>(s.prim), sends = primSends<false>(s.prim);
    const bool newR = recvs && s.recvConn != curR, newS = sends && s.sendConn != curS;
    if (newR || newS) {
      // Hand the ends left back to their entries and take the new ones'
      // counters, rounded up to a multiple of the step's slots so that a
      // multi-slot slice never wraps the FIFO; a receiving end returns the
      // skipped slots as credit. Both ends of a connection are first used
      // in the same launch, so both round alike.
      if ((newR && curR >= 0) || (newS && curS >= 0)) {  // a ring plan's one entry is never handed back
        if (poster) {
          if (newR && curR >= 0) conns[curR].state[1] = recvStep;
          if (newS && curS >= 0) conns[curS].state[0] = sendStep;
        }
        __syncthreads();
      }
      if (tid == 0) {
        if (newR) {
          st.recvStep = (conns[s.recvConn].state[1] + per - 1) / per * per;
          if (conns[s.recvConn].recvHead != nullptr) ringoStoreRelaxed(conns[s.recvConn].recvHead, st.recvStep);
        }
        if (newS) {
          st.posted = conns[s.sendConn].state[0];
          st.sendStep = (st.posted + per - 1) / per * per;
        }
      }
      __syncthreads();
      if (newR) curR = s.recvConn, rc = &conns[curR], recvStep = st.recvStep;
      if (newS) curS = s.sendConn, sc = &conns[curS], sendStep = st.sendStep, posted = st.posted;
    }
    for (int k = 0; k < g.slicesPerStep; k++) {
      bool aborted = false;
      if (worker) {
        const int64_t off = min((int64_t)k * s.sliceBytes, s.bytes);
        const int64_t n = min(off + s.sliceBytes, s.bytes) - off;
        if (recvs && tid == 0) aborted = !spinUntil(rc->recvTail, recvStep + sps, abortFlag);
        // Credit: head + NSTEPS ≥ sendStep + sps (nothing to wait for early on).
        if (sends && tid == 32 && sendStep + sps > RINGO_NSTEPS)
          aborted = !spinUntil(sc->sendHead, sendStep + sps - RINGO_NSTEPS, abortFlag);
        barWorkers();
        // After an abort the slots may hold anything; moving it is harmless,
        // the communicator is dead.
        if (n > 0) {
          const char* rs = recvs ? rc->recvBuf + (recvStep % RINGO_NSTEPS) * g.slotBytes : nullptr;
          char* ss = sends ? sc->sendBuf + (sendStep % RINGO_NSTEPS) * g.slotBytes : nullptr;
          Mover<T, W, R>::move(r, s.prim, rs, ss, in + s.inOff + off, out + s.outOff + off, n);
        }
      }
      if (__syncthreads_or(aborted)) return;
      if (poster) {
        if (sends) {
          if (sc->sendPosts != nullptr) {  // a proxy forwards the post: say what it carries
            const int64_t off = min((int64_t)k * s.sliceBytes, s.bytes);
            const int64_t n = (min(off + s.sliceBytes, s.bytes) - off) / (int64_t)sizeof(T) * (int64_t)sizeof(W);
            sc->sendPosts[posted % RINGO_NSTEPS] =
                ringoPackPost(sendStep - posted, sendStep + sps - posted, (uint64_t)n, RINGO_PROTO_SIMPLE);
            posted = sendStep + sps;
          }
          __threadfence_system();
          ringoStoreRelaxed(sc->sendTail, sendStep + sps);
        }
        if (recvs) ringoStoreRelaxed(rc->recvHead, recvStep + sps);
      }
      if (sends) sendStep += sps;
      if (recvs) recvStep += sps;
    }
    tc.end();
  }
  tc.finish();
  if (poster) {
    if (curS >= 0) conns[curS].state[0] = sendStep;
    if (curR >= 0) conns[curR].state[1] = recvStep;
  }
}
