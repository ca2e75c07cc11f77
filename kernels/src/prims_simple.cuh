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
// Counters persist across launches in the rank's channel state, rounded up
// at the start of each launch so that a two-slot slice never wraps the FIFO.
// On a net connection (sendPosts set) the poster also records, before each
// tail, what the post carries, for the proxy that forwards it. The FIFOs
// hold W, the buffers T (W is T except in the precision variants, whose
// slots carry n/sizeof(T) elements of W for a slice of n buffer bytes).
#pragma once
#include "prims.cuh"
#include "wire.cuh"

struct ChannelState {
  uint64_t sendStep, recvStep;
};

__device__ __forceinline__ void barWorkers() { asm volatile("bar.sync 1, %0;" ::"r"(RINGO_NWORKERS) : "memory"); }

template <typename T, typename W, typename R>
__device__ void runSimple(const R& r, const RingoConn& c, const RingoStep* steps, uint32_t nsteps, const char* in,
                          char* out, RingoGeom g, const volatile uint32_t* abortFlag) {
  __shared__ ChannelState st;
  const int tid = threadIdx.x;
  const bool worker = tid < RINGO_NWORKERS;
  const bool poster = tid == RINGO_NTHREADS - 32;  // lane 0 of the publishing warp
  const uint64_t sps = g.slotsPerSlice;
  if (tid == 0) {
    const uint64_t per = sps * g.slicesPerStep;
    st.sendStep = (c.state[0] + per - 1) / per * per;
    st.recvStep = (c.state[1] + per - 1) / per * per;
    if (c.recvHead != nullptr) ringoStoreRelaxed(c.recvHead, st.recvStep);  // return skipped slots as credit
  }
  __syncthreads();
  uint64_t sendStep = st.sendStep, recvStep = st.recvStep;
  uint64_t posted = c.state[0];  // the poster's: the tail of the last post (net connections)
  TraceCursor tc(c.trace);
  for (uint32_t i = 0; i < nsteps; i++) {
    const RingoStep s = steps[i];
    tc.begin();
    if (s.prim == PrimCopy || s.prim == PrimReduceCopy) {
      if (worker) runStep<T, R>(r, s.prim, nullptr, nullptr, in + s.inOff, out + s.outOff, s.bytes);
      tc.end();
      continue;
    }
    const bool recvs = primRecvs(s.prim), sends = primSends(s.prim);
    for (int k = 0; k < g.slicesPerStep; k++) {
      bool aborted = false;
      if (worker) {
        const int64_t off = min((int64_t)k * s.sliceBytes, s.bytes);
        const int64_t n = min(off + s.sliceBytes, s.bytes) - off;
        if (recvs && tid == 0) aborted = !spinUntil(c.recvTail, recvStep + sps, abortFlag);
        // Credit: head + NSTEPS ≥ sendStep + sps (nothing to wait for early on).
        if (sends && tid == 32 && sendStep + sps > RINGO_NSTEPS)
          aborted = !spinUntil(c.sendHead, sendStep + sps - RINGO_NSTEPS, abortFlag);
        barWorkers();
        // After an abort the slots may hold anything; moving it is harmless,
        // the communicator is dead.
        if (n > 0) {
          const char* rs = recvs ? c.recvBuf + (recvStep % RINGO_NSTEPS) * g.slotBytes : nullptr;
          char* ss = sends ? c.sendBuf + (sendStep % RINGO_NSTEPS) * g.slotBytes : nullptr;
          Mover<T, W, R>::move(r, s.prim, rs, ss, in + s.inOff + off, out + s.outOff + off, n);
        }
      }
      if (__syncthreads_or(aborted)) return;
      if (poster) {
        if (sends) {
          if (c.sendPosts != nullptr) {  // a proxy forwards the post: say what it carries
            const int64_t off = min((int64_t)k * s.sliceBytes, s.bytes);
            const int64_t n = (min(off + s.sliceBytes, s.bytes) - off) / (int64_t)sizeof(T) * (int64_t)sizeof(W);
            c.sendPosts[posted % RINGO_NSTEPS] =
                ringoPackPost(sendStep - posted, sendStep + sps - posted, (uint64_t)n, RINGO_PROTO_SIMPLE);
            posted = sendStep + sps;
          }
          __threadfence_system();
          ringoStoreRelaxed(c.sendTail, sendStep + sps);
        }
        if (recvs) ringoStoreRelaxed(c.recvHead, recvStep + sps);
      }
      if (sends) sendStep += sps;
      if (recvs) recvStep += sps;
    }
    tc.end();
  }
  tc.finish();
  if (poster) {
    c.state[0] = sendStep;
    c.state[1] = recvStep;
  }
}
