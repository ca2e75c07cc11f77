// direct.cu: the direct all-reduce, for ranks that reach each other's
// memory (ranks of one process: the same GPU, or GPUs with peer access;
// ranks of one host whose sync areas are mapped through CUDA IPC). No
// FIFO: every rank reads every rank's input and reduces it, in the order
// of the communicator's ring (as one rotation of the ring would sum it,
// which is what bench's error check expects), into its own output, so
// every output is the same to the bit. One launch,
// ringo_<type>_<op>_direct, per call.
//
// Where a rank's input is read from (the kernel's how):
//   RINGO_DIRECT_RAW      its address itself: every rank is in one process;
//   RINGO_DIRECT_STAGED   the staging buffer in its sync area, which every
//                         rank has mapped: each block first copies its
//                         share of the input there (ranks in separate
//                         processes, an input in no window);
//   RINGO_DIRECT_WINDOW+w window w (Comm.RegisterWindow), at an offset:
//                         every rank has mapped every rank's window w
//                         (RingoDirect.windows), so nothing is copied.
// Each rank says its own, so they may differ from rank to rank.
//
// Synchronisation is by flags in each rank's sync area (RingoDirect.area,
// a block's words apart from the others'). Block b of every rank takes the
// same share of the buffer, so block b of one rank only ever waits for
// block b of the others:
//   1. start: it tells every rank where its input is (and its operator's
//      argument: PreMulSum scalars may differ by rank), then waits until
//      every rank has told it the same;
//   2. it reads its share of every input and reduces it in registers (at
//      most RINGO_DIRECT_PACKS 16-byte packs a thread, which bounds a
//      call: kernels.DirectMaxBytes);
//   3. end: it tells every rank it has read, and waits until all have —
//      only then may anyone write its output, which may be its input (in
//      place), and return, after which its stream may overwrite the input
//      (or the next call its staging buffer);
//   4. it writes its share of the output.
// The flags carry the block's epoch, a count of its launches kept in the
// area across launches (so a CUDA graph's replays count on), which the
// ranks agree on because they make the same calls in the same order and a
// call's grid depends on its size alone. Spins check the abort flag.
//
// The struct below has a Go twin (kernels.EncodeDirect, layout.go).
#include "copy.cuh"

#define RINGO_DIRECT_MAXRANKS 8
#define RINGO_DIRECT_MAXBLOCKS 32
#define RINGO_DIRECT_THREADS 512
#define RINGO_DIRECT_PACKS 4

// A rank's sync area, in 64-bit words: the blocks' epochs; per block and
// rank a start slot (epoch, input address, operator argument, spare); per
// block and rank an end flag. Slots are written by the rank they name and
// read by the area's owner.
#define RINGO_DIRECT_START RINGO_DIRECT_MAXBLOCKS
#define RINGO_DIRECT_END (RINGO_DIRECT_START + RINGO_DIRECT_MAXBLOCKS * RINGO_DIRECT_MAXRANKS * 4)
#define RINGO_DIRECT_AREA_WORDS (RINGO_DIRECT_END + RINGO_DIRECT_MAXBLOCKS * RINGO_DIRECT_MAXRANKS)
// The staging buffer follows the words (kernels.DirectAreaBytes).
#define RINGO_DIRECT_STAGE_OFFSET (RINGO_DIRECT_AREA_WORDS * 8)
#define RINGO_DIRECT_MAXWINDOWS 64

#define RINGO_DIRECT_RAW 0
#define RINGO_DIRECT_STAGED 1
#define RINGO_DIRECT_WINDOW 2

// RingoDirect is a rank's view of its communicator: every rank's sync area
// as this rank reaches it (area[rank] is its own), where it stands, and
// the ring's order of the ranks, in which it sums.
// windows[w * RINGO_DIRECT_MAXRANKS + r] is where rank r's window w is as
// this rank reaches it (null: no windows).
struct RingoDirect {
  uint64_t* area[RINGO_DIRECT_MAXRANKS];
  uint32_t rank, nranks;
  uint8_t order[RINGO_DIRECT_MAXRANKS];
  const uint64_t* windows;
};
static_assert(sizeof(RingoDirect) == 88, "RingoDirect layout");

__device__ __forceinline__ void ringoStoreRelease(uint64_t* p, uint64_t v) {
  asm volatile("st.release.sys.global.u64 [%0], %1;" ::"l"(p), "l"(v) : "memory");
}

// waitEpoch spins until *p reaches e; false when the abort flag rose first.
__device__ __forceinline__ bool waitEpoch(const uint64_t* p, uint64_t e, const volatile uint32_t* abortFlag) {
  int spins = 0;
  while (ringoLoadAcquire(p) < e) {
    if (++spins == RINGO_SPINS_BEFORE_CHECK) {
      if (*abortFlag != 0) return false;
      spins = 0;
    }
  }
  return true;
}

// The three element operations of a reduction by direct reads, as movers
// for combinePack (copy.cuh; moves.cuh says what the fields mean): the
// first rank's pre(x), each later rank's a ⊕ pre(x), and the final post(a).
struct DirectFirst {
  static constexpr bool recv = false, input = true, post = false;
};
struct DirectNext {
  static constexpr bool recv = true, input = true, post = false;
};
struct DirectPost {
  static constexpr bool recv = true, input = false, post = true;
};

// loadPack reads the pack of src at byte off, of which only the bytes below
// hi are data: one 16-byte load when all 16 are and src is aligned, element
// by element otherwise. Through L2: the peer wrote it since this block's
// L1 may last have seen it.
template <typename T>
__device__ __forceinline__ uint4 loadPack(const char* src, uint64_t off, uint64_t hi) {
  if (off + 16 <= hi && aligned16(src)) return __ldcg(reinterpret_cast<const uint4*>(src + off));
  uint4 v = {};
  T* e = reinterpret_cast<T*>(&v);
  const T* s = reinterpret_cast<const T*>(src + off);
  for (int i = 0; i < 16 / (int)sizeof(T) && off + (i + 1) * sizeof(T) <= hi; i++) e[i] = ldcg(s + i);
  return v;
}

template <typename T>
__device__ __forceinline__ void storePack(char* dst, uint64_t off, uint64_t hi, uint4 v) {
  if (off + 16 <= hi && aligned16(dst)) {
    *reinterpret_cast<uint4*>(dst + off) = v;
    return;
  }
  const T* e = reinterpret_cast<const T*>(&v);
  T* d = reinterpret_cast<T*>(dst + off);
  for (int i = 0; i < 16 / (int)sizeof(T) && off + (i + 1) * sizeof(T) <= hi; i++) d[i] = e[i];
}

// source returns where rank q's input is, as this rank reaches it, from
// what q published: how (RINGO_DIRECT_*) and an address or offset.
__device__ __forceinline__ const char* source(const RingoDirect* d, int q, uint64_t how, uint64_t at) {
  if (how == RINGO_DIRECT_RAW) return reinterpret_cast<const char*>(at);
  if (how == RINGO_DIRECT_STAGED) return reinterpret_cast<const char*>(d->area[q]) + RINGO_DIRECT_STAGE_OFFSET;
  return reinterpret_cast<const char*>(d->windows[(how - RINGO_DIRECT_WINDOW) * RINGO_DIRECT_MAXRANKS + q]) + at;
}

template <typename T, typename R>
__device__ __forceinline__ void directAllReduce(const RingoDirect* d, const char* in, char* out, uint64_t bytes,
                                                uint64_t arg, uint64_t how, uint64_t at,
                                                const volatile uint32_t* abortFlag) {
  __shared__ const char* src[RINGO_DIRECT_MAXRANKS];
  __shared__ uint64_t args[RINGO_DIRECT_MAXRANKS];
  __shared__ uint64_t epoch;
  __shared__ int stopped;
  const int b = blockIdx.x, t = threadIdx.x;
  const int n = d->nranks, me = d->rank;
  uint64_t* own = d->area[me];
  if (t == 0) {
    epoch = own[b] + 1;
    stopped = 0;
  }
  __syncthreads();
  const uint64_t e = epoch;
  // This block's share, in whole packs; this thread's packs in it.
  const uint64_t share = ((bytes + gridDim.x - 1) / gridDim.x + 15) / 16 * 16;
  const uint64_t lo = min((uint64_t)b * share, bytes), hi = min(lo + share, bytes);
  if (how == RINGO_DIRECT_STAGED) {  // 0. the share into the staging buffer, seen by all before the start
    char* stage = reinterpret_cast<char*>(own) + RINGO_DIRECT_STAGE_OFFSET;
#pragma unroll
    for (int k = 0; k < RINGO_DIRECT_PACKS; k++) {
      const uint64_t off = lo + ((uint64_t)k * RINGO_DIRECT_THREADS + t) * 16;
      if (off >= hi) break;
      storePack<T>(stage, off, hi, loadPack<T>(in, off, hi));
    }
    __threadfence_system();
    __syncthreads();
  }
  if (t < n) {  // 1. start: thread t talks with rank t
    uint64_t* slot = d->area[t] + RINGO_DIRECT_START + (b * RINGO_DIRECT_MAXRANKS + me) * 4;
    ringoStoreRelaxed(slot + 1, how == RINGO_DIRECT_RAW ? (uint64_t)in : at);
    ringoStoreRelaxed(slot + 2, arg);
    ringoStoreRelaxed(slot + 3, how);
    ringoStoreRelease(slot, e);
    const uint64_t* mine = own + RINGO_DIRECT_START + (b * RINGO_DIRECT_MAXRANKS + t) * 4;
    if (waitEpoch(mine, e, abortFlag)) {
      const uint64_t from = ringoLoadAcquire(mine + 1);
      args[t] = ringoLoadAcquire(mine + 2);
      src[t] = source(d, t, ringoLoadAcquire(mine + 3), from);
    } else {
      stopped = 1;
    }
  }
  __syncthreads();
  if (stopped) return;

  // 2. Every rank's share, reduced.
  uint4 acc[RINGO_DIRECT_PACKS];
#pragma unroll
  for (int k = 0; k < RINGO_DIRECT_PACKS; k++) {
    const uint64_t off = lo + ((uint64_t)k * RINGO_DIRECT_THREADS + t) * 16;
    if (off >= hi) break;
    const int q0 = d->order[0];
    const R r0(args[q0]);
    acc[k] = combinePack<T, R, DirectFirst, uint4>(r0, uint4{}, loadPack<T>(src[q0], off, hi));
    for (int j = 1; j < n; j++) {
      const int q = d->order[j];
      const R rq(args[q]);
      acc[k] = combinePack<T, R, DirectNext, uint4>(rq, acc[k], loadPack<T>(src[q], off, hi));
    }
  }
  __syncthreads();

  if (t < n) {  // 3. end
    ringoStoreRelease(d->area[t] + RINGO_DIRECT_END + b * RINGO_DIRECT_MAXRANKS + me, e);
    if (!waitEpoch(own + RINGO_DIRECT_END + b * RINGO_DIRECT_MAXRANKS + t, e, abortFlag)) stopped = 1;
  }
  __syncthreads();
  if (stopped) return;

  const R r(arg);  // 4. the output, post-operation applied (SumPostDiv's division)
#pragma unroll
  for (int k = 0; k < RINGO_DIRECT_PACKS; k++) {
    const uint64_t off = lo + ((uint64_t)k * RINGO_DIRECT_THREADS + t) * 16;
    if (off >= hi) break;
    storePack<T>(out, off, hi, combinePack<T, R, DirectPost, uint4>(r, acc[k], acc[k]));
  }
  if (t == 0) own[b] = e;
}

#define RINGO_DIRECT_KERNEL(name, T, K)                                                                    \
  extern "C" __global__ void __launch_bounds__(RINGO_DIRECT_THREADS)                                       \
      name(const RingoDirect* d, const char* in, char* out, uint64_t bytes, uint64_t arg, uint64_t how,   \
           uint64_t at, const volatile uint32_t* abortFlag) {                                              \
    directAllReduce<T, Red<T, K> >(d, in, out, bytes, arg, how, at, abortFlag);                            \
  }

// Every type's and operator's (reduce.cuh's lists), ringo_<type>_<op>_direct.
#define RINGO_DIRECT_OP_KERNEL(tname, opname, T, K) RINGO_DIRECT_KERNEL(ringo_##tname##_##opname##_direct, T, K)
#define RINGO_DIRECT_KERNELS_FOR(tname, T) RINGO_FOR_OPS(RINGO_DIRECT_OP_KERNEL, tname, T)
#define RINGO_DIRECT_KERNELS_FOR_INT(tname, T) RINGO_FOR_INT_OPS(RINGO_DIRECT_OP_KERNEL, tname, T)

RINGO_FOR_TYPES(RINGO_DIRECT_KERNELS_FOR, RINGO_DIRECT_KERNELS_FOR_INT)
// As in ring_f8.cu: the 8-bit floats from sm_90 on.
#if !defined(__CUDA_ARCH__) || __CUDA_ARCH__ >= 900
RINGO_FOR_FP8_TYPES(RINGO_DIRECT_KERNELS_FOR)
#endif
