// common.cuh: what the host (Go, package kernels) and the device share —
// the encoding of a plan's steps, a rank's connections on one channel, and
// the launch geometry. Every struct here has a Go twin in kernels/layout.go;
// kernels_test.go checks the encodings against the sizes asserted below.
#pragma once
#include <stdint.h>

#define RINGO_NSTEPS 8
#define RINGO_MAXCHANNELS 64
#define RINGO_NWORKERS 512                  // threads that move data
#define RINGO_NTHREADS (RINGO_NWORKERS + 32)  // plus one warp that publishes
#define RINGO_SPINS_BEFORE_CHECK 10000

// Primitive codes, equal to ring.Prim's values.
enum RingoPrim : uint32_t {
  PrimSend = 0,
  PrimRecv = 1,
  PrimRecvReduceSend = 2,
  PrimRecvReduceCopy = 3,
  PrimRecvReduceCopySend = 4,
  PrimRecvCopySend = 5,
  PrimCopySend = 6,
  PrimCopy = 7,
  PrimReduceCopy = 8,
  PrimSendRecv = 9,
  NumPrims = 10,  // ring.Prim's numPrims: not a primitive
};

// One step of a channel's program, offsets and lengths in bytes.
struct RingoStep {
  uint32_t prim;
  uint16_t recvConn;  // the connection table's entry whose receive end the step uses
  uint16_t sendConn;  // the entry whose send end it uses
  int64_t inOff;
  int64_t outOff;
  int64_t bytes;  // what the step moves; a SendRecv's send
  union {
    int64_t sliceBytes;
    // A SendRecv's (ringo_p2p's steps only): its slices and its receive,
    // each of its own size; both fit a step's FIFO, far below 2³¹ bytes.
    struct {
      int32_t sliceBytes, recvBytes;
    } sendRecv;
  };
};
static_assert(sizeof(RingoStep) == 40, "RingoStep layout");

// A plan in device memory: per channel, where its steps start and how many
// there are, then the steps.
struct RingoPlanChannel {
  uint32_t first;
  uint32_t count;
};

// One entry of a rank's connection table: the receive end of a connection
// from one peer and the send end of one to a peer (either may be absent).
// "local" memory is on this rank's GPU, "remote" on the peer's (or on the
// same GPU when both ranks share one); the kernel polls only local words
// and writes remote ones.
struct RingoConn {
  char* recvBuf;          // local: Simple FIFO of the receive end's connection
  uint64_t* recvTail;     // local: steps the sender has produced
  uint64_t* recvHead;     // remote (the sender's GPU): steps this rank consumed
  char* sendBuf;          // remote (the receiver's GPU): Simple FIFO of the send end's connection
  uint64_t* sendTail;     // remote (the receiver's GPU): steps this rank produced
  uint64_t* sendHead;     // local: steps the receiver consumed
  uint64_t* state;        // local: [0] send step, [1] recv step, kept across launches
  char* recvLL;           // local: LL FIFO of the receive end's connection
  char* sendLL;           // remote: LL FIFO of the send end's connection
  uint64_t* sendPosts;    // net connections only (else null): NSTEPS post entries beside sendTail, for the proxy
  char* recvLL128;        // local: LL128 FIFO of the receive end's connection (null where LL128 is off)
  char* sendLL128;        // remote: LL128 FIFO of the send end's connection
  uint64_t* trace;        // host (mapped): this channel's step timestamps when tracing (else null), see ringoTrace
  // A connection's mailbox for direct halves (prims_p2p.cuh), beside the
  // sender's head: [0] the slots posted, [1 + slot % NSTEPS] where in the
  // receiver's output each posted unit goes.
  uint64_t* sendPtrs;     // local: the send end's mailbox, which the receiver fills
  uint64_t* recvPtrs;     // remote: the receive end's, in the sender's memory
  uint64_t pad;
};
static_assert(sizeof(RingoConn) == 128, "RingoConn layout");

// Protocols, equal to ring.Protocol's values.
#define RINGO_PROTO_LL 0
#define RINGO_PROTO_LL128 1
#define RINGO_PROTO_SIMPLE 2
#define RINGO_PROTO_DIRECT 3  // a point-to-point half of a Simple plan straight into the receiver's output (kernels.ProtoDirect)
// A point-to-point step's prim word bit: its copy or direct send goes in
// tiles, its slice field the stripe word (kernels.PrimTiles, stripedMove).
#define RINGO_PRIM_TILES (1u << 24)

// Launch geometry packed in one 64-bit kernel parameter.
struct RingoGeom {
  uint32_t slotBytes;      // one FIFO slot of the plan's protocol
  uint8_t slotsPerSlice;
  uint8_t slicesPerStep;
  uint8_t proto;           // 0 LL, 1 LL128, 2 Simple (ring.Protocol)
  uint8_t pad;
};
static_assert(sizeof(RingoGeom) == 8, "RingoGeom layout");

__device__ __forceinline__ uint64_t ringoLoadAcquire(const uint64_t* p) {
  uint64_t v;
  asm volatile("ld.acquire.sys.global.u64 %0, [%1];" : "=l"(v) : "l"(p) : "memory");
  return v;
}

__device__ __forceinline__ void ringoStoreRelaxed(uint64_t* p, uint64_t v) {
  asm volatile("st.relaxed.sys.global.u64 [%0], %1;" ::"l"(p), "l"(v) : "memory");
}

// ringoStoreRelease publishes v at p after everything this thread wrote or
// read before it, and, after a block barrier, everything the block did: a
// post by one thread after the barrier, with no system-wide fence
// (fence.sc) of its own.
__device__ __forceinline__ void ringoStoreRelease(uint64_t* p, uint64_t v) {
  asm volatile("st.release.sys.global.u64 [%0], %1;" ::"l"(p), "l"(v) : "memory");
}

// Overlapped launches (programmatic dependent launch, sm_90 on). The host
// may launch a collective's kernel so that its blocks are placed while the
// kernel before it on the stream is still ending (device.Rank, with
// cuda.Order.Overlap). Such a kernel calls ringoAwaitPrevious first, which
// returns once that kernel has finished and its writes are visible — so
// nothing it reads or writes changes — and ringoLetNextLaunch when its
// block has done its work, so that the next one's launch starts as the
// last block ends instead of after the grid has retired. Launched plainly,
// both do nothing. The trigger is at the end, not the start: the next
// kernel's blocks never hold multiprocessors that a kernel still running
// (this one, or a peer's on a shared GPU) may need.
__device__ __forceinline__ void ringoAwaitPrevious() {
#if __CUDA_ARCH__ >= 900
  asm volatile("griddepcontrol.wait;" ::: "memory");
#endif
}

__device__ __forceinline__ void ringoLetNextLaunch() {
#if __CUDA_ARCH__ >= 900
  asm volatile("griddepcontrol.launch_dependents;" ::: "memory");
#endif
}

// ringoPackPost packs a net connection's post entry as transport.packPost
// does: bytes in the low 32 bits, then the slots covered, the slots
// skipped and the protocol, a byte each.
__device__ __forceinline__ uint64_t ringoPackPost(uint64_t skip, uint64_t slots, uint64_t bytes, uint32_t proto) {
  return (bytes & 0xffffffffull) | (slots & 0xff) << 32 | (skip & 0xff) << 40 | (uint64_t)(proto & 0xff) << 48;
}

// Step tracing (RINGO_TRACE): a channel's trace buffer holds the number of
// steps recorded so far (word 0, kept across launches), then a ring of
// RINGO_TRACE_CAP (start, end) pairs of %globaltimer nanoseconds, written
// by thread 0 as each step ends. The host reads them after the launches.
#define RINGO_TRACE_CAP 4096

__device__ __forceinline__ uint64_t ringoNow() {
  uint64_t t;
  asm volatile("mov.u64 %0, %%globaltimer;" : "=l"(t));
  return t;
}

// TraceCursor is thread 0's view of its channel's trace buffer.
struct TraceCursor {
  uint64_t* buf;
  uint64_t n, t0;
  __device__ __forceinline__ TraceCursor(uint64_t* b) : buf(b), n(b != nullptr ? b[0] : 0), t0(0) {}
  __device__ __forceinline__ void begin() {
    if (buf != nullptr && threadIdx.x == 0) t0 = ringoNow();
  }
  __device__ __forceinline__ void end() {
    if (buf != nullptr && threadIdx.x == 0) {
      uint64_t* e = buf + 2 + 2 * (n % RINGO_TRACE_CAP);
      e[0] = t0;
      e[1] = ringoNow();
      n++;
    }
  }
  __device__ __forceinline__ void finish() {
    if (buf != nullptr && threadIdx.x == 0) {
      __threadfence_system();
      buf[0] = n;
    }
  }
};

__device__ __forceinline__ uint32_t ringoLoadVolatile32(const volatile uint32_t* p) { return *p; }
