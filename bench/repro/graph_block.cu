// graph_block.cu: which of the driver calls that make and launch a CUDA
// graph of one kernel wait for a kernel already running on the device —
// the hazard for ringo's replays (device/replays.go), whose ranks' kernels
// wait for their peers' launches: a driver call that waits for them, made
// before a peer's launch, never returns.
//
// A kernel spins on stream A until the host sets a flag in mapped memory;
// a watchdog thread sets it after --hold-ms. Meanwhile the main thread
// makes one driver call (the step named) on stream B; its line says how
// long the call took: about --hold-ms means it waited for the spinning
// kernel. Steps, each with a fresh graph:
//   create        cuGraphCreate + cuGraphAddKernelNode
//   instantiate   cuGraphInstantiateWithFlags (flags 0) of a made graph
//   inst-upload   cuGraphInstantiateWithFlags(CUDA_GRAPH_INSTANTIATE_FLAG_UPLOAD
//                 is not in CUDA 11.8's headers): instantiate, then cuGraphUpload on B
//   launch1       the first cuGraphLaunch on B of an instantiated graph
//   launch2       a later cuGraphLaunch on B of the same graph
//   destroy       cuGraphExecDestroy of an instantiated, launched graph
//   kernel        cuLaunchKernel on B (the control: should not wait)
//
// With --pdl 1 a second kernel follows the spinner on stream A, launched
// with programmatic stream serialization (as ringo's since PDL), waiting
// for it at its top (griddepcontrol.wait); with --pdl 2 the spinner
// itself is so launched too, after an empty kernel.
//
// With --block K another thread, from 20 ms after the spinner starts,
// waits for it in a blocking call: 1 cuStreamSynchronize(A), 2
// cuEventSynchronize of an event recorded after it, 3 cuMemcpyDtoHAsync on
// A into pageable memory (synchronous); 4 cuCtxSynchronize.
//
// Build: nvcc -O2 -std=c++17 -arch=sm_90 -lcuda -o build/repro/graph_block bench/repro/graph_block.cu
// Run:   graph_block [--hold-ms 1500]

#include <cuda.h>
#include <cuda_runtime.h>

#include <atomic>
#include <chrono>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <functional>
#include <string>
#include <thread>

__global__ void spinUntil(volatile int* flag) {
  while (*flag == 0) {
  }
}
__global__ void empty(long long) {}
__global__ void awaitPrevious(long long) {
  asm volatile("griddepcontrol.wait;" ::: "memory");
  asm volatile("griddepcontrol.launch_dependents;" ::: "memory");
}

#define CK(x)                                                   \
  do {                                                          \
    CUresult r_ = (x);                                          \
    if (r_ != CUDA_SUCCESS) {                                   \
      fprintf(stderr, "FATAL %s: error %d\n", #x, (int)r_);     \
      exit(1);                                                  \
    }                                                           \
  } while (0)

using Clock = std::chrono::steady_clock;

int main(int argc, char** argv) {
  int holdMs = 1500, pdl = 0, block = 0;
  for (int i = 1; i + 1 < argc; i += 2) {
    if (std::string(argv[i]) == "--hold-ms") holdMs = atoi(argv[i + 1]);
    if (std::string(argv[i]) == "--pdl") pdl = atoi(argv[i + 1]);
    if (std::string(argv[i]) == "--block") block = atoi(argv[i + 1]);
  }
  cudaSetDevice(0);
  cudaFree(0);
  CUcontext ctx;
  CK(cuCtxGetCurrent(&ctx));
  CUstream a, b;
  CK(cuStreamCreate(&a, CU_STREAM_NON_BLOCKING));
  CK(cuStreamCreate(&b, CU_STREAM_NON_BLOCKING));
  int* hflag;
  cudaHostAlloc(&hflag, 64, cudaHostAllocMapped);
  int* dflag;
  cudaHostGetDevicePointer(&dflag, hflag, 0);
  CUfunction fspin, fempty, fawait;
  cudaGetFuncBySymbol(&fspin, (const void*)spinUntil);
  cudaGetFuncBySymbol(&fempty, (const void*)empty);
  cudaGetFuncBySymbol(&fawait, (const void*)awaitPrevious);
  long long arg = 7;
  void* params[1] = {&arg};
  CUlaunchAttribute attr;
  memset(&attr, 0, sizeof(attr));
  attr.id = CU_LAUNCH_ATTRIBUTE_PROGRAMMATIC_STREAM_SERIALIZATION;
  attr.value.programmaticStreamSerializationAllowed = 1;
  auto launchPDL = [&](CUfunction f, unsigned threads, void** p) {
    CUlaunchConfig cfg;
    memset(&cfg, 0, sizeof(cfg));
    cfg.gridDimX = 1, cfg.gridDimY = 1, cfg.gridDimZ = 1;
    cfg.blockDimX = threads, cfg.blockDimY = 1, cfg.blockDimZ = 1;
    cfg.hStream = a, cfg.attrs = &attr, cfg.numAttrs = 1;
    CK(cuLaunchKernelEx(&cfg, f, p, 0));
  };
  // spin launches the spinner on a, as --pdl says.
  auto spin = [&] {
    void* sp[1] = {&dflag};
    if (pdl == 2) {
      CK(cuLaunchKernel(fempty, 1, 1, 1, 32, 1, 1, 0, a, params, 0));
      launchPDL(fspin, 32, sp);
    } else {
      CK(cuLaunchKernel(fspin, 1, 1, 1, 32, 1, 1, 0, a, sp, 0));
    }
    if (pdl >= 1) launchPDL(fawait, 32, params);
  };
  printf("CONFIG pdl=%d block=%d hold-ms=%d\n", pdl, block, holdMs);
  CUevent after;
  CK(cuEventCreate(&after, CU_EVENT_DISABLE_TIMING));
  CUdeviceptr scratch;
  CK(cuMemAlloc(&scratch, 1 << 20));
  static char pageable[1 << 20];
  // blocker waits for the spinner on a, as --block says (on its own thread).
  auto blocker = [&] {
    CK(cuCtxSetCurrent(ctx));
    std::this_thread::sleep_for(std::chrono::milliseconds(20));
    switch (block) {
      case 1: CK(cuStreamSynchronize(a)); break;
      case 2: CK(cuEventSynchronize(after)); break;
      case 3: CK(cuMemcpyDtoHAsync(pageable, scratch, sizeof(pageable), a)); break;
      case 4: CK(cuCtxSynchronize()); break;
    }
  };

  auto makeGraph = [&](CUgraph* g) {
    CK(cuGraphCreate(g, 0));
    CUDA_KERNEL_NODE_PARAMS kp;
    memset(&kp, 0, sizeof(kp));
    kp.func = fempty, kp.gridDimX = 1, kp.gridDimY = 1, kp.gridDimZ = 1;
    kp.blockDimX = 32, kp.blockDimY = 1, kp.blockDimZ = 1, kp.kernelParams = params;
    CUgraphNode node;
    CK(cuGraphAddKernelNode(&node, *g, nullptr, 0, &kp));
  };
  // step runs prep outside the hold, then call while the spinner runs.
  auto step = [&](const char* name, const std::function<void()>& prep, const std::function<void()>& call) {
    prep();
    CK(cuStreamSynchronize(b));
    *(volatile int*)hflag = 0;
    spin();
    CK(cuEventRecord(after, a));
    std::thread blk;
    if (block) blk = std::thread(blocker);
    std::this_thread::sleep_for(std::chrono::milliseconds(50));  // the spinner is running
    std::atomic<bool> released{false};
    std::thread dog([&] {
      std::this_thread::sleep_for(std::chrono::milliseconds(holdMs));
      released = true;
      *(volatile int*)hflag = 1;
    });
    auto t0 = Clock::now();
    call();
    double ms = std::chrono::duration<double, std::milli>(Clock::now() - t0).count();
    bool waited = released.load();
    dog.join();
    if (blk.joinable()) blk.join();
    CK(cuStreamSynchronize(a));
    CK(cuStreamSynchronize(b));
    printf("RESULT %-12s %9.3f ms  %s\n", name, ms, waited ? "WAITED for the running kernel" : "returned while it ran");
    fflush(stdout);
  };
  CUgraph g = nullptr;
  CUgraphExec e = nullptr;
  step("kernel", [] {}, [&] { CK(cuLaunchKernel(fempty, 1, 1, 1, 32, 1, 1, 0, b, params, 0)); });
  step("create", [] {}, [&] { makeGraph(&g); });
  step("instantiate", [] {}, [&] { CK(cuGraphInstantiateWithFlags(&e, g, 0)); });
  step("launch1", [] {}, [&] { CK(cuGraphLaunch(e, b)); });
  step("launch2", [] {}, [&] { CK(cuGraphLaunch(e, b)); });
  step("destroy", [] {}, [&] { CK(cuGraphExecDestroy(e)); });
  CUgraphExec e2 = nullptr;
  step("inst-upload", [] {}, [&] {
    CK(cuGraphInstantiateWithFlags(&e2, g, 0));
    CK(cuGraphUpload(e2, b));
  });
  step("launch-upl", [] {}, [&] { CK(cuGraphLaunch(e2, b)); });
  // Made while nothing runs, launched while the spinner does.
  CUgraphExec e3 = nullptr;
  step("launch-fresh", [&] { CK(cuGraphInstantiateWithFlags(&e3, g, 0)); }, [&] { CK(cuGraphLaunch(e3, b)); });
  CUgraphExec e4 = nullptr;
  step("launch-upl0", [&] {
    CK(cuGraphInstantiateWithFlags(&e4, g, 0));
    CK(cuGraphUpload(e4, b));
  }, [&] { CK(cuGraphLaunch(e4, b)); });
  // The same again from a second thread while the main thread's call is blocked? Control only:
  // a plain kernel launch from another thread while an instantiate waits.
  {
    CUgraphExec e5 = nullptr;
    *(volatile int*)hflag = 0;
    spin();
    CK(cuEventRecord(after, a));
    std::thread blk;
    if (block) blk = std::thread(blocker);
    std::this_thread::sleep_for(std::chrono::milliseconds(50));
    std::atomic<double> other{-1};
    std::thread t([&] {
      CK(cuCtxSetCurrent(ctx));
      std::this_thread::sleep_for(std::chrono::milliseconds(100));  // while the main thread instantiates
      auto t0 = Clock::now();
      CK(cuLaunchKernel(fempty, 1, 1, 1, 32, 1, 1, 0, b, params, 0));
      other = std::chrono::duration<double, std::milli>(Clock::now() - t0).count();
    });
    std::thread dog([&] {
      std::this_thread::sleep_for(std::chrono::milliseconds(holdMs));
      *(volatile int*)hflag = 1;
    });
    auto t0 = Clock::now();
    CK(cuGraphInstantiateWithFlags(&e5, g, 0));
    double ms = std::chrono::duration<double, std::milli>(Clock::now() - t0).count();
    t.join();
    dog.join();
    if (blk.joinable()) blk.join();
    CK(cuCtxSynchronize());
    printf("RESULT %-12s %9.3f ms instantiate, %9.3f ms another thread's kernel launch meanwhile\n", "inst+launch", ms, other.load());
  }
  return 0;
}
