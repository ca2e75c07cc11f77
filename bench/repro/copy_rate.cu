// copy_rate.cu: how fast can blocks copy device memory on one GPU, two
// copies at once (two ranks' sends sharing the GPU), by access pattern?
// A question behind issue 20's "send/recv >= 90 % of the GPU's copy from
// 64 MiB": ringo's direct send gives each channel (block) one contiguous
// part of the message; cudaMemcpyAsync is the reference.
//
//   nvcc -O3 -std=c++17 -arch=sm_90 -o copy_rate copy_rate.cu
//   ./copy_rate [iterations]
//
// Each line: a pattern, the bytes of each copy, blocks per copy, and the
// two copies' bytes over the wall time of ITER rounds (GB/s), where a
// round is both streams' copies and (coupled) each stream waiting for the
// other's copy of the round before its next, as two ranks' send/recvs do.
#include <cuda_runtime.h>

#include <chrono>
#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <cstring>

#define CHECK(x)                                                                     \
  do {                                                                               \
    cudaError_t e_ = (x);                                                            \
    if (e_ != cudaSuccess) {                                                         \
      fprintf(stderr, "%s:%d %s: %s\n", __FILE__, __LINE__, #x, cudaGetErrorString(e_)); \
      exit(1);                                                                       \
    }                                                                                \
  } while (0)

constexpr int kWorkers = 512;  // as RINGO_NWORKERS
constexpr int kThreads = kWorkers + 32;
constexpr int kU = 8;  // packs in flight a thread, as copy.cuh's one-source moves

// movePacks copies npacks 16-byte packs from s to d with kWorkers threads,
// kU packs in flight a thread, as copy.cuh's reduceCopy does.
__device__ __forceinline__ void movePacks(const uint4* s, uint4* d, int64_t npacks, int64_t stride) {
  const int tid = threadIdx.x;
  int64_t p = tid;
  for (; p + (kU - 1) * (int64_t)kWorkers < npacks; p += kU * (int64_t)kWorkers) {
    uint4 v[kU];
#pragma unroll
    for (int u = 0; u < kU; u++) v[u] = s[(p + u * kWorkers) * stride];
#pragma unroll
    for (int u = 0; u < kU; u++) d[(p + u * kWorkers) * stride] = v[u];
  }
  uint4 v[kU];
#pragma unroll
  for (int u = 0; u < kU; u++)
    if (p + u * kWorkers < npacks) v[u] = s[(p + u * kWorkers) * stride];
#pragma unroll
  for (int u = 0; u < kU; u++)
    if (p + u * kWorkers < npacks) d[(p + u * kWorkers) * stride] = v[u];
}

// contig: block b copies the b-th of gridDim.x contiguous parts (ringo's
// direct send: a channel's part in one piece).
__global__ void __launch_bounds__(kThreads) contig(const char* src, char* dst, int64_t bytes) {
  if (threadIdx.x >= kWorkers) return;
  const int64_t part = bytes / gridDim.x / 16 * 16, off = part * blockIdx.x;  // the tail past G parts: not copied
  movePacks((const uint4*)(src + off), (uint4*)(dst + off), part / 16, 1);
}

// tiles: block b copies tiles b, b+G, … of tile bytes.
__global__ void __launch_bounds__(kThreads) tiles(const char* src, char* dst, int64_t bytes, int64_t tile) {
  if (threadIdx.x >= kWorkers) return;
  for (int64_t off = tile * blockIdx.x; off < bytes; off += tile * gridDim.x)
    movePacks((const uint4*)(src + off), (uint4*)(dst + off), min(tile, bytes - off) / 16, 1);
}

// fine: grid-stride over packs, every block's threads side by side.
__global__ void __launch_bounds__(kThreads) fine(const char* src, char* dst, int64_t bytes) {
  if (threadIdx.x >= kWorkers) return;
  const int64_t npacks = bytes / 16, step = (int64_t)gridDim.x * kWorkers;
  const uint4* s = (const uint4*)src;
  uint4* d = (uint4*)dst;
  int64_t p = (int64_t)blockIdx.x * kWorkers + threadIdx.x;
  for (; p + (kU - 1) * step < npacks; p += kU * step) {
    uint4 v[kU];
#pragma unroll
    for (int u = 0; u < kU; u++) v[u] = s[p + u * step];
#pragma unroll
    for (int u = 0; u < kU; u++) d[p + u * step] = v[u];
  }
  for (; p < npacks; p += step) d[p] = s[p];
}

enum Pattern { kMemcpy, kContig, kTiles, kFine };
static const char* names[] = {"memcpy", "contig", "tiles", "fine"};

struct Side {
  cudaStream_t s;
  cudaEvent_t done;
  char *src, *dst;
};

static void launch(Pattern p, Side& x, int64_t bytes, int blocks, int64_t tile) {
  switch (p) {
    case kMemcpy: CHECK(cudaMemcpyAsync(x.dst, x.src, bytes, cudaMemcpyDeviceToDevice, x.s)); break;
    case kContig: contig<<<blocks, kThreads, 0, x.s>>>(x.src, x.dst, bytes); break;
    case kTiles: tiles<<<blocks, kThreads, 0, x.s>>>(x.src, x.dst, bytes, tile); break;
    case kFine: fine<<<blocks, kThreads, 0, x.s>>>(x.src, x.dst, bytes); break;
  }
}

// run times iters rounds of nside copies of bytes each and returns GB/s
// (all sides' bytes over the wall time).
static double run(Side* side, int nside, Pattern p, int64_t bytes, int blocks, int64_t tile, int iters, bool coupled) {
  auto round = [&]() {
    for (int i = 0; i < nside; i++) launch(p, side[i], bytes, blocks, tile);
    for (int i = 0; i < nside; i++) CHECK(cudaEventRecord(side[i].done, side[i].s));
    if (coupled)
      for (int i = 0; i < nside; i++)
        for (int j = 0; j < nside; j++)
          if (i != j) CHECK(cudaStreamWaitEvent(side[i].s, side[j].done, 0));
  };
  for (int w = 0; w < 5; w++) round();
  CHECK(cudaDeviceSynchronize());
  auto t0 = std::chrono::steady_clock::now();
  for (int it = 0; it < iters; it++) round();
  CHECK(cudaDeviceSynchronize());
  double s = std::chrono::duration<double>(std::chrono::steady_clock::now() - t0).count();
  return (double)bytes * nside * iters / s / 1e9;
}

int main(int argc, char** argv) {
  const int iters = argc > 1 ? atoi(argv[1]) : 50;
  const int64_t maxBytes = 1LL << 30;
  Side side[2];
  for (auto& x : side) {
    CHECK(cudaStreamCreateWithFlags(&x.s, cudaStreamNonBlocking));
    CHECK(cudaEventCreateWithFlags(&x.done, cudaEventDisableTiming));
    CHECK(cudaMalloc(&x.src, maxBytes));
    CHECK(cudaMalloc(&x.dst, maxBytes));
    CHECK(cudaMemset(x.src, 1, maxBytes));
    CHECK(cudaMemset(x.dst, 0, maxBytes));
  }
  cudaDeviceProp prop;
  CHECK(cudaGetDeviceProperties(&prop, 0));
  printf("# %s, %d SMs; %d rounds a row; GB/s = both copies' bytes / wall time\n", prop.name, prop.multiProcessorCount,
         iters);
  printf("%-8s %5s %10s %6s %8s %10s %10s\n", "pattern", "sides", "bytes", "blocks", "tile", "coupled", "uncoupled");
  struct Cfg {
    Pattern p;
    int blocks;
    int64_t tile;
  } cfgs[] = {{kMemcpy, 0, 0},       {kContig, 64, 0},       {kContig, 128, 0},      {kTiles, 64, 16 << 10},
              {kTiles, 64, 32 << 10}, {kTiles, 64, 64 << 10}, {kTiles, 64, 128 << 10}, {kTiles, 64, 256 << 10},
              {kTiles, 32, 64 << 10}, {kTiles, 128, 64 << 10}, {kFine, 64, 0},         {kFine, 132, 0}};
  for (int64_t bytes : {64LL << 20, 256LL << 20, 1LL << 30}) {
    for (auto c : cfgs) {
      for (int nside : {1, 2}) {
        if (nside == 1 && c.p != kMemcpy && c.blocks != 132) continue;  // one side: the reference and a full grid
        double co = run(side, nside, c.p, bytes, c.blocks, c.tile, iters, true);
        double un = nside == 2 ? run(side, nside, c.p, bytes, c.blocks, c.tile, iters, false) : co;
        printf("%-8s %5d %10lld %6d %8lld %10.1f %10.1f\n", names[c.p], nside, (long long)bytes, c.blocks,
               (long long)c.tile, co, un);
      }
    }
  }
  // Check the last copy moved the bytes.
  char h[16];
  CHECK(cudaMemcpy(h, side[1].dst + (1LL << 29), 16, cudaMemcpyDeviceToHost));
  printf("# check: %s\n", h[0] == 1 && h[15] == 1 ? "ok" : "WRONG");
  return 0;
}
