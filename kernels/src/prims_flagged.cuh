// prims_flagged.cuh: one channel's program with a flag protocol, LL or
// LL128 (the policy P: its FIFOs, how it moves a step's lines, whether it
// cleans slots). A receiver knows its data has arrived from the flags in
// the lines themselves, so one primitive call moves one slot with no fence
// and no tail. Credits return through head as in Simple; on a net
// connection (sendPosts set; LL only) the step is also posted with a tail,
// for the proxy that forwards it.
#pragma once
#include "prims_ll.cuh"
#include "prims_ll128.cuh"

// flaggedStep moves one step of prim as its Move says (moves.cuh); it
// returns false when a receive was aborted. Copy and ReduceCopy do not come
// here (runFlagged runs them as Simple does).
template <typename T, typename R, typename P>
__device__ bool flaggedStep(const R& r, uint32_t prim, const char* rl, uint64_t rs, char* sl, uint64_t ss,
                            const char* in, char* out, int64_t bytes, const volatile uint32_t* abortFlag) {
  switch (prim) {
    case PrimSend:
      return P::template move<T, R, Move<PrimSend> >(r, rl, rs, sl, ss, in, out, bytes, abortFlag);
    case PrimRecv:
      return P::template move<T, R, Move<PrimRecv> >(r, rl, rs, sl, ss, in, out, bytes, abortFlag);
    case PrimRecvReduceSend:
      return P::template move<T, R, Move<PrimRecvReduceSend> >(r, rl, rs, sl, ss, in, out, bytes, abortFlag);
    case PrimRecvReduceCopy:
      return P::template move<T, R, Move<PrimRecvReduceCopy> >(r, rl, rs, sl, ss, in, out, bytes, abortFlag);
    case PrimRecvReduceCopySend:
      return P::template move<T, R, Move<PrimRecvReduceCopySend> >(r, rl, rs, sl, ss, in, out, bytes, abortFlag);
    case PrimRecvCopySend:
      return P::template move<T, R, Move<PrimRecvCopySend> >(r, rl, rs, sl, ss, in, out, bytes, abortFlag);
    case PrimCopySend:
      if (out == in)  // in place: a Send
        return P::template move<T, R, Move<PrimSend> >(r, rl, rs, sl, ss, in, out, bytes, abortFlag);
      return P::template move<T, R, Move<PrimCopySend> >(r, rl, rs, sl, ss, in, out, bytes, abortFlag);
  }
  return true;
}

template <typename T, typename R, typename P>
__device__ void runFlagged(const R& r, const RingoConn* conns, const RingoStep* steps, uint32_t nsteps, const char* in,
                           char* out, RingoGeom g, const volatile uint32_t* abortFlag) {
  const int tid = threadIdx.x;
  // The ends in use, as in runSimple (no rounding: one slot per step).
  int curR = -1, curS = -1;
  const RingoConn* rc = conns;
  const RingoConn* sc = conns;
  uint64_t sendStep = 0, recvStep = 0;
  TraceCursor tc(conns[blockIdx.x].trace);
  for (uint32_t i = 0; i < nsteps; i++) {
    const RingoStep s = steps[i];
    tc.begin();
    if (s.prim == PrimCopy || s.prim == PrimReduceCopy) {
      if (tid < RINGO_NWORKERS) runStep<T, R>(r, s.prim, nullptr, nullptr, in + s.inOff, out + s.outOff, s.bytes);
      __syncthreads();
      tc.end();
      continue;
    }
    const bool recvs = primRecvs<false>(s.prim), sends = primSends<false>(s.prim);
    const bool newR = recvs && s.recvConn != curR, newS = sends && s.sendConn != curS;
    if (newR || newS) {
      // Hand the ends left back to their entries (a ring plan never does:
      // its one entry stays) and take the new ones' counters. Every thread
      // has read an entry before it is handed back again: each step ends
      // in a barrier.
      if ((newR && curR >= 0) || (newS && curS >= 0)) {
        if (tid == 0) {
          if (newR && curR >= 0) conns[curR].state[1] = recvStep;
          if (newS && curS >= 0) conns[curS].state[0] = sendStep;
        }
        __syncthreads();
      }
      if (newR) curR = s.recvConn, rc = &conns[curR], recvStep = rc->state[1];
      if (newS) curS = s.sendConn, sc = &conns[curS], sendStep = sc->state[0];
    }
    bool aborted = false;
    // Credit: head + NSTEPS ≥ sendStep + 1.
    if (sends && tid == 0 && sendStep + 1 > RINGO_NSTEPS)
      aborted = !spinUntil(sc->sendHead, sendStep + 1 - RINGO_NSTEPS, abortFlag);
    if (__syncthreads_or(aborted)) return;
    const char* rl = P::recvFifo(*rc) + (recvStep % RINGO_NSTEPS) * g.slotBytes;
    char* sl = P::sendFifo(*sc) + (sendStep % RINGO_NSTEPS) * g.slotBytes;
    aborted = !flaggedStep<T, R, P>(r, s.prim, rl, recvStep, sl, sendStep, in + s.inOff, out + s.outOff, s.bytes, abortFlag);
    if (sends) P::clean(sl, sendStep, s.bytes, g.slotBytes);
    const bool posts = sends && sc->sendPosts != nullptr;
    if (posts) __threadfence_system();  // every line out before the tail below
    if (__syncthreads_or(aborted)) return;
    if (recvs && tid == 0) ringoStoreRelaxed(rc->recvHead, recvStep + 1);
    if (posts && tid == 0) {
      sc->sendPosts[sendStep % RINGO_NSTEPS] = ringoPackPost(0, 1, P::postBytes(s.bytes), P::id);
      __threadfence_system();
      ringoStoreRelaxed(sc->sendTail, sendStep + 1);
    }
    if (sends) sendStep++;
    if (recvs) recvStep++;
    tc.end();
  }
  tc.finish();
  if (tid == 0) {
    if (curS >= 0) conns[curS].state[0] = sendStep;
    if (curR >= 0) conns[curR].state[1] = recvStep;
  }
}
