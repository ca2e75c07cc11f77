// direct.cu: the direct collectives, for ranks that reach each other's
// memory (ranks of one process: the same GPU, or GPUs with peer access;
// ranks of one host whose sync areas are mapped through CUDA IPC). No
// FIFO. Three kernels a type and operator and one copy, one launch per
// call:
//   ringo_<type>_<op>_direct   all-reduce in one shot: every rank reads
//                              every rank's input and reduces it into its
//                              own output;
//   ringo_<type>_<op>_twoshot  all-reduce in two shots: the buffer is cut
//                              into one segment per rank; rank q reads
//                              segment q of every input and reduces it (a
//                              reduce-scatter by direct reads), then every
//                              rank reads every other's reduced segment
//                              (an all-gather by direct reads). Each rank
//                              reads about twice the buffer, where one
//                              shot reads it n times;
//   ringo_<type>_<op>_directrs reduce-scatter: rank q reads segment q of
//                              every input and reduces it into its output
//                              (two shots' first half);
//   ringo_directag             all-gather: every rank reads every rank's
//                              input into that rank's segment of its
//                              output (two shots' second half).
// The reductions sum in the order of the communicator's ring (as one
// rotation of the ring would, which is what bench's error check expects),
// so every all-reduce's output is the same to the bit.
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
// Each rank says its own, so they may differ from rank to rank (a staged
// reduce-scatter stages its whole input, an all-gather its input). A
// two-shot rank's reduced segment is read from its output when every rank is in
// one process, else from its staging buffer, where it writes it too.
//
// Synchronisation is by flags in each rank's sync area (RingoDirect.area,
// a block's words apart from the others'). Block b of every rank takes the
// same share of the buffer (of each segment, in two shots), so block b of
// one rank only ever waits for block b of the others:
//   1. start: it tells every rank where its input is (and its operator's
//      argument: PreMulSum scalars may differ by rank, and its output),
//      then waits until every rank has told it the same;
//   2. one shot: it reads its share of every input and reduces it in
//      registers (at most RINGO_DIRECT_PACKS 16-byte packs a thread, which
//      bounds a call: kernels.DirectMaxBytes);
//      two shots: it reduces its share of its rank's segment, writes it,
//      tells every rank it has (the mid flag), waits until all have, and
//      copies its share of every other segment from the rank that reduced
//      it;
//      reduce-scatter: it reduces its share of its rank's segment of every
//      input into the output; all-gather: it copies its share of every
//      input into the output;
//   3. end: it tells every rank it has read, and waits until all have —
//      only then may anyone write its output (one shot), which may be its
//      input (in place), and return, after which its stream may overwrite
//      the input (or the next call its staging buffer);
//   4. one shot: it writes its share of the output.
// A flag is a release store at system scope by one thread after the
// block's barrier, as NCCL posts a step (one thread fences after the
// barrier): what every thread of the block wrote before the barrier (a
// staged share, a reduced segment) or read (a peer's input) is ordered
// before it, and a peer that acquires the flag sees the writes. The flags
// carry the block's epoch, a count of its launches kept in the
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
// rank a start slot of RINGO_DIRECT_SLOT words (epoch, input address or
// offset, operator argument, how, output address, spare); per block and
// rank a mid flag (two shots) and an end flag. Slots are written by the
// rank they name and read by the area's owner.
#define RINGO_DIRECT_SLOT 8
#define RINGO_DIRECT_START RINGO_DIRECT_MAXBLOCKS
#define RINGO_DIRECT_MID (RINGO_DIRECT_START + RINGO_DIRECT_MAXBLOCKS * RINGO_DIRECT_MAXRANKS * RINGO_DIRECT_SLOT)
#define RINGO_DIRECT_END (RINGO_DIRECT_MID + RINGO_DIRECT_MAXBLOCKS * RINGO_DIRECT_MAXRANKS)
#define RINGO_DIRECT_AREA_WORDS (RINGO_DIRECT_END + RINGO_DIRECT_MAXBLOCKS * RINGO_DIRECT_MAXRANKS)
// The staging buffer follows the words (kernels.DirectSyncBytes).
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

// copyRange copies [lo, hi) of src to the same offsets of dst with the
// block's threads, RINGO_DIRECT_PACKS packs in flight a thread.
template <typename T>
__device__ __forceinline__ void copyRange(char* dst, const char* src, uint64_t lo, uint64_t hi) {
  for (uint64_t base = lo; base < hi; base += (uint64_t)RINGO_DIRECT_PACKS * RINGO_DIRECT_THREADS * 16) {
    uint4 v[RINGO_DIRECT_PACKS];
#pragma unroll
    for (int k = 0; k < RINGO_DIRECT_PACKS; k++) {
      const uint64_t off = base + ((uint64_t)k * RINGO_DIRECT_THREADS + threadIdx.x) * 16;
      if (off < hi) v[k] = loadPack<T>(src, off, hi);
    }
#pragma unroll
    for (int k = 0; k < RINGO_DIRECT_PACKS; k++) {
      const uint64_t off = base + ((uint64_t)k * RINGO_DIRECT_THREADS + threadIdx.x) * 16;
      if (off < hi) storePack<T>(dst, off, hi, v[k]);
    }
  }
}

// DirectView is what block b learns at its start: where every rank's input
// is (src), where its reduced segment will be (res: two shots), and its
// operator's argument.
struct DirectView {
  const char* src[RINGO_DIRECT_MAXRANKS];
  const char* res[RINGO_DIRECT_MAXRANKS];
  uint64_t args[RINGO_DIRECT_MAXRANKS];
  uint64_t epoch;
  int stopped;
};

// directStart is step 1 for the calling block at epoch v->epoch: thread
// t < n tells rank t where this rank's input and output are and waits until
// rank t has told it the same. false (for every thread) on abort.
__device__ __forceinline__ bool directStart(const RingoDirect* d, DirectView* v, const char* in, const char* out,
                                            uint64_t arg, uint64_t how, uint64_t at,
                                            const volatile uint32_t* abortFlag) {
  const int b = blockIdx.x, t = threadIdx.x, me = d->rank;
  const uint64_t e = v->epoch;
  if (t < d->nranks) {
    uint64_t* slot = d->area[t] + RINGO_DIRECT_START + (b * RINGO_DIRECT_MAXRANKS + me) * RINGO_DIRECT_SLOT;
    ringoStoreRelaxed(slot + 1, how == RINGO_DIRECT_RAW ? (uint64_t)in : at);
    ringoStoreRelaxed(slot + 2, arg);
    ringoStoreRelaxed(slot + 3, how);
    ringoStoreRelaxed(slot + 4, (uint64_t)out);
    ringoStoreRelease(slot, e);
    const uint64_t* mine = d->area[me] + RINGO_DIRECT_START + (b * RINGO_DIRECT_MAXRANKS + t) * RINGO_DIRECT_SLOT;
    if (waitEpoch(mine, e, abortFlag)) {
      const uint64_t from = ringoLoadAcquire(mine + 1), theirs = ringoLoadAcquire(mine + 3);
      v->args[t] = ringoLoadAcquire(mine + 2);
      v->src[t] = source(d, t, theirs, from);
      v->res[t] = theirs == RINGO_DIRECT_RAW ? reinterpret_cast<const char*>(ringoLoadAcquire(mine + 4))
                                             : reinterpret_cast<const char*>(d->area[t]) + RINGO_DIRECT_STAGE_OFFSET;
    } else {
      v->stopped = 1;
    }
  }
  __syncthreads();
  return !v->stopped;
}

// directFlag tells every rank that the calling block has reached flag
// region (RINGO_DIRECT_MID or END) at epoch v->epoch, and waits until every
// rank's block has. false (for every thread) on abort.
__device__ __forceinline__ bool directFlag(const RingoDirect* d, DirectView* v, int region,
                                           const volatile uint32_t* abortFlag) {
  const int b = blockIdx.x, t = threadIdx.x, me = d->rank;
  __syncthreads();
  if (t < d->nranks) {
    ringoStoreRelease(d->area[t] + region + b * RINGO_DIRECT_MAXRANKS + me, v->epoch);
    if (!waitEpoch(d->area[me] + region + b * RINGO_DIRECT_MAXRANKS + t, v->epoch, abortFlag)) v->stopped = 1;
  }
  __syncthreads();
  return !v->stopped;
}

// directEnter starts the calling block's launch: its epoch, one past the
// last in its own area.
__device__ __forceinline__ void directEnter(const RingoDirect* d, DirectView* v) {
  if (threadIdx.x == 0) {
    v->epoch = d->area[d->rank][blockIdx.x] + 1;
    v->stopped = 0;
  }
  __syncthreads();
}

template <typename T, typename R>
__device__ __forceinline__ void directAllReduce(const RingoDirect* d, const char* in, char* out, uint64_t bytes,
                                                uint64_t arg, uint64_t how, uint64_t at,
                                                const volatile uint32_t* abortFlag) {
  __shared__ DirectView v;
  const int b = blockIdx.x, t = threadIdx.x;
  const int n = d->nranks;
  uint64_t* own = d->area[d->rank];
  directEnter(d, &v);
  // This block's share, in whole packs; this thread's packs in it.
  const uint64_t share = ((bytes + gridDim.x - 1) / gridDim.x + 15) / 16 * 16;
  const uint64_t lo = min((uint64_t)b * share, bytes), hi = min(lo + share, bytes);
  if (how == RINGO_DIRECT_STAGED) {  // 0. the share into the staging buffer, seen by all before the start
    copyRange<T>(reinterpret_cast<char*>(own) + RINGO_DIRECT_STAGE_OFFSET, in, lo, hi);
    __syncthreads();  // seen by the peers through the start's release (fences)
  }
  if (!directStart(d, &v, in, out, arg, how, at, abortFlag)) return;

  // 2. Every rank's share, reduced.
  uint4 acc[RINGO_DIRECT_PACKS];
#pragma unroll
  for (int k = 0; k < RINGO_DIRECT_PACKS; k++) {
    const uint64_t off = lo + ((uint64_t)k * RINGO_DIRECT_THREADS + t) * 16;
    if (off >= hi) break;
    const int q0 = d->order[0];
    const R r0(v.args[q0]);
    acc[k] = combinePack<T, R, DirectFirst, uint4>(r0, uint4{}, loadPack<T>(v.src[q0], off, hi));
    for (int j = 1; j < n; j++) {
      const int q = d->order[j];
      const R rq(v.args[q]);
      acc[k] = combinePack<T, R, DirectNext, uint4>(rq, acc[k], loadPack<T>(v.src[q], off, hi));
    }
  }
  if (!directFlag(d, &v, RINGO_DIRECT_END, abortFlag)) return;  // 3. end

  const R r(arg);  // 4. the output, post-operation applied (SumPostDiv's division)
#pragma unroll
  for (int k = 0; k < RINGO_DIRECT_PACKS; k++) {
    const uint64_t off = lo + ((uint64_t)k * RINGO_DIRECT_THREADS + t) * 16;
    if (off >= hi) break;
    storePack<T>(out, off, hi, combinePack<T, R, DirectPost, uint4>(r, acc[k], acc[k]));
  }
  if (t == 0) own[b] = v.epoch;
}

// reduceShare reduces [lo, hi) of every rank's input, from byte from on
// (v.src[q] + from), in the ring's order, and writes it, post-operation
// applied, to the same offsets of out and, unless it is null, of copy:
// two shots' first half and the reduce-scatter.
template <typename T, typename R>
__device__ __forceinline__ void reduceShare(const RingoDirect* d, const DirectView& v, uint64_t from, char* out,
                                            char* copy, uint64_t lo, uint64_t hi, uint64_t arg) {
  const int t = threadIdx.x, n = d->nranks;
  const R r(arg);
  for (uint64_t base = lo; base < hi; base += (uint64_t)RINGO_DIRECT_PACKS * RINGO_DIRECT_THREADS * 16) {
    uint4 acc[RINGO_DIRECT_PACKS];
    const int q0 = d->order[0];
#pragma unroll
    for (int k = 0; k < RINGO_DIRECT_PACKS; k++) {
      const uint64_t off = base + ((uint64_t)k * RINGO_DIRECT_THREADS + t) * 16;
      if (off < hi) acc[k] = combinePack<T, R, DirectFirst, uint4>(R(v.args[q0]), uint4{}, loadPack<T>(v.src[q0] + from, off, hi));
    }
    for (int j = 1; j < n; j++) {
      const int q = d->order[j];
      const R rq(v.args[q]);
#pragma unroll
      for (int k = 0; k < RINGO_DIRECT_PACKS; k++) {
        const uint64_t off = base + ((uint64_t)k * RINGO_DIRECT_THREADS + t) * 16;
        if (off < hi) acc[k] = combinePack<T, R, DirectNext, uint4>(rq, acc[k], loadPack<T>(v.src[q] + from, off, hi));
      }
    }
#pragma unroll
    for (int k = 0; k < RINGO_DIRECT_PACKS; k++) {
      const uint64_t off = base + ((uint64_t)k * RINGO_DIRECT_THREADS + t) * 16;
      if (off >= hi) continue;
      const uint4 val = combinePack<T, R, DirectPost, uint4>(r, acc[k], acc[k]);
      storePack<T>(out, off, hi, val);
      if (copy != nullptr) storePack<T>(copy, off, hi, val);
    }
  }
}

// directTwoShot is the two-shot all-reduce (see the top of the file). The
// segments are ceil(bytes/n) rounded up to a pack, the last ones shorter
// or empty; block b takes share b of each.
template <typename T, typename R>
__device__ __forceinline__ void directTwoShot(const RingoDirect* d, const char* in, char* out, uint64_t bytes,
                                              uint64_t arg, uint64_t how, uint64_t at,
                                              const volatile uint32_t* abortFlag) {
  __shared__ DirectView v;
  const int b = blockIdx.x, t = threadIdx.x;
  const int n = d->nranks, me = d->rank;
  uint64_t* own = d->area[me];
  char* stage = reinterpret_cast<char*>(own) + RINGO_DIRECT_STAGE_OFFSET;
  directEnter(d, &v);
  const uint64_t seg = ((bytes + n - 1) / n + 15) / 16 * 16;
  const uint64_t share = ((seg + gridDim.x - 1) / gridDim.x + 15) / 16 * 16;
  // Block b's share of segment q: [lo, hi).
  auto part = [&](int q, uint64_t& lo, uint64_t& hi) {
    const uint64_t s0 = min((uint64_t)q * seg, bytes), s1 = min(s0 + seg, bytes);
    lo = min(s0 + (uint64_t)b * share, s1);
    hi = min(lo + share, s1);
  };
  uint64_t lo, hi;
  if (how == RINGO_DIRECT_STAGED) {  // 0. the block's share of every segment into the staging buffer
    for (int q = 0; q < n; q++) {
      part(q, lo, hi);
      copyRange<T>(stage, in, lo, hi);
    }
    __syncthreads();
  }
  if (!directStart(d, &v, in, out, arg, how, at, abortFlag)) return;

  // 2a. This rank's segment, reduced from every rank's input, into the
  // output and, where the others read it there, the staging buffer (which
  // they read only this segment of from now on).
  part(me, lo, hi);
  reduceShare<T, R>(d, v, 0, out, how != RINGO_DIRECT_RAW ? stage : nullptr, lo, hi, arg);
  if (!directFlag(d, &v, RINGO_DIRECT_MID, abortFlag)) return;

  // 2b. Every other segment, from the rank that reduced it.
  for (int j = 1; j < n; j++) {
    const int q = (me + j) % n;
    part(q, lo, hi);
    copyRange<T>(out, v.res[q], lo, hi);
  }
  if (!directFlag(d, &v, RINGO_DIRECT_END, abortFlag)) return;  // 3. end
  if (t == 0) own[b] = v.epoch;
}

// directReduceScatter is the reduce-scatter by direct reads: rank me
// reduces segment me (bytes long: its output) of every rank's input, block
// b its share, and writes it to its output at once — no other rank reads
// its output, nor segment me of its input (which is its output in place).
// The end flag keeps the inputs (and staging buffers) until every rank has
// read them.
template <typename T, typename R>
__device__ __forceinline__ void directReduceScatter(const RingoDirect* d, const char* in, char* out, uint64_t bytes,
                                                    uint64_t arg, uint64_t how, uint64_t at,
                                                    const volatile uint32_t* abortFlag) {
  __shared__ DirectView v;
  const int b = blockIdx.x, t = threadIdx.x;
  const int n = d->nranks, me = d->rank;
  uint64_t* own = d->area[me];
  directEnter(d, &v);
  const uint64_t share = ((bytes + gridDim.x - 1) / gridDim.x + 15) / 16 * 16;
  const uint64_t lo = min((uint64_t)b * share, bytes), hi = min(lo + share, bytes);
  if (how == RINGO_DIRECT_STAGED) {  // 0. the block's share of every segment into the staging buffer
    char* stage = reinterpret_cast<char*>(own) + RINGO_DIRECT_STAGE_OFFSET;
    for (int q = 0; q < n; q++) copyRange<T>(stage + q * bytes, in + q * bytes, lo, hi);
    __syncthreads();
  }
  if (!directStart(d, &v, in, out, arg, how, at, abortFlag)) return;

  reduceShare<T, R>(d, v, (uint64_t)me * bytes, out, nullptr, lo, hi, arg);
  if (!directFlag(d, &v, RINGO_DIRECT_END, abortFlag)) return;  // 3. end
  if (t == 0) own[b] = v.epoch;
}

// ringo_directag is the all-gather by direct reads: block b copies its
// share of every rank's input (bytes long) into that rank's segment of
// its output, its own input too unless it is already there (in place).
// Bytes are bytes: no type, no operator.
extern "C" __global__ void __launch_bounds__(RINGO_DIRECT_THREADS)
    ringo_directag(const RingoDirect* d, const char* in, char* out, uint64_t bytes, uint64_t arg, uint64_t how,
                   uint64_t at, const volatile uint32_t* abortFlag) {
  __shared__ DirectView v;
  ringoAwaitPrevious();
  const int b = blockIdx.x, t = threadIdx.x;
  const int n = d->nranks, me = d->rank;
  uint64_t* own = d->area[me];
  directEnter(d, &v);
  const uint64_t share = ((bytes + gridDim.x - 1) / gridDim.x + 15) / 16 * 16;
  const uint64_t lo = min((uint64_t)b * share, bytes), hi = min(lo + share, bytes);
  if (how == RINGO_DIRECT_STAGED) {
    copyRange<uint8_t>(reinterpret_cast<char*>(own) + RINGO_DIRECT_STAGE_OFFSET, in, lo, hi);
    __syncthreads();
  }
  if (!directStart(d, &v, in, out, arg, how, at, abortFlag)) return;
  for (int j = 0; j < n; j++) {
    const int q = (me + j) % n;
    char* dst = out + (uint64_t)q * bytes;
    const char* src = q == me ? in : v.src[q];
    if (src != dst) copyRange<uint8_t>(dst, src, lo, hi);
  }
  if (!directFlag(d, &v, RINGO_DIRECT_END, abortFlag)) return;  // 3. end
  if (t == 0) own[b] = v.epoch;
  ringoLetNextLaunch();
}

#define RINGO_DIRECT_KERNEL(name, T, K, body)                                                              \
  extern "C" __global__ void __launch_bounds__(RINGO_DIRECT_THREADS)                                       \
      name(const RingoDirect* d, const char* in, char* out, uint64_t bytes, uint64_t arg, uint64_t how,   \
           uint64_t at, const volatile uint32_t* abortFlag) {                                              \
    ringoAwaitPrevious();                                                                                  \
    body<T, Red<T, K> >(d, in, out, bytes, arg, how, at, abortFlag);                                       \
    ringoLetNextLaunch();                                                                                  \
  }

// Every type's and operator's (reduce.cuh's lists): ringo_<type>_<op>_direct,
// ringo_<type>_<op>_twoshot and ringo_<type>_<op>_directrs.
#define RINGO_DIRECT_OP_KERNEL(tname, opname, T, K)                                 \
  RINGO_DIRECT_KERNEL(ringo_##tname##_##opname##_direct, T, K, directAllReduce)     \
  RINGO_DIRECT_KERNEL(ringo_##tname##_##opname##_twoshot, T, K, directTwoShot)      \
  RINGO_DIRECT_KERNEL(ringo_##tname##_##opname##_directrs, T, K, directReduceScatter)
#define RINGO_DIRECT_KERNELS_FOR(tname, T) RINGO_FOR_OPS(RINGO_DIRECT_OP_KERNEL, tname, T)
#define RINGO_DIRECT_KERNELS_FOR_INT(tname, T) RINGO_FOR_INT_OPS(RINGO_DIRECT_OP_KERNEL, tname, T)

RINGO_FOR_TYPES(RINGO_DIRECT_KERNELS_FOR, RINGO_DIRECT_KERNELS_FOR_INT)
// As in ring_f8.cu: the 8-bit floats from sm_90 on.
#if !defined(__CUDA_ARCH__) || __CUDA_ARCH__ >= 900
RINGO_FOR_FP8_TYPES(RINGO_DIRECT_KERNELS_FOR)
#endif
