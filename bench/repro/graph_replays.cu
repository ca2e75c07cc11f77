// graph_replays.cu: a standalone model of the CUDA-graph replay hang of
// ringo's direct all-reduce (kernels/src/direct.cu) between ranks of one
// process that share one GPU.
//
// What it models. Each rank has a non-blocking stream in the GPU's primary
// context and a host thread of its own. A "call" is one kernel per rank
// (--blocks blocks of 512 threads) that synchronises with the other ranks'
// kernels of the same call by spinning on flags in device memory, exactly
// as direct.cu's one-shot all-reduce does:
//   enter: epoch e = own[b] + 1, read from the rank's own sync area (so a
//          graph's replays count on);
//   start: thread t < nranks writes this rank's input and output addresses
//          into its slot in rank t's area (relaxed stores), then
//          release-stores e into the slot's first word; then it waits until
//          the slot rank t wrote in this rank's area holds >= e;
//   work:  every rank reads every rank's input (a few floats) and sums;
//   end:   release-store e into rank t's END flag for (b, me); wait until
//          this rank's END flag for (b, t) holds >= e; write the output;
//   exit:  thread 0 writes own[b] = e (a plain store).
// Every spin checks a host-mapped abort flag every 10000 spins, so a hang
// can be stopped. Both (all) ranks' kernels of a call must therefore be
// resident at once.
//
// A trial (like one message size of ringo bench -G, or of the test
// TestGPUDirectAllReduce/graphs) is, on each rank's thread:
//   [--check C rounds of: capture a 1-call graph, instantiate, barrier,
//    launch it, synchronize, destroy it]
//   capture a graph of --calls K calls (relaxed capture mode), instantiate
//   it, barrier across the rank threads, cudaGraphLaunch it --launches L
//   times back to back, cudaStreamSynchronize, destroy it.
// (--check-after runs the check rounds after the timed replays, which is
// the order ringo bench itself uses within one size.) --mode eager makes
// the same kernel launches without graphs.
//
// The main thread is a watchdog: if a trial is not over within --timeout
// seconds it snapshots what every rank's host thread and kernels are doing
// (host-mapped progress records written by the kernels), tries to read the
// sync areas through a copy on a separate non-blocking stream, sets every
// rank's abort flag, waits for the ranks to drain, and prints a HANG line.
// The sync areas are then zeroed (epochs restart from 0) and the next
// trial runs. At the end one RESULT line is printed.
//
// Build: nvcc -O2 -std=c++17 -arch=sm_90 -o build/repro/graph_replays bench/repro/graph_replays.cu
// See README.md beside this file for the flags and the output.

#include <cuda_runtime.h>

#include <atomic>
#include <chrono>
#include <condition_variable>
#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <mutex>
#include <string>
#include <thread>
#include <unistd.h>
#include <vector>

// ---------------------------------------------------------------------------
// Constants and layout: direct.cu's, so the areas look the same.

#define MAXRANKS 8                // RINGO_DIRECT_MAXRANKS
#define MAXBLOCKS 32              // RINGO_DIRECT_MAXBLOCKS
#define THREADS 512               // RINGO_DIRECT_THREADS
#define SPINS_BEFORE_CHECK 10000  // RINGO_SPINS_BEFORE_CHECK
#define PACK 4                    // elements a thread sums at most (bounds --count)

// A rank's sync area in 64-bit words (direct.cu's RINGO_DIRECT_*): the
// blocks' epochs; per block and rank a start slot of SLOT words (epoch,
// input address, operator argument, how, output address, spare); per block
// and rank a mid flag (unused here: two shots) and an end flag.
#define SLOT 8
#define AREA_START MAXBLOCKS
#define AREA_MID (AREA_START + MAXBLOCKS * MAXRANKS * SLOT)
#define AREA_END (AREA_MID + MAXBLOCKS * MAXRANKS)
#define AREA_WORDS (AREA_END + MAXBLOCKS * MAXRANKS)

// ---------------------------------------------------------------------------
// Memory-order helpers, copied from kernels/src/common.cuh.

__device__ __forceinline__ uint64_t ringoLoadAcquire(const uint64_t* p) {
  uint64_t v;
  asm volatile("ld.acquire.sys.global.u64 %0, [%1];" : "=l"(v) : "l"(p) : "memory");
  return v;
}

__device__ __forceinline__ void ringoStoreRelaxed(uint64_t* p, uint64_t v) {
  asm volatile("st.relaxed.sys.global.u64 [%0], %1;" ::"l"(p), "l"(v) : "memory");
}

__device__ __forceinline__ void ringoStoreRelease(uint64_t* p, uint64_t v) {
  asm volatile("st.release.sys.global.u64 [%0], %1;" ::"l"(p), "l"(v) : "memory");
}

__device__ __forceinline__ uint64_t ringoNow() {
  uint64_t t;
  asm volatile("mov.u64 %0, %%globaltimer;" : "=l"(t));
  return t;
}

// ---------------------------------------------------------------------------
// What the kernel sees and what it reports.

// Comm is a rank's view of the communicator (direct.cu's RingoDirect, less
// the ring order and windows): every rank's sync area (area[rank] is its
// own). It lives in device memory, passed by pointer as ringo does.
struct Comm {
  uint64_t* area[MAXRANKS];
  uint32_t rank, nranks;
};

// Progress is one (rank, block)'s record in host-mapped memory, written by
// the block's thread 0 with plain (posted) stores so the host can read it
// while the kernel spins; not in ringo's kernel (--notrace leaves it out).
// Reset by the host before every trial.
struct Progress {
  uint64_t entered;  // epoch of the latest kernel of this block that began
  uint64_t begun;    // kernels of this block begun since the reset
  uint64_t posted;   // epoch of the latest start flag it posted (thread 0's)
  uint64_t started;  // epoch of the latest start that completed (all ranks seen)
  uint64_t done;     // epoch the latest finished kernel wrote into own[b]
  uint64_t aborted;  // kernels of this block that returned on the abort flag
  uint64_t pad[2];
};

// WaitRecord is written, the first time only, by thread t of (rank, block)
// when a wait for rank t ends on the abort flag: which epoch it waited at,
// in which phase, and what it last saw in the flag. Always on.
struct WaitRecord {
  uint64_t valid;
  uint64_t phase;  // 1: start slot, 2: end flag
  uint64_t epoch;  // what it waited for
  uint64_t seen;   // the flag's value when it gave up
};

enum { PhaseStart = 1, PhaseEnd = 2 };

// waitEpoch spins until *p reaches e (direct.cu's); false when the abort
// flag rose first, with *seen the flag's last value.
__device__ __forceinline__ bool waitEpoch(const uint64_t* p, uint64_t e, const volatile uint32_t* abortFlag,
                                          uint64_t* seen) {
  int spins = 0;
  uint64_t v;
  while ((v = ringoLoadAcquire(p)) < e) {
    if (++spins == SPINS_BEFORE_CHECK) {
      if (*abortFlag != 0) {
        *seen = v;
        return false;
      }
      spins = 0;
    }
  }
  return true;
}

__device__ __forceinline__ void recordWait(WaitRecord* w, uint64_t phase, uint64_t e, uint64_t seen) {
  if (*(volatile uint64_t*)&w->valid != 0) return;  // keep the first
  ringoStoreRelaxed(&w->phase, phase);
  ringoStoreRelaxed(&w->epoch, e);
  ringoStoreRelaxed(&w->seen, seen);
  ringoStoreRelease(&w->valid, 1);
}

struct View {
  const float* src[MAXRANKS];
  uint64_t epoch;
  int stopped;
};

// reproAllReduce is the modelled call: direct.cu's directAllReduce with raw
// (same-process) inputs, float sums in rank order, no operator argument.
// prog: this rank's MAXBLOCKS Progress records (null: no tracing); begun:
// this rank's per-block kernel counters in device memory; waits: this
// rank's MAXBLOCKS x MAXRANKS WaitRecords.
__global__ void __launch_bounds__(THREADS)
    reproAllReduce(const Comm* d, const float* in, float* out, uint32_t count, const volatile uint32_t* abortFlag,
                   Progress* prog, uint64_t* begun, WaitRecord* waits) {
  __shared__ View v;
  const int b = blockIdx.x, t = threadIdx.x;
  const int me = d->rank, n = d->nranks;
  uint64_t* own = d->area[me];
  Progress* pr = prog != nullptr ? prog + b : nullptr;

  // Enter (directEnter): the epoch is one past the last in the own area.
  if (t == 0) {
    v.epoch = own[b] + 1;
    v.stopped = 0;
    if (pr != nullptr) {
      const uint64_t k = ++begun[b];
      ringoStoreRelaxed(&pr->entered, v.epoch);
      ringoStoreRelaxed(&pr->begun, k);
    }
  }
  __syncthreads();
  const uint64_t e = v.epoch;

  // This block's share of the elements, as direct.cu cuts the bytes.
  const uint32_t share = (count + gridDim.x - 1) / gridDim.x;
  const uint32_t lo = min((uint32_t)b * share, count), hi = min(lo + share, count);

  // Start (directStart): thread t < n tells rank t where this rank's input
  // and output are, then waits until rank t has told this rank the same.
  if (t < n) {
    uint64_t* slot = d->area[t] + AREA_START + (b * MAXRANKS + me) * SLOT;
    ringoStoreRelaxed(slot + 1, (uint64_t)in);
    ringoStoreRelaxed(slot + 2, 0);  // operator argument
    ringoStoreRelaxed(slot + 3, 0);  // how: RINGO_DIRECT_RAW
    ringoStoreRelaxed(slot + 4, (uint64_t)out);
    ringoStoreRelease(slot, e);
    if (t == 0 && pr != nullptr) ringoStoreRelaxed(&pr->posted, e);
    const uint64_t* mine = own + AREA_START + (b * MAXRANKS + t) * SLOT;
    uint64_t seen = 0;
    if (waitEpoch(mine, e, abortFlag, &seen)) {
      v.src[t] = reinterpret_cast<const float*>(ringoLoadAcquire(mine + 1));
    } else {
      v.stopped = 1;
      recordWait(waits + b * MAXRANKS + t, PhaseStart, e, seen);
    }
  }
  __syncthreads();
  if (v.stopped) {
    if (t == 0 && pr != nullptr) ringoStoreRelaxed(&pr->aborted, *(volatile uint64_t*)&pr->aborted + 1);
    return;
  }
  if (t == 0 && pr != nullptr) ringoStoreRelaxed(&pr->started, e);

  // Work: this thread's elements of every rank's input, summed in rank
  // order, kept in registers until the end flag (the output may be read
  // by no one, but direct.cu writes it only after the end).
  float acc[PACK];
#pragma unroll
  for (int k = 0; k < PACK; k++) {
    const uint32_t i = lo + k * THREADS + t;
    acc[k] = 0.f;
    if (i < hi) {
      for (int q = 0; q < n; q++) acc[k] += __ldcg(v.src[q] + i);
    }
  }

  // End (directFlag with RINGO_DIRECT_END).
  __syncthreads();
  if (t < n) {
    ringoStoreRelease(d->area[t] + AREA_END + b * MAXRANKS + me, e);
    uint64_t seen = 0;
    if (!waitEpoch(own + AREA_END + b * MAXRANKS + t, e, abortFlag, &seen)) {
      v.stopped = 1;
      recordWait(waits + b * MAXRANKS + t, PhaseEnd, e, seen);
    }
  }
  __syncthreads();
  if (v.stopped) {
    if (t == 0 && pr != nullptr) ringoStoreRelaxed(&pr->aborted, *(volatile uint64_t*)&pr->aborted + 1);
    return;
  }

#pragma unroll
  for (int k = 0; k < PACK; k++) {
    const uint32_t i = lo + k * THREADS + t;
    if (i < hi) out[i] = acc[k];
  }
  // Exit: the epoch for the next launch (a plain store, as direct.cu's).
  if (t == 0) {
    own[b] = e;
    if (pr != nullptr) ringoStoreRelaxed(&pr->done, e);
  }
}

// reproTrivial is --prewarm's kernel: no peer, no wait.
__global__ void __launch_bounds__(THREADS) reproTrivial(uint64_t* sink) {
  if (threadIdx.x == 0) sink[blockIdx.x] += 1;
}

// ---------------------------------------------------------------------------
// Host side.

#define CK(call)                                                                                       \
  do {                                                                                                 \
    cudaError_t err_ = (call);                                                                         \
    if (err_ != cudaSuccess) {                                                                         \
      fprintf(stdout, "FATAL %s:%d: %s: %s\n", __FILE__, __LINE__, #call, cudaGetErrorString(err_)); \
      fflush(stdout);                                                                                  \
      _exit(3);                                                                                        \
    }                                                                                                  \
  } while (0)

using Clock = std::chrono::steady_clock;

static double secondsSince(Clock::time_point t0) {
  return std::chrono::duration<double>(Clock::now() - t0).count();
}

struct Options {
  int ranks = 2;
  int calls = 2;
  int launches = 3;
  int trials = 50;
  bool graph = true;
  int check = 2;
  bool checkAfter = false;
  double timeout = 5;
  bool prewarm = false;
  int blocks = 1;
  int count = 7;  // floats a rank (the test's first size)
  bool trace = true;
  int maxHangs = 3;
  double maxSeconds = 60;
  bool verbose = false;
  int gap = 0;  // streams created (and kept, unused) between two ranks' streams
};

static void usage(const char* prog) {
  fprintf(stderr,
          "usage: %s [flags]\n"
          "  --ranks N        ranks (threads, streams) sharing GPU 0 (default 2, at most %d)\n"
          "  --calls K        kernels (calls) captured per graph (default 2)\n"
          "  --launches L     replays of that graph back to back (default 3)\n"
          "  --trials T       trials: fresh capture + instantiate each (default 50)\n"
          "  --mode M         graph or eager (default graph)\n"
          "  --check C        rounds of capture 1-call graph, barrier, launch, sync before the\n"
          "                   timed replays of each trial (default 2; 0: none)\n"
          "  --check-after    run the check rounds after the timed replays instead\n"
          "  --timeout S      seconds a trial may take before the abort flag is set (default 5)\n"
          "  --prewarm        first launch a trivial graph 8 times back to back on every rank\n"
          "  --blocks B       blocks per kernel (default 1, at most %d)\n"
          "  --count E        floats a rank reduces (default 7, at most blocks*%d)\n"
          "  --notrace        no host-mapped progress records from the kernels\n"
          "  --max-hangs H    stop after H hung trials (default 3)\n"
          "  --max-seconds M  start no trial that could end after M seconds (default 60)\n"
          "  --verbose        a line per trial\n"
          "  --gap S          create S streams, each used by one kernel, between two ranks'\n"
          "                   streams (default 0): with streams given hardware queues in turn,\n"
          "                   the ranks share one when S+1 is a multiple of the queues' number\n",
          prog, MAXRANKS, MAXBLOCKS, THREADS * PACK);
}

static Options parse(int argc, char** argv) {
  Options o;
  for (int i = 1; i < argc; i++) {
    const std::string a = argv[i];
    auto val = [&]() -> const char* {
      if (i + 1 >= argc) {
        fprintf(stderr, "%s needs a value\n", a.c_str());
        usage(argv[0]);
        exit(2);
      }
      return argv[++i];
    };
    if (a == "--ranks") o.ranks = atoi(val());
    else if (a == "--calls") o.calls = atoi(val());
    else if (a == "--launches") o.launches = atoi(val());
    else if (a == "--trials") o.trials = atoi(val());
    else if (a == "--mode") {
      const std::string m = val();
      if (m != "graph" && m != "eager") {
        fprintf(stderr, "--mode: graph or eager, not %s\n", m.c_str());
        exit(2);
      }
      o.graph = m == "graph";
    } else if (a == "--check") o.check = atoi(val());
    else if (a == "--check-after") o.checkAfter = true;
    else if (a == "--timeout") o.timeout = atof(val());
    else if (a == "--prewarm") o.prewarm = true;
    else if (a == "--gap") o.gap = atoi(val());
    else if (a == "--blocks") o.blocks = atoi(val());
    else if (a == "--count") o.count = atoi(val());
    else if (a == "--notrace") o.trace = false;
    else if (a == "--max-hangs") o.maxHangs = atoi(val());
    else if (a == "--max-seconds") o.maxSeconds = atof(val());
    else if (a == "--verbose") o.verbose = true;
    else {
      usage(argv[0]);
      exit(a == "-h" || a == "--help" ? 0 : 2);
    }
  }
  if (o.ranks < 1 || o.ranks > MAXRANKS || o.calls < 1 || o.launches < 1 || o.trials < 1 || o.check < 0 ||
      o.timeout <= 0 || o.blocks < 1 || o.blocks > MAXBLOCKS || o.count < 1 ||
      o.count > o.blocks * THREADS * PACK || o.maxHangs < 1 || o.maxSeconds <= 0) {
    fprintf(stderr, "bad flags\n");
    usage(argv[0]);
    exit(2);
  }
  return o;
}

// Barrier is a reusable barrier of the rank threads (the test's host
// barrier across ranks).
class Barrier {
 public:
  explicit Barrier(int n) : n_(n) {}
  void wait() {
    std::unique_lock<std::mutex> l(m_);
    const uint64_t gen = gen_;
    if (++count_ == n_) {
      count_ = 0;
      gen_++;
      cv_.notify_all();
    } else {
      cv_.wait(l, [&] { return gen_ != gen; });
    }
  }

 private:
  std::mutex m_;
  std::condition_variable cv_;
  const int n_;
  int count_ = 0;
  uint64_t gen_ = 0;
};

// Where a rank's host thread is, for the hang report.
enum HostPhase {
  HIdle,
  HCheckCapture,
  HCheckBarrier,
  HCheckLaunch,
  HCheckSync,
  HCapture,
  HBarrier,
  HLaunch,
  HSync,
  HDone
};
static const char* hostPhaseName[] = {"idle",    "check-capture", "check-barrier", "check-launch", "check-sync",
                                      "capture", "barrier",       "launch",        "sync",         "done"};

struct Rank {
  int id = 0;
  cudaStream_t stream = nullptr;
  uint64_t* area = nullptr;    // device: sync area, AREA_WORDS words
  Comm* comm = nullptr;        // device: this rank's Comm
  float* in = nullptr;         // device: count floats
  float* out = nullptr;        // device: count floats
  uint64_t* begun = nullptr;   // device: MAXBLOCKS kernel counters
  uint64_t* sink = nullptr;    // device: reproTrivial's counters
  volatile uint32_t* abortHost = nullptr;  // host-mapped abort flag, host view
  uint32_t* abortDev = nullptr;            // the same, device view
  // Host progress, read by the watchdog.
  std::atomic<int> phase{HIdle};
  std::atomic<int> round{0};     // check round (1-based) while in a check phase
  std::atomic<int> launched{0};  // launches made in the current phase
};

struct Shared {
  Options o;
  std::vector<Rank*> ranks;
  Progress* progHost = nullptr;  // [MAXRANKS][MAXBLOCKS], host-mapped
  Progress* progDev = nullptr;
  WaitRecord* waitsHost = nullptr;  // [MAXRANKS][MAXBLOCKS][MAXRANKS], host-mapped
  WaitRecord* waitsDev = nullptr;
  Barrier* barrier = nullptr;
  // Trial completion, for the watchdog.
  std::mutex m;
  std::condition_variable cv;
  int finished = 0;
};

static void launchCall(Shared& s, Rank& r) {
  const Options& o = s.o;
  reproAllReduce<<<o.blocks, THREADS, 0, r.stream>>>(
      r.comm, r.in, r.out, (uint32_t)o.count, r.abortDev, o.trace ? s.progDev + r.id * MAXBLOCKS : nullptr, r.begun,
      s.waitsDev + r.id * MAXBLOCKS * MAXRANKS);
  CK(cudaGetLastError());
}

// capture records calls launches of the call on r's stream into a graph
// and instantiates it as ringo's EndCapture does: the graph itself is
// destroyed at once, and the instantiation runs with this thread's capture
// mode relaxed.
static cudaGraphExec_t capture(Shared& s, Rank& r, int calls) {
  CK(cudaStreamBeginCapture(r.stream, cudaStreamCaptureModeRelaxed));
  for (int k = 0; k < calls; k++) launchCall(s, r);
  cudaGraph_t g = nullptr;
  CK(cudaStreamEndCapture(r.stream, &g));
  cudaStreamCaptureMode mode = cudaStreamCaptureModeRelaxed;
  CK(cudaThreadExchangeStreamCaptureMode(&mode));
  cudaGraphExec_t exec = nullptr;
  CK(cudaGraphInstantiateWithFlags(&exec, g, 0));
  CK(cudaThreadExchangeStreamCaptureMode(&mode));
  CK(cudaGraphDestroy(g));
  return exec;
}

// phaseRun is one "capture, barrier, launch `launches` times, sync" (or
// its eager twin) on rank r's thread.
static void phaseRun(Shared& s, Rank& r, bool check, int calls, int launches) {
  const bool graph = s.o.graph;
  r.launched = 0;
  r.phase = check ? HCheckCapture : HCapture;
  cudaGraphExec_t exec = graph ? capture(s, r, calls) : nullptr;
  r.phase = check ? HCheckBarrier : HBarrier;
  s.barrier->wait();
  r.phase = check ? HCheckLaunch : HLaunch;
  for (int l = 0; l < launches; l++) {
    if (graph) {
      CK(cudaGraphLaunch(exec, r.stream));
    } else {
      for (int k = 0; k < calls; k++) launchCall(s, r);
    }
    r.launched = l + 1;
  }
  r.phase = check ? HCheckSync : HSync;
  CK(cudaStreamSynchronize(r.stream));
  if (graph) CK(cudaGraphExecDestroy(exec));
}

// rankTrial is one trial on rank r's thread.
static void rankTrial(Shared& s, Rank& r) {
  CK(cudaSetDevice(0));  // the primary context
  const Options& o = s.o;
  auto checks = [&] {
    for (int c = 0; c < o.check; c++) {
      r.round = c + 1;
      phaseRun(s, r, true, 1, 1);
    }
    r.round = 0;
  };
  if (!o.checkAfter) checks();
  phaseRun(s, r, false, o.calls, o.launches);
  if (o.checkAfter) checks();
  r.phase = HDone;
  std::lock_guard<std::mutex> l(s.m);
  s.finished++;
  s.cv.notify_all();
}

// prewarm: each rank launches a trivial graph 8 times back to back.
static void rankPrewarm(Shared& s, Rank& r) {
  CK(cudaSetDevice(0));
  CK(cudaStreamBeginCapture(r.stream, cudaStreamCaptureModeRelaxed));
  reproTrivial<<<s.o.blocks, THREADS, 0, r.stream>>>(r.sink);
  CK(cudaGetLastError());
  cudaGraph_t g = nullptr;
  CK(cudaStreamEndCapture(r.stream, &g));
  cudaGraphExec_t exec = nullptr;
  CK(cudaGraphInstantiateWithFlags(&exec, g, 0));
  CK(cudaGraphDestroy(g));
  s.barrier->wait();
  for (int i = 0; i < 8; i++) CK(cudaGraphLaunch(exec, r.stream));
  CK(cudaStreamSynchronize(r.stream));
  CK(cudaGraphExecDestroy(exec));
  s.barrier->wait();
}

// Which launch of the trial epoch e is (base: the epoch before the trial).
static std::string epochLabel(const Options& o, uint64_t e, uint64_t base) {
  char buf[64];
  const long rel = (long)e - (long)base;
  const long timed = (long)o.calls * o.launches;
  if (rel <= 0) return "before-trial";
  long k = rel;
  if (!o.checkAfter) {
    if (k <= o.check) {
      snprintf(buf, sizeof buf, "check%ld", k);
      return buf;
    }
    k -= o.check;
  }
  if (k <= timed) {
    if (o.graph) snprintf(buf, sizeof buf, "replay%ld.call%ld", (k - 1) / o.calls + 1, (k - 1) % o.calls + 1);
    else snprintf(buf, sizeof buf, "launch%ld", k);
    return buf;
  }
  snprintf(buf, sizeof buf, "check%ld", k - timed);
  return buf;
}

static std::string hostState(const Shared& s) {
  std::string out = "host=[";
  for (Rank* r : s.ranks) {
    char buf[96];
    const int ph = r->phase.load();
    if (ph >= HCheckCapture && ph <= HCheckSync)
      snprintf(buf, sizeof buf, "%sr%d:%s%d(%d launched)", r->id ? " " : "", r->id, hostPhaseName[ph], r->round.load(),
               r->launched.load());
    else
      snprintf(buf, sizeof buf, "%sr%d:%s(%d launched)", r->id ? " " : "", r->id, hostPhaseName[ph],
               r->launched.load());
    out += buf;
  }
  return out + "]";
}

// kernelState reads the Progress records: per rank and block, whether a
// kernel is in flight (entered > done) and at which epoch, or idle.
static std::string kernelState(const Shared& s, uint64_t base) {
  const Options& o = s.o;
  if (!o.trace) return "kernels=untraced";
  std::string out = "kernels=[";
  for (int r = 0; r < o.ranks; r++) {
    for (int b = 0; b < o.blocks; b++) {
      const volatile Progress* p = s.progHost + r * MAXBLOCKS + b;
      const uint64_t entered = p->entered, done = p->done, posted = p->posted, started = p->started;
      const uint64_t begun = p->begun, aborted = p->aborted;
      char buf[256];
      if (entered > done && aborted == 0)
        snprintf(buf, sizeof buf, "r%db%d:in-kernel e=%llu(%s) posted=%llu started=%llu done=%llu begun=%llu", r, b,
                 (unsigned long long)entered, epochLabel(o, entered, base).c_str(), (unsigned long long)posted,
                 (unsigned long long)started, (unsigned long long)done, (unsigned long long)begun);
      else
        snprintf(buf, sizeof buf, "r%db%d:%s entered=%llu done=%llu next=%llu(%s) begun=%llu aborted=%llu", r, b,
                 entered > done ? "aborted" : "idle", (unsigned long long)entered, (unsigned long long)done,
                 (unsigned long long)(done + 1), epochLabel(o, done + 1, base).c_str(), (unsigned long long)begun,
                 (unsigned long long)aborted);
      out += (r || b) ? " | " : "";
      out += buf;
    }
  }
  return out + "]";
}

// areaState formats copies of the areas (MAXRANKS x AREA_WORDS words):
// per rank and block its epoch word, the start epochs each rank posted in
// its area, and the end flags.
static std::string areaState(const Options& o, const uint64_t* words, const char* name) {
  std::string out = std::string(name) + "=[";
  for (int r = 0; r < o.ranks; r++) {
    const uint64_t* a = words + (size_t)r * AREA_WORDS;
    for (int b = 0; b < o.blocks; b++) {
      char buf[64];
      snprintf(buf, sizeof buf, "%sr%db%d own=%llu start<-[", (r || b) ? " | " : "", r, b,
               (unsigned long long)a[b]);
      out += buf;
      for (int t = 0; t < o.ranks; t++) {
        snprintf(buf, sizeof buf, "%s%llu", t ? "," : "",
                 (unsigned long long)a[AREA_START + (b * MAXRANKS + t) * SLOT]);
        out += buf;
      }
      out += "] end<-[";
      for (int t = 0; t < o.ranks; t++) {
        snprintf(buf, sizeof buf, "%s%llu", t ? "," : "", (unsigned long long)a[AREA_END + b * MAXRANKS + t]);
        out += buf;
      }
      out += "]";
    }
  }
  return out + "]";
}

// waitState lists the WaitRecords: which rank's block waited, at which
// epoch and phase, for which rank, having seen what.
static std::string waitState(const Shared& s, uint64_t base) {
  const Options& o = s.o;
  std::string out = "waits=[";
  bool any = false;
  for (int r = 0; r < o.ranks; r++)
    for (int b = 0; b < o.blocks; b++)
      for (int t = 0; t < o.ranks; t++) {
        const volatile WaitRecord* w = s.waitsHost + (r * MAXBLOCKS + b) * MAXRANKS + t;
        if (w->valid == 0) continue;
        char buf[160];
        snprintf(buf, sizeof buf, "%sr%db%d e=%llu(%s) %s<-r%d saw=%llu", any ? " | " : "", r, b,
                 (unsigned long long)w->epoch, epochLabel(o, w->epoch, base).c_str(),
                 w->phase == PhaseStart ? "start" : "end", t, (unsigned long long)w->seen);
        out += buf;
        any = true;
      }
  return out + "]";
}

// probeAreas copies every rank's area to dst on the probe stream while
// the ranks' kernels may still spin; false if the copy did not finish
// within the given seconds (then it may land later: the caller syncs the
// device before reusing dst).
static bool probeAreas(const Shared& s, cudaStream_t probe, uint64_t* dst, double seconds) {
  for (Rank* r : s.ranks)
    CK(cudaMemcpyAsync(dst + (size_t)r->id * AREA_WORDS, r->area, AREA_WORDS * 8, cudaMemcpyDeviceToHost, probe));
  const auto t0 = Clock::now();
  for (;;) {
    const cudaError_t q = cudaStreamQuery(probe);
    if (q == cudaSuccess) return true;
    if (q != cudaErrorNotReady) CK(q);
    if (secondsSince(t0) > seconds) return false;
    std::this_thread::sleep_for(std::chrono::milliseconds(1));
  }
}

// printResult prints the summary line; trials is the number of trials run.
static void printResult(const Options& o, int trials, int hangs, int firstHang, double seconds) {
  printf("RESULT mode=%s ranks=%d calls=%d launches=%d trials=%d check=%d prewarm=%d blocks=%d gap=%d hangs=%d "
         "first_hang_trial=%d seconds=%.1f\n",
         o.graph ? "graph" : "eager", o.ranks, o.calls, o.launches, trials, o.check, o.prewarm ? 1 : 0, o.blocks, o.gap,
         hangs, firstHang, seconds);
}

int main(int argc, char** argv) {
  const auto t0 = Clock::now();
  // The hardware queues of the context: ringo's internal/cuda/queues sets
  // 32 unless the environment says otherwise. Before any CUDA call.
  const char* env = getenv("CUDA_DEVICE_MAX_CONNECTIONS");
  const bool fromEnv = env != nullptr && env[0] != 0;
  if (!fromEnv) setenv("CUDA_DEVICE_MAX_CONNECTIONS", "32", 1);
  Shared s;
  s.o = parse(argc, argv);
  const Options& o = s.o;
  setvbuf(stdout, nullptr, _IOLBF, 0);

  CK(cudaSetDevice(0));
  CK(cudaFree(nullptr));  // makes the primary context
  cudaDeviceProp prop;
  CK(cudaGetDeviceProperties(&prop, 0));
  int driver = 0, runtime = 0;
  CK(cudaDriverGetVersion(&driver));
  CK(cudaRuntimeGetVersion(&runtime));
  printf("CONFIG CUDA_DEVICE_MAX_CONNECTIONS=%s (%s) device=\"%s\" sms=%d driver=%d runtime=%d\n",
         getenv("CUDA_DEVICE_MAX_CONNECTIONS"), fromEnv ? "from the environment" : "set by graph_replays",
         prop.name, prop.multiProcessorCount, driver, runtime);

  // Host-mapped records and per-rank memory.
  CK(cudaHostAlloc((void**)&s.progHost, sizeof(Progress) * MAXRANKS * MAXBLOCKS,
                   cudaHostAllocMapped | cudaHostAllocPortable));
  CK(cudaHostGetDevicePointer((void**)&s.progDev, s.progHost, 0));
  CK(cudaHostAlloc((void**)&s.waitsHost, sizeof(WaitRecord) * MAXRANKS * MAXBLOCKS * MAXRANKS,
                   cudaHostAllocMapped | cudaHostAllocPortable));
  CK(cudaHostGetDevicePointer((void**)&s.waitsDev, s.waitsHost, 0));
  memset(s.progHost, 0, sizeof(Progress) * MAXRANKS * MAXBLOCKS);
  memset(s.waitsHost, 0, sizeof(WaitRecord) * MAXRANKS * MAXBLOCKS * MAXRANKS);

  uint64_t* gapSink = nullptr;  // what the gap streams' kernels write
  CK(cudaMalloc(&gapSink, 8));
  std::vector<Rank> ranks(o.ranks);
  for (int r = 0; r < o.ranks; r++) {
    Rank& k = ranks[r];
    k.id = r;
    s.ranks.push_back(&k);
    for (int i = 0; r > 0 && i < o.gap; i++) {  // used once (a queue may be given at first use), never destroyed
      cudaStream_t unused;
      CK(cudaStreamCreateWithFlags(&unused, cudaStreamNonBlocking));
      reproTrivial<<<1, 32, 0, unused>>>(gapSink);
      CK(cudaGetLastError());
      CK(cudaStreamSynchronize(unused));
    }
    CK(cudaStreamCreateWithFlags(&k.stream, cudaStreamNonBlocking));
    CK(cudaMalloc(&k.area, AREA_WORDS * 8));  // its own allocation, as ringo's AllocZeroed
    CK(cudaMemset(k.area, 0, AREA_WORDS * 8));
    CK(cudaMalloc(&k.comm, sizeof(Comm)));
    CK(cudaMalloc(&k.in, sizeof(float) * o.count));
    CK(cudaMalloc(&k.out, sizeof(float) * o.count));
    CK(cudaMalloc(&k.begun, 8 * MAXBLOCKS));
    CK(cudaMemset(k.begun, 0, 8 * MAXBLOCKS));
    CK(cudaMalloc(&k.sink, 8 * MAXBLOCKS));
    CK(cudaMemset(k.sink, 0, 8 * MAXBLOCKS));
    uint32_t* flag = nullptr;
    CK(cudaHostAlloc((void**)&flag, 64, cudaHostAllocMapped | cudaHostAllocPortable));
    *flag = 0;
    k.abortHost = flag;
    CK(cudaHostGetDevicePointer((void**)&k.abortDev, flag, 0));
    // Rank r's input: (r+1) * (i%7 + 1), so the sum is n(n+1)/2 * (i%7 + 1).
    std::vector<float> in(o.count);
    for (int i = 0; i < o.count; i++) in[i] = (float)((r + 1) * (i % 7 + 1));
    CK(cudaMemcpy(k.in, in.data(), sizeof(float) * o.count, cudaMemcpyHostToDevice));
  }
  for (int r = 0; r < o.ranks; r++) {
    Comm c = {};
    for (int q = 0; q < o.ranks; q++) c.area[q] = ranks[q].area;
    c.rank = r;
    c.nranks = o.ranks;
    CK(cudaMemcpy(ranks[r].comm, &c, sizeof c, cudaMemcpyHostToDevice));
  }
  cudaStream_t probe = nullptr;
  CK(cudaStreamCreateWithFlags(&probe, cudaStreamNonBlocking));
  uint64_t* probeBuf = nullptr;  // pinned: MAXRANKS areas
  CK(cudaMallocHost((void**)&probeBuf, (size_t)MAXRANKS * AREA_WORDS * 8));
  CK(cudaDeviceSynchronize());
  Barrier barrier(o.ranks);
  s.barrier = &barrier;

  if (o.prewarm) {
    std::vector<std::thread> th;
    for (Rank* r : s.ranks) th.emplace_back(rankPrewarm, std::ref(s), std::ref(*r));
    for (auto& t : th) t.join();
  }

  const uint64_t perTrial = (uint64_t)o.check + (uint64_t)o.calls * o.launches;  // epochs a trial adds
  const double recoverSeconds = 3;  // how long the ranks may take to drain after the abort
  uint64_t base = 0;                // every block's epoch before the trial
  int hangs = 0, firstHang = -1, run = 0, wrongTrials = 0;
  std::string stopped;
  std::vector<float> out(o.count);

  for (int trial = 0; trial < o.trials; trial++) {
    if (hangs >= o.maxHangs) {
      stopped = "max-hangs";
      break;
    }
    if (secondsSince(t0) + o.timeout + 1.5 > o.maxSeconds) {
      stopped = "max-seconds";
      break;
    }
    // Fresh records for this trial (the GPU is idle).
    memset(s.progHost, 0, sizeof(Progress) * MAXRANKS * MAXBLOCKS);
    memset(s.waitsHost, 0, sizeof(WaitRecord) * MAXRANKS * MAXBLOCKS * MAXRANKS);
    for (Rank* r : s.ranks) {
      CK(cudaMemset(r->out, 0, sizeof(float) * o.count));
      CK(cudaMemset(r->begun, 0, 8 * MAXBLOCKS));
      r->phase = HIdle;
      r->round = 0;
      r->launched = 0;
    }
    CK(cudaDeviceSynchronize());
    s.finished = 0;
    run++;

    const auto start = Clock::now();
    std::vector<std::thread> th;
    for (Rank* r : s.ranks) th.emplace_back(rankTrial, std::ref(s), std::ref(*r));
    bool done;
    {
      std::unique_lock<std::mutex> l(s.m);
      done = s.cv.wait_until(l, start + std::chrono::duration<double>(o.timeout),
                             [&] { return s.finished == o.ranks; });
    }
    if (!done) {
      // A hang: what the ranks are doing now, before anything disturbs it.
      const double at = secondsSince(start);
      const std::string host = hostState(s), kernels = kernelState(s, base);
      const bool probed = probeAreas(s, probe, probeBuf, 0.5);
      const std::string areas = probed ? areaState(o, probeBuf, "areas") : "areas=probe-copy-unfinished";
      const std::string kernelsAfterProbe = kernelState(s, base);
      // Stop every rank's kernels.
      for (Rank* r : s.ranks) *r->abortHost = 1;
      std::atomic_thread_fence(std::memory_order_seq_cst);
      bool recovered;
      {
        std::unique_lock<std::mutex> l(s.m);
        recovered = s.cv.wait_for(l, std::chrono::duration<double>(recoverSeconds),
                                  [&] { return s.finished == o.ranks; });
      }
      hangs++;
      if (firstHang < 0) firstHang = trial;
      char head[128];
      snprintf(head, sizeof head, "HANG trial=%d at=%.1fs epoch_base=%llu", trial, at, (unsigned long long)base);
      std::string line = std::string(head) + " " + host + " " + kernels;
      if (kernelsAfterProbe != kernels) line += " after_probe:" + kernelsAfterProbe;
      line += " " + areas + " " + waitState(s, base) + (recovered ? " recovered=1" : " recovered=0");
      if (!recovered) {
        // Ranks still stuck after the abort: nothing more to learn safely.
        printf("%s now:%s\n", line.c_str(), hostState(s).c_str());
        printf("STOPPED reason=unrecovered trial=%d\n", trial);
        printResult(o, run, hangs, firstHang, secondsSince(t0));
        fflush(stdout);
        _exit(4);
      }
      for (auto& t : th) t.join();
      // The areas once every kernel has returned, then the reset: every
      // area zeroed, epochs from 0 again, the flags down.
      CK(cudaDeviceSynchronize());
      for (Rank* r : s.ranks)
        CK(cudaMemcpy(probeBuf + (size_t)r->id * AREA_WORDS, r->area, AREA_WORDS * 8, cudaMemcpyDeviceToHost));
      printf("%s %s\n", line.c_str(), areaState(o, probeBuf, "after_abort").c_str());
      for (Rank* r : s.ranks) {
        CK(cudaMemset(r->area, 0, AREA_WORDS * 8));
        *r->abortHost = 0;
      }
      CK(cudaDeviceSynchronize());
      base = 0;
      continue;
    }
    for (auto& t : th) t.join();
    base += perTrial;
    // The output: every rank's sum of every rank's input.
    bool wrong = false;
    for (Rank* r : s.ranks) {
      CK(cudaMemcpy(out.data(), r->out, sizeof(float) * o.count, cudaMemcpyDeviceToHost));
      for (int i = 0; i < o.count && !wrong; i++) {
        const float want = (float)(o.ranks * (o.ranks + 1) / 2 * (i % 7 + 1));
        if (out[i] != want) {
          printf("WRONG trial=%d rank=%d i=%d got=%g want=%g\n", trial, r->id, i, out[i], want);
          wrong = true;
        }
      }
    }
    wrongTrials += wrong;
    if (o.verbose) printf("TRIAL %d ok %.3fs epoch=%llu\n", trial, secondsSince(start), (unsigned long long)base);
  }

  if (!stopped.empty()) printf("STOPPED reason=%s after %d trials\n", stopped.c_str(), run);
  if (wrongTrials) printf("OUTPUT wrong_trials=%d\n", wrongTrials);
  printResult(o, run, hangs, firstHang, secondsSince(t0));
  return 0;
}
