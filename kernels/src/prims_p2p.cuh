// prims_p2p.cuh: one channel's program of the point-to-point kernel. Its
// steps are Copy (a rank's message to itself), Send, Recv and SendRecv, and
// each half of a step — what it sends, what it receives — has a protocol of
// its own, as NCCL picks one per operation: package ring plans a message of
// at most NCCL_P2P_LL_THRESHOLD bytes with LL, a larger one with the plan's
// protocol. A step's prim word carries them: the primitive in bits 0–7,
// the send half's protocol in 8–15, the receive half's in 16–23. Both ends
// of a connection see the same messages in the same order, so they agree.
// A Simple half of a plan whose ranks share a process may be direct
// (RINGO_PROTO_DIRECT, ring.P2PSpec.Direct): its chunk goes straight from
// the sender's input into the receiver's output, as one unit. As its step
// starts, the receiver posts where the chunk goes (the connection's
// mailbox, beside the sender's head); the sender waits for the post,
// copies, and advances the tail; the receiver waits for the tail and
// returns the credit. The unit counts a Simple step's slots, though none
// is used. A direct chunk, and a copy, may go in tiles (RINGO_PRIM_TILES:
// ring.P2PSpec.Stripe, for ranks sharing one GPU): the chunk is every
// width-th tile of its message from the one at its offsets, and the
// sender writes each as far from the posted address as it reads it from
// its own (stripedMove).
//
// Units. A Simple half moves slicesPerStep slices of slotsPerSlice slots, a
// flagged half (LL, LL128) one slot, a direct half one unit of a Simple
// step's slots. A step runs its halves' units in turn
// — send unit k, then receive unit k, for k up to the larger count — so
// that a send never waits for the step's receive (two ranks exchanging
// would otherwise each wait for the other's data first). The counters are
// a connection's, shared by the protocols; before each Simple half they are
// rounded up to a multiple of a Simple step's slots, so that no slice wraps
// the FIFO, and the receiver returns the slots skipped as credit. A Simple
// unit after the first that its chunk leaves empty is skipped: its slots
// are counted, and the receiver returns them as credit without waiting
// (a sender to a proxy still posts the unit, which advances only the tail). Every
// head, tail and post is stored by the publishing warp's lane 0, so each
// counter's stores stay in order. ring/p2p.go says why no schedule of
// matched sends and receives can deadlock.
#pragma once
#include "prims_flagged.cuh"
#include "prims_simple.cuh"

// P2PEnds are a channel's ends in use and their counters: every thread's
// copy is the same, the poster's posted the only one that matters.
struct P2PEnds {
  const RingoConn* rc;
  const RingoConn* sc;
  uint64_t sendStep, recvStep;
  uint64_t posted;  // the poster's: the tail of the last post (net connections)
};

// simpleUnits reports whether a half of protocol p counts its slots as a
// Simple half: Simple, or direct.
__device__ __forceinline__ bool simpleUnits(uint32_t p) { return p == RINGO_PROTO_SIMPLE || p == RINGO_PROTO_DIRECT; }

// unitSlots is the slots of one unit of a Simple half (Direct: of its one
// unit, a whole step's).
template <bool Direct>
__device__ __forceinline__ uint64_t unitSlots(RingoGeom g) {
  return Direct ? (uint64_t)g.slotsPerSlice * g.slicesPerStep : g.slotsPerSlice;
}

// stripedMove moves n bytes (prim: a Send's or a Copy's) in tiles from in
// to out, as a step in tiles says (RINGO_PRIM_TILES, ring.Step.Tile): the
// stripe word's low 24 bits are a tile's bytes, its high 8 the tiles from
// one of this step's to its next; the last tile may be short. The workers'
// moves run back to back, no barrier between tiles.
template <typename T, typename R>
__device__ __forceinline__ void stripedMove(const R& r, uint32_t prim, const char* in, char* out, int64_t n,
                                            uint32_t stripe) {
  const int64_t tile = stripe & 0xffffffu, step = tile * (stripe >> 24);
  for (int64_t done = 0, at = 0; done < n; done += tile, at += step) {
    if (prim == PrimCopy) runStep<T, R>(r, PrimCopy, nullptr, nullptr, in + at, out + at, min(tile, n - done));
    else Mover<T, T, R>::move(r, PrimSend, nullptr, out + at, in + at, nullptr, min(tile, n - done));
  }
}

// p2pSendSimple moves slice k of a Simple send half of n bytes from in
// into the FIFO's slots, or (Direct: its one unit, k = 0, slice ≥ n) to
// where the receiver posted it.
template <typename T, typename R, bool Direct>
__device__ __forceinline__ bool p2pSendSimple(const R& r, P2PEnds& e, const char* in, int64_t n, int64_t slice, int k,
                                              RingoGeom g, const volatile uint32_t* abortFlag, uint32_t stripe) {
  __shared__ char* dst;  // the unit's destination, as thread 32 read it
  const int tid = threadIdx.x;
  const uint64_t sps = unitSlots<Direct>(g);
  const int64_t off = min((int64_t)k * slice, n), len = min(off + slice, n) - off;
  // A trailing unit the chunk leaves empty: its slots, unused (but posted
  // to a proxy, which reads every unit's post in turn).
  if (k > 0 && len == 0 && e.sc->sendPosts == nullptr) {
    e.sendStep += sps;
    return true;
  }
  bool aborted = false;
  if (tid < RINGO_NWORKERS) {
    if (tid == 32) {
      if constexpr (Direct) {  // the receiver's post of this unit
        aborted = !spinUntil(e.sc->sendPtrs, e.sendStep + sps, abortFlag);
        dst = aborted ? nullptr : (char*)ringoLoadAcquire(e.sc->sendPtrs + 1 + e.sendStep % RINGO_NSTEPS);
      } else {  // credit: head + NSTEPS ≥ sendStep + sps
        if (e.sendStep + sps > RINGO_NSTEPS)
          aborted = !spinUntil(e.sc->sendHead, e.sendStep + sps - RINGO_NSTEPS, abortFlag);
        dst = e.sc->sendBuf + (e.sendStep % RINGO_NSTEPS) * g.slotBytes;
      }
    }
    barWorkers();
    if (len > 0 && dst != nullptr) {
      if (Direct && stripe != 0) stripedMove<T, R>(r, PrimSend, in + off, dst, len, stripe);
      else Mover<T, T, R>::move(r, PrimSend, nullptr, dst, in + off, nullptr, len);
    }
  }
  if (__syncthreads_or(aborted)) return false;
  if (tid == RINGO_NTHREADS - 32) {
    if (e.sc->sendPosts != nullptr) {  // a proxy forwards the post: say what it carries
      e.sc->sendPosts[e.posted % RINGO_NSTEPS] =
          ringoPackPost(e.sendStep - e.posted, e.sendStep + sps - e.posted, (uint64_t)len, RINGO_PROTO_SIMPLE);
      e.posted = e.sendStep + sps;
    }
    ringoStoreRelease(e.sc->sendTail, e.sendStep + sps);  // after the barrier: every worker's data before it
  }
  e.sendStep += sps;
  return true;
}

// p2pRecvSimple moves slice k of a Simple receive half of n bytes to out
// (Direct: waits for the sender to have moved it there).
template <typename T, typename R, bool Direct>
__device__ __forceinline__ bool p2pRecvSimple(const R& r, P2PEnds& e, char* out, int64_t n, int64_t slice, int k,
                                              RingoGeom g, const volatile uint32_t* abortFlag) {
  const int tid = threadIdx.x;
  const uint64_t sps = unitSlots<Direct>(g);
  const int64_t off = min((int64_t)k * slice, n), len = min(off + slice, n) - off;
  if (k > 0 && len == 0) {  // empty at both ends: nothing comes, its slots return as credit
    if (tid == RINGO_NTHREADS - 32) ringoStoreRelaxed(e.rc->recvHead, e.recvStep + sps);
    e.recvStep += sps;
    return true;
  }
  bool aborted = false;
  if (tid < RINGO_NWORKERS) {
    if (tid == 0) aborted = !spinUntil(e.rc->recvTail, e.recvStep + sps, abortFlag);
    barWorkers();
    if (!Direct && len > 0)
      Mover<T, T, R>::move(r, PrimRecv, e.rc->recvBuf + (e.recvStep % RINGO_NSTEPS) * g.slotBytes, nullptr, nullptr,
                           out + off, len);
  }
  if (__syncthreads_or(aborted)) return false;
  if (tid == RINGO_NTHREADS - 32) ringoStoreRelaxed(e.rc->recvHead, e.recvStep + sps);
  e.recvStep += sps;
  return true;
}

// p2pSendFlagged moves a flagged send half of n bytes from in: one slot.
template <typename T, typename R, typename P>
__device__ __forceinline__ bool p2pSendFlagged(const R& r, P2PEnds& e, const char* in, int64_t n, uint32_t slotBytes,
                                               const volatile uint32_t* abortFlag) {
  const int tid = threadIdx.x;
  bool aborted = false;
  if (tid == 32 && e.sendStep + 1 > RINGO_NSTEPS)
    aborted = !spinUntil(e.sc->sendHead, e.sendStep + 1 - RINGO_NSTEPS, abortFlag);
  if (__syncthreads_or(aborted)) return false;
  char* sl = P::sendFifo(*e.sc) + (e.sendStep % RINGO_NSTEPS) * slotBytes;
  P::template move<T, R, Move<PrimSend> >(r, nullptr, 0, sl, e.sendStep, in, nullptr, n, abortFlag);
  P::clean(sl, e.sendStep, n, slotBytes);
  const bool posts = e.sc->sendPosts != nullptr;
  if (posts) __threadfence_system();  // every line out before the tail below
  __syncthreads();
  if (posts && tid == RINGO_NTHREADS - 32) {
    e.sc->sendPosts[e.sendStep % RINGO_NSTEPS] = ringoPackPost(0, 1, P::postBytes(n), P::id);
    e.posted = e.sendStep + 1;
    __threadfence_system();
    ringoStoreRelaxed(e.sc->sendTail, e.sendStep + 1);
  }
  e.sendStep++;
  return true;
}

// p2pRecvFlagged moves a flagged receive half of n bytes to out: one slot.
template <typename T, typename R, typename P>
__device__ __forceinline__ bool p2pRecvFlagged(const R& r, P2PEnds& e, char* out, int64_t n, uint32_t slotBytes,
                                               const volatile uint32_t* abortFlag) {
  const char* rl = P::recvFifo(*e.rc) + (e.recvStep % RINGO_NSTEPS) * slotBytes;
  const bool aborted = !P::template move<T, R, Move<PrimRecv> >(r, rl, e.recvStep, nullptr, 0, nullptr, out, n, abortFlag);
  if (__syncthreads_or(aborted)) return false;
  if (threadIdx.x == RINGO_NTHREADS - 32) ringoStoreRelaxed(e.rc->recvHead, e.recvStep + 1);
  e.recvStep++;
  return true;
}

// p2pHalf moves unit k of a step's send half (Send: from buf, a const
// char*) or receive half (to buf, a char*) of n bytes with protocol proto.
template <typename T, typename R, bool Send, typename Buf>
__device__ __forceinline__ bool p2pHalf(const R& r, P2PEnds& e, uint32_t proto, Buf buf, int64_t n, uint32_t slot,
                                        int64_t slice, int k, RingoGeom g, const volatile uint32_t* abortFlag, uint32_t stripe) {
  switch (proto) {
    case RINGO_PROTO_LL:
      if constexpr (Send) return p2pSendFlagged<T, R, ProtoLL>(r, e, buf, n, slot, abortFlag);
      else return p2pRecvFlagged<T, R, ProtoLL>(r, e, buf, n, slot, abortFlag);
    case RINGO_PROTO_LL128:
      if constexpr (Send) return p2pSendFlagged<T, R, ProtoLL128>(r, e, buf, n, slot, abortFlag);
      else return p2pRecvFlagged<T, R, ProtoLL128>(r, e, buf, n, slot, abortFlag);
    case RINGO_PROTO_DIRECT:
      if constexpr (Send) return p2pSendSimple<T, R, true>(r, e, buf, n, slice, k, g, abortFlag, stripe);
      else return p2pRecvSimple<T, R, true>(r, e, buf, n, slice, k, g, abortFlag);
    default:
      if constexpr (Send) return p2pSendSimple<T, R, false>(r, e, buf, n, slice, k, g, abortFlag, 0);
      else return p2pRecvSimple<T, R, false>(r, e, buf, n, slice, k, g, abortFlag);
  }
}

// runP2P runs one channel's point-to-point program. The plan's geometry g
// is its protocol's; llSlotBytes is an LL slot's, for the LL halves of a
// plan of another protocol.
template <typename T, typename R>
__device__ void runP2P(const R& r, const RingoConn* conns, const RingoStep* steps, uint32_t nsteps, const char* in,
                       char* out, RingoGeom g, uint32_t llSlotBytes, const volatile uint32_t* abortFlag) {
  const int tid = threadIdx.x;
  const bool poster = tid == RINGO_NTHREADS - 32;
  const uint64_t per = (uint64_t)g.slotsPerSlice * g.slicesPerStep;  // a Simple step's slots
  int curR = -1, curS = -1;
  P2PEnds e{conns, conns, 0, 0, 0};
  TraceCursor tc(conns[blockIdx.x].trace);
  for (uint32_t i = 0; i < nsteps; i++) {
    const RingoStep s = steps[i];
    const uint32_t prim = s.prim & 0xffu, sp = (s.prim >> 8) & 0xffu, rp = (s.prim >> 16) & 0xffu;
    tc.begin();
    if (prim == PrimCopy) {
      const uint32_t stripe = (s.prim & RINGO_PRIM_TILES) ? (uint32_t)s.sliceBytes : 0;
      if (tid < RINGO_NWORKERS) {
        if (stripe != 0)
          stripedMove<T, R>(r, PrimCopy, in + s.inOff, out + s.outOff, s.bytes, stripe);
        else runStep<T, R>(r, PrimCopy, nullptr, nullptr, in + s.inOff, out + s.outOff, s.bytes);
      }
      tc.end();
      continue;
    }
    const bool recvs = primRecvs<true>(prim), sends = primSends<true>(prim);
    const bool newR = recvs && s.recvConn != curR, newS = sends && s.sendConn != curS;
    if (newR || newS) {
      // Hand the ends left back to their entries and take the new ones'
      // counters. Every thread reads an entry's state after the poster
      // wrote it: the barrier between.
      if ((newR && curR >= 0) || (newS && curS >= 0)) {
        if (poster) {
          if (newR && curR >= 0) conns[curR].state[1] = e.recvStep;
          if (newS && curS >= 0) conns[curS].state[0] = e.sendStep;
        }
        __syncthreads();
      }
      if (newR) curR = s.recvConn, e.rc = &conns[curR], e.recvStep = e.rc->state[1];
      if (newS) curS = s.sendConn, e.sc = &conns[curS], e.sendStep = e.posted = e.sc->state[0];
    }
    const int64_t sendBytes = s.bytes, recvBytes = prim == PrimSendRecv ? s.sendRecv.recvBytes : s.bytes;
    const int64_t slice = prim == PrimSendRecv ? s.sendRecv.sliceBytes : s.sliceBytes;
    const int ns = !sends ? 0 : sp == RINGO_PROTO_SIMPLE ? g.slicesPerStep : 1;
    const int nr = !recvs ? 0 : rp == RINGO_PROTO_SIMPLE ? g.slicesPerStep : 1;
    if (ns > 0 && simpleUnits(sp)) e.sendStep = (e.sendStep + per - 1) / per * per;
    if (nr > 0 && simpleUnits(rp) && e.recvStep % per != 0) {
      e.recvStep = (e.recvStep + per - 1) / per * per;
      if (poster) ringoStoreRelaxed(e.rc->recvHead, e.recvStep);  // the skipped slots, as credit
    }
    if (nr > 0 && rp == RINGO_PROTO_DIRECT && poster) {  // post where the step's chunk goes
      e.rc->recvPtrs[1 + e.recvStep % RINGO_NSTEPS] = (uint64_t)(out + s.outOff);
      ringoStoreRelease(e.rc->recvPtrs, e.recvStep + per);
    }
    const uint32_t sSlot = sp == g.proto ? g.slotBytes : llSlotBytes, rSlot = rp == g.proto ? g.slotBytes : llSlotBytes;
    bool ok = true;
    // A direct half's one unit is its whole chunk.
    const int64_t sSlice = sp == RINGO_PROTO_DIRECT ? sendBytes : slice, rSlice = rp == RINGO_PROTO_DIRECT ? recvBytes : slice;
    const uint32_t stripe = sp == RINGO_PROTO_DIRECT && (s.prim & RINGO_PRIM_TILES) ? (uint32_t)slice : 0;
    for (int k = 0; ok && k < max(ns, nr); k++) {
      if (k < ns) ok = p2pHalf<T, R, true>(r, e, sp, in + s.inOff, sendBytes, sSlot, sSlice, k, g, abortFlag, stripe);
      if (ok && k < nr) ok = p2pHalf<T, R, false>(r, e, rp, out + s.outOff, recvBytes, rSlot, rSlice, k, g, abortFlag, 0);
    }
    if (!ok) return;
    tc.end();
  }
  tc.finish();
  if (poster) {
    if (curS >= 0) conns[curS].state[0] = e.sendStep;
    if (curR >= 0) conns[curR].state[1] = e.recvStep;
  }
}
