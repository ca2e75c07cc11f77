// launch_cost.cu: what launching one kernel costs the host on this machine,
// in C, without Go or ringo: the floor under a collective's host side
// (issue 22's "host side of a call <= 2 us").
//
// Every figure is host nanoseconds per launch (or per driver call), the
// median of --reps repetitions. Each repetition launches --n kernels in
// bursts of --burst, synchronising the stream between bursts outside the
// timed part, so the launch queue never fills and the GPU's own pace does
// not throttle the host. One line per configuration:
//
//   rt          cudaLaunchKernel (the runtime's <<<>>>), 4 pointer-sized parameters
//   drv         cuLaunchKernel, 4 parameters
//   drv16       cuLaunchKernel, 16 parameters (ringo's largest)
//   ctx         cuCtxSetCurrent + cuLaunchKernel (ringo's Launch)
//   watch       ctx + cuStreamIsCapturing + launch + cuEventRecord (ringo's LaunchWatched)
//   order       watch + cuStreamWaitEvent + a second cuEventRecord (with an Order)
//   graph       cuGraphLaunch of a one-kernel graph
//   iscapturing cuStreamIsCapturing alone
//   record      cuEventRecord alone (an event without timing)
//   waitevent   cuStreamWaitEvent alone
//   writevalue  cuStreamWriteValue32 alone (a stream memory operation)
//   waitvalue   cuStreamWaitValue32 alone, on a value already there
//   write+wait  the two: what a call costs that a persistent kernel runs,
//               stream-ordered (the stream tells the kernel it reached the
//               call, then waits for the kernel's answer), launching nothing
//   2thr        two threads, each ctx-launching on its own stream at once: per launch of one thread
//   2thr-step   the same in lockstep: a thread launches call n once the other's launch n-1 returned
//               (what ringo's launch order asks of two ranks of one GPU): per call
//   1thr-2      one thread launching on two streams in turn (nccl-tests' -g 2): per pair
//   pdl         watch, the launch by cuLaunchKernelEx with programmatic stream
//               serialization (ringo's launch since PDL)
//   gwatch      watch with the launch replaced by cuGraphLaunch of a one-kernel graph
//               (what a call would cost that replays a cached graph of its kernel)
//   query       cuStreamQuery alone, on an idle stream
//   query-busy  cuStreamQuery alone, on a stream whose kernel still runs
//   greplay     gwatch with cuStreamQuery first (the replays tried on 2026-12-04 and
//               not kept: BENCHMARKS "Replays of a call's launch")
//   2thr-step-g 2thr-step with graph launches
//   1thr-2-g    1thr-2 with graph launches
//   e2e-*       a launch and cuStreamSynchronize, one after the other: host ns a
//               round trip (drv, pdl, graph)
//   gap-*       --spin-ns kernels queued back to back (the GPU's pace, not the host's):
//               GPU ns from one kernel's end to the next one's end beyond the spin,
//               measured by events around 1000 launches (drv, pdl, graph)
//
// Build: nvcc -O2 -std=c++17 -arch=sm_90 -lcuda -o build/repro/launch_cost bench/repro/launch_cost.cu
// Run:   launch_cost [--n 20000] [--burst 256] [--reps 5] [--grid 1] [--block 544] [--spin-ns 5000]

#include <cuda.h>
#include <cuda_runtime.h>

#include <algorithm>
#include <atomic>
#include <chrono>
#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <functional>
#include <string>
#include <thread>
#include <vector>

__global__ void empty4(const void*, void*, long long, float) {}
__global__ void empty16(long long, long long, long long, long long, long long, long long, long long, long long, long long,
                        long long, long long, long long, long long, long long, long long, long long) {}

// spin runs for about ns nanoseconds of the GPU's global timer, waiting
// first for the kernel before it on the stream where launched with
// programmatic stream serialization (a no-op otherwise), and letting the
// next one launch at its end.
__global__ void spin(long long ns) {
  asm volatile("griddepcontrol.wait;" ::: "memory");
  unsigned long long t0, t;
  asm volatile("mov.u64 %0, %%globaltimer;" : "=l"(t0));
  do {
    asm volatile("mov.u64 %0, %%globaltimer;" : "=l"(t));
  } while ((long long)(t - t0) < ns);
  asm volatile("griddepcontrol.launch_dependents;" ::: "memory");
}

static void die(const char* what, int code) {
  fprintf(stderr, "FATAL %s: error %d\n", what, code);
  exit(1);
}
#define CK(x)                              \
  do {                                     \
    CUresult r_ = (x);                     \
    if (r_ != CUDA_SUCCESS) die(#x, r_);   \
  } while (0)
#define RT(x)                              \
  do {                                     \
    cudaError_t e_ = (x);                  \
    if (e_ != cudaSuccess) die(#x, e_);    \
  } while (0)

using Clock = std::chrono::steady_clock;

struct Opts {
  int n = 20000, burst = 256, reps = 5, grid = 1, block = 544, spinNs = 5000;
};

static double median(std::vector<double> v) {
  std::sort(v.begin(), v.end());
  return v[v.size() / 2];
}

// timed runs one(i) for i in [0, n) in bursts, syncing sync() between
// bursts outside the timed part; it returns the median over reps of host
// ns per call of one.
static double timed(const Opts& o, const std::function<void(int)>& one, const std::function<void()>& sync) {
  std::vector<double> per;
  for (int rep = 0; rep < o.reps; rep++) {
    double ns = 0;
    for (int done = 0; done < o.n; done += o.burst) {
      int k = std::min(o.burst, o.n - done);
      auto t0 = Clock::now();
      for (int i = 0; i < k; i++) one(done + i);
      ns += std::chrono::duration<double, std::nano>(Clock::now() - t0).count();
      sync();
    }
    per.push_back(ns / o.n);
  }
  return median(per);
}

int main(int argc, char** argv) {
  Opts o;
  for (int i = 1; i + 1 < argc; i += 2) {
    std::string a = argv[i];
    int v = atoi(argv[i + 1]);
    if (a == "--n") o.n = v;
    else if (a == "--burst") o.burst = v;
    else if (a == "--reps") o.reps = v;
    else if (a == "--grid") o.grid = v;
    else if (a == "--block") o.block = v;
    else if (a == "--spin-ns") o.spinNs = v;
    else {
      fprintf(stderr, "unknown flag %s\n", a.c_str());
      return 2;
    }
  }
  if (o.n < 1 || o.burst < 1 || o.reps < 1 || o.grid < 1 || o.block < 1 || o.block > 1024) {
    fprintf(stderr, "flags out of range\n");
    return 2;
  }
  RT(cudaSetDevice(0));
  RT(cudaFree(0));  // the primary context, current on this thread
  CUcontext ctx;
  CK(cuCtxGetCurrent(&ctx));
  CUfunction f4, f16;
  RT(cudaGetFuncBySymbol(&f4, (const void*)empty4));
  RT(cudaGetFuncBySymbol(&f16, (const void*)empty16));
  CUstream s[2];
  for (auto& x : s) CK(cuStreamCreate(&x, CU_STREAM_NON_BLOCKING));
  CUevent done, mark, after;
  CK(cuEventCreate(&done, CU_EVENT_DISABLE_TIMING));
  CK(cuEventCreate(&mark, CU_EVENT_DISABLE_TIMING));
  CK(cuEventCreate(&after, CU_EVENT_DISABLE_TIMING));
  CK(cuEventRecord(after, s[1]));

  uint64_t args[16] = {};
  void* p4[4] = {&args[0], &args[1], &args[2], &args[3]};
  void* p16[16];
  for (int i = 0; i < 16; i++) p16[i] = &args[i];
  const unsigned g = o.grid, b = o.block;
  auto launch = [&](CUfunction f, void** p, CUstream st) { CK(cuLaunchKernel(f, g, 1, 1, b, 1, 1, 0, st, p, 0)); };
  auto sync0 = [&] { CK(cuStreamSynchronize(s[0])); };
  auto sync01 = [&] {
    CK(cuStreamSynchronize(s[0]));
    CK(cuStreamSynchronize(s[1]));
  };

  // Warm up every path once.
  for (int i = 0; i < 1000; i++) launch(f4, p4, s[0]);
  sync0();

  printf("CONFIG n=%d burst=%d reps=%d grid=%d block=%d\n", o.n, o.burst, o.reps, o.grid, o.block);
  auto report = [](const char* name, double ns, const char* unit) { printf("RESULT %-12s %8.0f ns %s\n", name, ns, unit); };

  report("rt", timed(o, [&](int) { empty4<<<g, b, 0, (cudaStream_t)s[0]>>>(nullptr, nullptr, 0, 1.0f); }, sync0), "per launch");
  report("drv", timed(o, [&](int) { launch(f4, p4, s[0]); }, sync0), "per launch");
  report("drv16", timed(o, [&](int) { launch(f16, p16, s[0]); }, sync0), "per launch");
  report("ctx", timed(o, [&](int) {
           CK(cuCtxSetCurrent(ctx));
           launch(f4, p4, s[0]);
         }, sync0), "per launch");
  auto watched = [&](bool order) {
    CK(cuCtxSetCurrent(ctx));
    CUstreamCaptureStatus st;
    CK(cuStreamIsCapturing(s[0], &st));
    if (order) CK(cuStreamWaitEvent(s[0], after, 0));
    launch(f4, p4, s[0]);
    CK(cuEventRecord(done, s[0]));
    if (order) CK(cuEventRecord(mark, s[0]));
  };
  report("watch", timed(o, [&](int) { watched(false); }, sync0), "per launch");
  report("order", timed(o, [&](int) { watched(true); }, sync0), "per launch");

  {
    CUgraph gr;
    CUgraphExec ge;
    CK(cuStreamBeginCapture(s[0], CU_STREAM_CAPTURE_MODE_RELAXED));
    launch(f4, p4, s[0]);
    CK(cuStreamEndCapture(s[0], &gr));
    CK(cuGraphInstantiateWithFlags(&ge, gr, 0));
    report("graph", timed(o, [&](int) { CK(cuGraphLaunch(ge, s[0])); }, sync0), "per replay");
    CK(cuGraphExecDestroy(ge));
    CK(cuGraphDestroy(gr));
  }

  report("iscapturing", timed(o, [&](int) {
           CUstreamCaptureStatus st;
           CK(cuStreamIsCapturing(s[0], &st));
         }, sync0), "per call");
  report("record", timed(o, [&](int) { CK(cuEventRecord(done, s[0])); }, sync0), "per call");
  report("waitevent", timed(o, [&](int) { CK(cuStreamWaitEvent(s[0], after, 0)); }, sync0), "per call");
  {
    CUdeviceptr flag;  // word 0 written, word 1 (0) waited for
    CK(cuMemAlloc(&flag, 64));
    CK(cuMemsetD32(flag, 0, 16));
    CUresult probe = cuStreamWriteValue32(s[0], flag, 0, CU_STREAM_WRITE_VALUE_DEFAULT);
    if (probe != CUDA_SUCCESS) {  // 801: CUDA_ERROR_NOT_SUPPORTED (stream memory operations off)
      const char* name = "";
      cuGetErrorName(probe, &name);
      printf("RESULT %-12s unsupported: error %d (%s)\n", "writevalue", (int)probe, name);
    } else {
    auto write = [&](int i) { CK(cuStreamWriteValue32(s[0], flag, (cuuint32_t)i, CU_STREAM_WRITE_VALUE_DEFAULT)); };
    auto wait = [&] { CK(cuStreamWaitValue32(s[0], flag + 4, 0, CU_STREAM_WAIT_VALUE_GEQ)); };
    report("writevalue", timed(o, write, sync0), "per call");
    report("waitvalue", timed(o, [&](int) { wait(); }, sync0), "per call");
    report("write+wait", timed(o, [&](int i) {
             write(i);
             wait();
           }, sync0), "per call (trigger, then wait for the answer)");
    }
    CK(cuMemFree(flag));
  }

  // Two threads at once, free-running and in lockstep: each bursts n/2
  // launches on its own stream; the figure is host ns per launch of one
  // thread (per call), the median over reps of the slower thread.
  auto twoThreads = [&](bool step, const std::function<void(int)>& one) {
    std::vector<double> per;
    for (int rep = 0; rep < o.reps; rep++) {
      std::atomic<int> launched[2];
      launched[0] = launched[1] = 0;
      std::atomic<int> ready{0};
      double ns[2] = {0, 0};
      int n = o.n / 2;
      auto run = [&](int me) {
        CK(cuCtxSetCurrent(ctx));
        ready++;
        while (ready.load() < 2) {
        }
        auto t0 = Clock::now();
        for (int i = 0; i < n; i++) {
          if (step) {
            while (launched[1 - me].load(std::memory_order_acquire) < i) {
            }
          }
          CK(cuCtxSetCurrent(ctx));
          one(me);
          launched[me].store(i + 1, std::memory_order_release);
          if ((i + 1) % o.burst == 0) CK(cuStreamSynchronize(s[me]));  // keep the queue short (counted in both modes)
        }
        ns[me] = std::chrono::duration<double, std::nano>(Clock::now() - t0).count() / n;
      };
      std::thread t1(run, 1);
      run(0);
      t1.join();
      sync01();
      per.push_back(std::max(ns[0], ns[1]));
    }
    return median(per);
  };
  report("2thr", twoThreads(false, [&](int me) { launch(f4, p4, s[me]); }), "per launch of one thread");
  report("2thr-step", twoThreads(true, [&](int me) { launch(f4, p4, s[me]); }), "per call (both ranks launched)");

  report("1thr-2", timed(o, [&](int) {
           CK(cuCtxSetCurrent(ctx));
           launch(f4, p4, s[0]);
           CK(cuCtxSetCurrent(ctx));
           launch(f4, p4, s[1]);
         }, sync01), "per pair");

  // A launch with programmatic stream serialization (cuLaunchKernelEx), as
  // ringo's since PDL.
  CUlaunchAttribute attr;
  memset(&attr, 0, sizeof(attr));
  attr.id = CU_LAUNCH_ATTRIBUTE_PROGRAMMATIC_STREAM_SERIALIZATION;
  attr.value.programmaticStreamSerializationAllowed = 1;
  auto launchEx = [&](CUfunction f, unsigned grid, void** p, CUstream st) {
    CUlaunchConfig cfg;
    memset(&cfg, 0, sizeof(cfg));
    cfg.gridDimX = grid, cfg.gridDimY = 1, cfg.gridDimZ = 1;
    cfg.blockDimX = b, cfg.blockDimY = 1, cfg.blockDimZ = 1;
    cfg.hStream = st, cfg.attrs = &attr, cfg.numAttrs = 1;
    CK(cuLaunchKernelEx(&cfg, f, p, 0));
  };
  report("pdl", timed(o, [&](int) {
           CK(cuCtxSetCurrent(ctx));
           CUstreamCaptureStatus st;
           CK(cuStreamIsCapturing(s[0], &st));
           launchEx(f4, g, p4, s[0]);
           CK(cuEventRecord(done, s[0]));
         }, sync0), "per launch");

  // One-kernel graphs, one per stream, built node by node (no capture),
  // as a cache of a call's kernel would build them.
  auto kernelGraph = [&](CUfunction f, unsigned grid, void** p, CUgraphExec* ge) {
    CUgraph gr;
    CK(cuGraphCreate(&gr, 0));
    CUDA_KERNEL_NODE_PARAMS kp;
    memset(&kp, 0, sizeof(kp));
    kp.func = f, kp.gridDimX = grid, kp.gridDimY = 1, kp.gridDimZ = 1;
    kp.blockDimX = b, kp.blockDimY = 1, kp.blockDimZ = 1, kp.kernelParams = p;
    CUgraphNode node;
    CK(cuGraphAddKernelNode(&node, gr, nullptr, 0, &kp));
    CK(cuGraphInstantiateWithFlags(ge, gr, 0));
    CK(cuGraphDestroy(gr));
  };
  {
    CUgraphExec ge[2];
    kernelGraph(f4, g, p4, &ge[0]);
    kernelGraph(f4, g, p4, &ge[1]);
    report("gwatch", timed(o, [&](int) {
             CK(cuCtxSetCurrent(ctx));
             CUstreamCaptureStatus st;
             CK(cuStreamIsCapturing(s[0], &st));
             CK(cuGraphLaunch(ge[0], s[0]));
             CK(cuEventRecord(done, s[0]));
           }, sync0), "per launch");
    report("query", timed(o, [&](int) { cuStreamQuery(s[1]); }, [] {}), "per call");
    report("greplay", timed(o, [&](int) {
             CK(cuCtxSetCurrent(ctx));
             CUstreamCaptureStatus st;
             CK(cuStreamIsCapturing(s[0], &st));
             (void)cuStreamQuery(s[0]);
             CK(cuGraphLaunch(ge[0], s[0]));
             CK(cuEventRecord(done, s[0]));
           }, sync0), "per launch");
    report("2thr-step-g", twoThreads(true, [&](int me) { CK(cuGraphLaunch(ge[me], s[me])); }), "per call (both ranks launched)");
    report("1thr-2-g", timed(o, [&](int) {
             CK(cuCtxSetCurrent(ctx));
             CK(cuGraphLaunch(ge[0], s[0]));
             CK(cuCtxSetCurrent(ctx));
             CK(cuGraphLaunch(ge[1], s[1]));
           }, sync01), "per pair");
    Opts rt = o;
    rt.n = 2000, rt.burst = 1;
    report("e2e-drv", timed(rt, [&](int) {
             launch(f4, p4, s[0]);
             CK(cuStreamSynchronize(s[0]));
           }, [] {}), "per round trip");
    report("e2e-pdl", timed(rt, [&](int) {
             launchEx(f4, g, p4, s[0]);
             CK(cuStreamSynchronize(s[0]));
           }, [] {}), "per round trip");
    report("e2e-graph", timed(rt, [&](int) {
             CK(cuGraphLaunch(ge[0], s[0]));
             CK(cuStreamSynchronize(s[0]));
           }, [] {}), "per round trip");
    for (auto x : ge) CK(cuGraphExecDestroy(x));
  }

  // The GPU's pace: 1000 spin kernels queued back to back, timed by events
  // on the stream; the figure is GPU ns a kernel beyond its spin.
  {
    CUfunction fs;
    RT(cudaGetFuncBySymbol(&fs, (const void*)spin));
    long long spinNs = o.spinNs;
    void* ps[1] = {&spinNs};
    CUgraphExec gs;
    kernelGraph(fs, g, ps, &gs);
    CUevent e0, e1;
    CK(cuEventCreate(&e0, CU_EVENT_DEFAULT));
    CK(cuEventCreate(&e1, CU_EVENT_DEFAULT));
    auto gap = [&](const char* name, const std::function<void()>& one) {
      std::vector<double> per;
      const int k = 1000;
      for (int rep = 0; rep < o.reps; rep++) {
        launch(fs, ps, s[0]);  // a head start: the queue fills behind it
        CK(cuEventRecord(e0, s[0]));
        for (int i = 0; i < k; i++) one();
        CK(cuEventRecord(e1, s[0]));
        CK(cuStreamSynchronize(s[0]));
        float ms = 0;
        CK(cuEventElapsedTime(&ms, e0, e1));
        per.push_back(ms * 1e6 / k - o.spinNs);
      }
      printf("RESULT %-12s %8.0f ns GPU a kernel beyond its %d-ns spin\n", name, median(per), o.spinNs);
    };
    {
      std::vector<double> per;
      for (int rep = 0; rep < o.reps; rep++) {
        long long long_ns = 100000000;  // 0.1 s: busy throughout
        void* pl[1] = {&long_ns};
        launch(fs, pl, s[0]);
        auto t0 = Clock::now();
        for (int i = 0; i < 1000; i++) {
          if (cuStreamQuery(s[0]) != CUDA_ERROR_NOT_READY) die("query-busy: the stream is idle", 0);
        }
        per.push_back(std::chrono::duration<double, std::nano>(Clock::now() - t0).count() / 1000);
        CK(cuStreamSynchronize(s[0]));
      }
      printf("RESULT %-12s %8.0f ns per call\n", "query-busy", median(per));
    }
    gap("gap-drv", [&] { launch(fs, ps, s[0]); });
    gap("gap-pdl", [&] { launchEx(fs, g, ps, s[0]); });
    gap("gap-graph", [&] { CK(cuGraphLaunch(gs, s[0])); });
    CK(cuGraphExecDestroy(gs));
  }
  return 0;
}
