/*
 * gpu_smoke.c — ringo's libnccl.so.2 on real GPUs, through NCCL's C ABI,
 * the way nccl-tests and PyTorch drive it: one thread creating every rank
 * inside a group after "cudaSetDevice" (cuCtxSetCurrent of the device's
 * primary context, which is what cudaSetDevice does), buffers from
 * ncclMemAlloc, collectives enqueued rank after rank inside a group without
 * changing device, ncclCommGetAsyncError polled while waiting, PreMulSum,
 * point-to-point (sends and receives in nested groups, in place, on two
 * streams, outside groups; ncclAlltoAll, ncclGather and ncclScatter, in
 * place and not), ncclCommSplit, and a second communicator made by one
 * thread per rank.
 *
 * Build (here) and run (on the GPU machine):
 *   gcc -std=c11 -O1 -I include capi/testdata/gpu_smoke.c -o build/lib/gpu_smoke \
 *       -L build/lib -l:libnccl.so.2 -lcuda -lpthread
 *   LD_LIBRARY_PATH=build/lib build/lib/gpu_smoke [ranks]
 * Prints "gpu_smoke: OK" and exits 0; exits 77 without a GPU; otherwise
 * names the failed check and exits 1. Rank r runs on GPU r mod the GPU
 * count (default: one rank per GPU), so ranks beyond the GPUs share them.
 */
#include <cuda.h>
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "nccl.h"

#define MAXR 8
#define COUNT 1000003 /* odd, larger than one slice */

static int nranks, devs[MAXR];
static CUcontext ctxs[MAXR]; /* primary context of rank r's device */

static void die(const char* file, int line, const char* what) {
  fprintf(stderr, "gpu_smoke: %s:%d: %s\n", file, line, what);
  exit(1);
}

#define CU(x)                                                          \
  do {                                                                 \
    CUresult r_ = (x);                                                 \
    if (r_ != CUDA_SUCCESS) {                                          \
      const char* s_ = "?";                                            \
      cuGetErrorName(r_, &s_);                                         \
      fprintf(stderr, "gpu_smoke: %s:%d: %s: %s\n", __FILE__, __LINE__, #x, s_); \
      exit(1);                                                         \
    }                                                                  \
  } while (0)

#define NC(x)                                                                                   \
  do {                                                                                          \
    ncclResult_t r_ = (x);                                                                      \
    if (r_ != ncclSuccess) {                                                                    \
      fprintf(stderr, "gpu_smoke: %s:%d: %s: %s / %s\n", __FILE__, __LINE__, #x,                 \
              ncclGetErrorString(r_), ncclGetLastError(NULL));                                  \
      exit(1);                                                                                  \
    }                                                                                           \
  } while (0)

#define CHECK(c) \
  do {           \
    if (!(c)) die(__FILE__, __LINE__, #c); \
  } while (0)

/* setDevice is cudaSetDevice(devs[r]). */
static void setDevice(int r) { CU(cuCtxSetCurrent(ctxs[r])); }

static void put(int r, void* dst, const float* src, size_t n) {
  setDevice(r);
  CU(cuMemcpyHtoD((CUdeviceptr)dst, src, n * sizeof(float)));
}

static void get(int r, float* dst, const void* src, size_t n) {
  setDevice(r);
  CU(cuMemcpyDtoH(dst, (CUdeviceptr)src, n * sizeof(float)));
}

/* waitAll polls each stream as nccl-tests' completeColl does, checking
 * ncclCommGetAsyncError meanwhile. */
static void waitAll(ncclComm_t* comms, CUstream* streams, int n) {
  for (int r = 0; r < n; r++) {
    for (;;) {
      CUresult q = cuStreamQuery(streams[r]);
      if (q == CUDA_SUCCESS) break;
      if (q != CUDA_ERROR_NOT_READY) CU(q);
      ncclResult_t async;
      NC(ncclCommGetAsyncError(comms[r], &async));
      if (async != ncclSuccess) {
        fprintf(stderr, "gpu_smoke: rank %d async error %s: %s\n", r, ncclGetErrorString(async), ncclGetLastError(NULL));
        exit(1);
      }
    }
  }
}

static int close_to(float a, float b) { return a == b; }

/* val is element i of what rank r sends to rank p (p2p checks). */
static float val(int r, int p, size_t i) { return (float)(r * 10000 + p * 1000 + (int)(i % 997)); }

/* fill puts val(r, p, i) for p's block of n elements, each p, into buf of
 * rank r (blocks for every p < np, p = 0 alone when np is 1). */
static void fill(int r, void* buf, size_t n, int np, float* host) {
  for (int p = 0; p < np; p++)
    for (size_t i = 0; i < n; i++) host[(size_t)p * n + i] = val(r, np == 1 ? 0 : p, i);
  put(r, buf, host, n * np);
}

/* expect checks that rank r's buf holds, block after block, n elements of
 * val(from(p), to(p), i) for each block p < np. */
static void expectBlocks(int line, int r, void* buf, size_t n, int np, int (*from)(int r, int p), int (*to)(int r, int p), float* out) {
  get(r, out, buf, n * np);
  for (int p = 0; p < np; p++)
    for (size_t i = 0; i < n; i++)
      if (!close_to(out[(size_t)p * n + i], val(from(r, p), to(r, p), i))) {
        fprintf(stderr, "gpu_smoke: line %d: rank %d block %d element %zu = %g, want %g\n", line, r, p, i, out[(size_t)p * n + i],
                val(from(r, p), to(r, p), i));
        exit(1);
      }
}

static int prevRank(int r, int p) { (void)p; return (r + nranks - 1) % nranks; }
static int zero(int r, int p) { (void)r, (void)p; return 0; }
static int blockRank(int r, int p) { (void)r; return p; }
static int sameRank(int r, int p) { (void)p; return r; }

/* p2p checks sends and receives, and the collectives made of them. */
static void p2p(ncclComm_t* comms, CUstream* streams, void** send, void** recv, float* host, float* out) {
  const size_t n = COUNT / 4 + 1; /* per peer: every rank's blocks fit a buffer of COUNT*nranks */

  /* nccl-tests' sendrecv_perf with -g: a group per rank inside one group;
   * rank r sends to r+1 and receives from r-1. */
  for (int r = 0; r < nranks; r++) fill(r, send[r], n, 1, host);
  NC(ncclGroupStart());
  for (int r = 0; r < nranks; r++) {
    NC(ncclGroupStart());
    NC(ncclSend(send[r], n, ncclFloat, (r + 1) % nranks, comms[r], streams[r]));
    NC(ncclRecv(recv[r], n, ncclFloat, (r + nranks - 1) % nranks, comms[r], streams[r]));
    NC(ncclGroupEnd());
  }
  NC(ncclGroupEnd());
  waitAll(comms, streams, nranks);
  for (int r = 0; r < nranks; r++) expectBlocks(__LINE__, r, recv[r], n, 1, prevRank, zero, out);

  /* The same in place: one buffer sent and received into. */
  for (int r = 0; r < nranks; r++) fill(r, recv[r], n, 1, host);
  NC(ncclGroupStart());
  for (int r = 0; r < nranks; r++) {
    NC(ncclSend(recv[r], n, ncclFloat, (r + 1) % nranks, comms[r], streams[r]));
    NC(ncclRecv(recv[r], n, ncclFloat, (r + nranks - 1) % nranks, comms[r], streams[r]));
  }
  NC(ncclGroupEnd());
  waitAll(comms, streams, nranks);
  for (int r = 0; r < nranks; r++) expectBlocks(__LINE__, r, recv[r], n, 1, prevRank, zero, out);

  /* A rank's receive on a second stream: the library joins the two. */
  CUstream second[MAXR];
  for (int r = 0; r < nranks; r++) {
    setDevice(r);
    CU(cuStreamCreate(&second[r], CU_STREAM_NON_BLOCKING));
    fill(r, send[r], n, 1, host);
  }
  NC(ncclGroupStart());
  for (int r = 0; r < nranks; r++) {
    NC(ncclSend(send[r], n, ncclFloat, (r + 1) % nranks, comms[r], streams[r]));
    NC(ncclRecv(recv[r], n, ncclFloat, (r + nranks - 1) % nranks, comms[r], second[r]));
  }
  NC(ncclGroupEnd());
  for (int r = 0; r < nranks; r++) {
    setDevice(r);
    CU(cuStreamSynchronize(second[r])); /* waits for the launch on streams[r] too */
    expectBlocks(__LINE__, r, recv[r], n, 1, prevRank, zero, out);
    CU(cuStreamSynchronize(streams[r]));
    CU(cuStreamDestroy(second[r]));
  }

  /* Outside any group, once connected: each call enqueues and returns. */
  if (nranks > 1) {
    fill(0, send[0], n, 1, host);
    NC(ncclSend(send[0], n, ncclFloat, 1, comms[0], streams[0]));
    NC(ncclRecv(recv[1], n, ncclFloat, 0, comms[1], streams[1]));
    waitAll(comms, streams, 2);
    expectBlocks(__LINE__, 1, recv[1], n, 1, prevRank, zero, out);
  }

  /* ncclAlltoAll, then in place. */
  for (int r = 0; r < nranks; r++) fill(r, send[r], n, nranks, host);
  NC(ncclGroupStart());
  for (int r = 0; r < nranks; r++) NC(ncclAlltoAll(send[r], recv[r], n, ncclFloat, comms[r], streams[r]));
  NC(ncclGroupEnd());
  waitAll(comms, streams, nranks);
  for (int r = 0; r < nranks; r++) expectBlocks(__LINE__, r, recv[r], n, nranks, blockRank, sameRank, out);
  for (int r = 0; r < nranks; r++) fill(r, recv[r], n, nranks, host);
  NC(ncclGroupStart());
  for (int r = 0; r < nranks; r++) NC(ncclAlltoAll(recv[r], recv[r], n, ncclFloat, comms[r], streams[r]));
  NC(ncclGroupEnd());
  waitAll(comms, streams, nranks);
  for (int r = 0; r < nranks; r++) expectBlocks(__LINE__, r, recv[r], n, nranks, blockRank, sameRank, out);

  /* ncclGather to rank 0, out of place and in place (sendbuff = recvbuff +
   * rank 0's block). */
  for (int inPlace = 0; inPlace < 2; inPlace++) {
    for (int r = 0; r < nranks; r++) {
      void* sb = (inPlace && r == 0) ? recv[0] : send[r];
      fill(r, sb, n, 1, host);
    }
    NC(ncclGroupStart());
    for (int r = 0; r < nranks; r++) NC(ncclGather((inPlace && r == 0) ? recv[0] : send[r], recv[r], n, ncclFloat, 0, comms[r], streams[r]));
    NC(ncclGroupEnd());
    waitAll(comms, streams, nranks);
    expectBlocks(__LINE__, 0, recv[0], n, nranks, blockRank, zero, out);
  }

  /* ncclScatter from rank 0, out of place and in place (recvbuff = sendbuff
   * + rank 0's block). */
  for (int inPlace = 0; inPlace < 2; inPlace++) {
    fill(0, send[0], n, nranks, host);
    NC(ncclGroupStart());
    for (int r = 0; r < nranks; r++) NC(ncclScatter(send[r], (inPlace && r == 0) ? send[0] : recv[r], n, ncclFloat, 0, comms[r], streams[r]));
    NC(ncclGroupEnd());
    waitAll(comms, streams, nranks);
    for (int r = 0; r < nranks; r++) {
      get(r, out, (inPlace && r == 0) ? send[0] : recv[r], n);
      for (size_t i = 0; i < n; i++) CHECK(close_to(out[i], val(0, r, i)));
    }
  }
  printf("gpu_smoke: point-to-point OK\n");
}

static ncclUniqueId threadId;
static ncclComm_t threadComms[MAXR];
static void* threadInit(void* arg) {
  int r = (int)(size_t)arg;
  setDevice(r);
  NC(ncclCommInitRank(&threadComms[r], nranks, threadId, r)); /* blocks until every rank has called */
  return NULL;
}

int main(int argc, char** argv) {
  int ngpu = 0;
  if (cuInit(0) != CUDA_SUCCESS || cuDeviceGetCount(&ngpu) != CUDA_SUCCESS || ngpu < 1) {
    printf("gpu_smoke: no GPU, skipped\n");
    return 77;
  }
  nranks = argc > 1 ? atoi(argv[1]) : ngpu;
  if (nranks < 1 || nranks > MAXR) nranks = ngpu < MAXR ? ngpu : MAXR;
  for (int r = 0; r < nranks; r++) {
    devs[r] = r % ngpu;
    CUdevice d;
    CU(cuDeviceGet(&d, devs[r]));
    CU(cuDevicePrimaryCtxRetain(&ctxs[r], d));
  }
  printf("gpu_smoke: %d ranks on %d GPUs\n", nranks, ngpu);

  int version = 0;
  NC(ncclGetVersion(&version));
  CHECK(version == NCCL_VERSION_CODE);

  /* Communicators: nccl-tests' initComms. */
  ncclUniqueId id;
  NC(ncclGetUniqueId(&id));
  ncclComm_t comms[MAXR];
  ncclConfig_t config = NCCL_CONFIG_INITIALIZER;
  config.CTAPolicy = NCCL_CTA_POLICY_DEFAULT;
  NC(ncclGroupStart());
  for (int r = 0; r < nranks; r++) {
    setDevice(r);
    NC(ncclCommInitRankConfig(comms + r, nranks, id, r, &config));
    CHECK(comms[r] != NULL);
  }
  NC(ncclGroupEnd());
  for (int r = 0; r < nranks; r++) {
    int v;
    NC(ncclCommCount(comms[r], &v));
    CHECK(v == nranks);
    NC(ncclCommUserRank(comms[r], &v));
    CHECK(v == r);
    NC(ncclCommCuDevice(comms[r], &v));
    CHECK(v == devs[r]);
  }

  /* Buffers and streams. */
  CUstream streams[MAXR];
  void *send[MAXR], *recv[MAXR];
  const size_t big = (size_t)COUNT * nranks;
  NC(ncclGroupStart());
  for (int r = 0; r < nranks; r++) {
    setDevice(r);
    CU(cuStreamCreate(&streams[r], CU_STREAM_NON_BLOCKING));
    NC(ncclMemAlloc(&send[r], big * sizeof(float)));
    NC(ncclMemAlloc(&recv[r], big * sizeof(float)));
  }
  NC(ncclGroupEnd());
  float* host = malloc(big * sizeof(float));
  float* out = malloc(big * sizeof(float));
  CHECK(host && out);
  const float tri = (float)(nranks * (nranks + 1) / 2);

  /* AllReduce sum, launched without changing device; the caller's current
   * context must survive. */
  for (int r = 0; r < nranks; r++) {
    for (size_t i = 0; i < COUNT; i++) host[i] = (float)((r + 1) * (int)(i % 7));
    put(r, send[r], host, COUNT);
  }
  setDevice(0);
  NC(ncclGroupStart());
  for (int r = 0; r < nranks; r++) NC(ncclAllReduce(send[r], recv[r], COUNT, ncclFloat, ncclSum, comms[r], streams[r]));
  NC(ncclGroupEnd());
  CUcontext now = NULL;
  CU(cuCtxGetCurrent(&now));
  CHECK(now == ctxs[0]); /* the library restored the caller's context */
  waitAll(comms, streams, nranks);
  for (int r = 0; r < nranks; r++) {
    get(r, out, recv[r], COUNT);
    for (size_t i = 0; i < COUNT; i++) CHECK(close_to(out[i], tri * (float)(i % 7)));
  }

  /* PreMulSum: each rank scales by r+1, in place; ops made and destroyed
   * around the launch as nccl-tests does. */
  for (int r = 0; r < nranks; r++) {
    for (size_t i = 0; i < COUNT; i++) host[i] = (float)(i % 5);
    put(r, recv[r], host, COUNT);
  }
  NC(ncclGroupStart());
  for (int r = 0; r < nranks; r++) {
    ncclRedOp_t op;
    float scalar = (float)(r + 1);
    NC(ncclRedOpCreatePreMulSum(&op, &scalar, ncclFloat, ncclScalarHostImmediate, comms[r]));
    CHECK(op >= ncclNumOps);
    NC(ncclAllReduce(recv[r], recv[r], COUNT, ncclFloat, op, comms[r], streams[r]));
    NC(ncclRedOpDestroy(op, comms[r]));
  }
  NC(ncclGroupEnd());
  waitAll(comms, streams, nranks);
  for (int r = 0; r < nranks; r++) {
    get(r, out, recv[r], COUNT);
    for (size_t i = 0; i < COUNT; i++) CHECK(close_to(out[i], tri * (float)(i % 5)));
  }

  /* ncclBcast (in place) from the last rank, on the NULL (legacy) stream —
   * ranks that share a GPU each on a stream of their own instead: on one
   * stream their kernels would wait for each other (ringo refuses that). */
  const int root = nranks - 1;
  for (int r = 0; r < nranks; r++) {
    for (size_t i = 0; i < COUNT; i++) host[i] = r == root ? (float)(100 + i % 1000) : -1.0f;
    put(r, recv[r], host, COUNT);
  }
  NC(ncclGroupStart());
  for (int r = 0; r < nranks; r++) NC(ncclBcast(recv[r], COUNT, ncclFloat, root, comms[r], nranks > ngpu ? streams[r] : NULL));
  NC(ncclGroupEnd());
  for (int r = 0; r < nranks; r++) {
    setDevice(r);
    CU(cuCtxSynchronize());
    get(r, out, recv[r], COUNT);
    for (size_t i = 0; i < COUNT; i++) CHECK(close_to(out[i], (float)(100 + i % 1000)));
  }

  /* AllGather and ReduceScatter. */
  for (int r = 0; r < nranks; r++) {
    for (size_t i = 0; i < COUNT; i++) host[i] = (float)(r * 1000 + (int)(i % 999));
    put(r, send[r], host, COUNT);
  }
  NC(ncclGroupStart());
  for (int r = 0; r < nranks; r++) NC(ncclAllGather(send[r], recv[r], COUNT, ncclFloat, comms[r], streams[r]));
  NC(ncclGroupEnd());
  waitAll(comms, streams, nranks);
  for (int r = 0; r < nranks; r++) {
    get(r, out, recv[r], big);
    for (int p = 0; p < nranks; p++)
      for (size_t i = 0; i < COUNT; i++) CHECK(close_to(out[(size_t)p * COUNT + i], (float)(p * 1000 + (int)(i % 999))));
  }
  for (int r = 0; r < nranks; r++) {
    for (size_t i = 0; i < big; i++) host[i] = (float)(r + (int)(i % 11));
    put(r, send[r], host, big);
  }
  NC(ncclGroupStart());
  for (int r = 0; r < nranks; r++) NC(ncclReduceScatter(send[r], recv[r], COUNT, ncclFloat, ncclSum, comms[r], streams[r]));
  NC(ncclGroupEnd());
  waitAll(comms, streams, nranks);
  for (int r = 0; r < nranks; r++) {
    get(r, out, recv[r], COUNT);
    for (size_t i = 0; i < COUNT; i++) {
      float want = (float)(nranks * (nranks - 1) / 2 + nranks * (int)(((size_t)r * COUNT + i) % 11));
      CHECK(close_to(out[i], want));
    }
  }

  /* Reduce to rank 0. */
  NC(ncclGroupStart());
  for (int r = 0; r < nranks; r++) NC(ncclReduce(send[r], recv[r], COUNT, ncclFloat, ncclSum, 0, comms[r], streams[r]));
  NC(ncclGroupEnd());
  waitAll(comms, streams, nranks);
  get(0, out, recv[0], COUNT);
  for (size_t i = 0; i < COUNT; i++) CHECK(close_to(out[i], (float)(nranks * (nranks - 1) / 2 + nranks * (int)(i % 11))));

  p2p(comms, streams, send, recv, host, out);

  /* ncclCommSplit: even and odd ranks, reversed by key; the last rank
   * (when there are three or more) stays out. */
  ncclComm_t kids[MAXR];
  NC(ncclGroupStart());
  for (int r = 0; r < nranks; r++) {
    int color = (nranks >= 3 && r == nranks - 1) ? NCCL_SPLIT_NOCOLOR : r % 2;
    NC(ncclCommSplit(comms[r], color, -r, &kids[r], NULL));
  }
  NC(ncclGroupEnd());
  for (int r = 0; r < nranks; r++) {
    if (nranks >= 3 && r == nranks - 1) {
      CHECK(kids[r] == NULL);
      continue;
    }
    int members = 0, myrank = 0, got;
    for (int p = 0; p < nranks; p++) {
      if ((nranks >= 3 && p == nranks - 1) || p % 2 != r % 2) continue;
      members++;
      if (p > r) myrank++; /* key -p: higher parent ranks first */
    }
    NC(ncclCommCount(kids[r], &got));
    CHECK(got == members);
    NC(ncclCommUserRank(kids[r], &got));
    CHECK(got == myrank);
  }
  for (int r = 0; r < nranks; r++) {
    for (size_t i = 0; i < COUNT; i++) host[i] = 1.0f;
    put(r, send[r], host, COUNT);
  }
  NC(ncclGroupStart());
  for (int r = 0; r < nranks; r++)
    if (kids[r]) NC(ncclAllReduce(send[r], recv[r], COUNT, ncclFloat, ncclSum, kids[r], streams[r]));
  NC(ncclGroupEnd());
  for (int r = 0; r < nranks; r++) {
    if (!kids[r]) continue;
    setDevice(r);
    CU(cuStreamSynchronize(streams[r]));
    int members;
    NC(ncclCommCount(kids[r], &members));
    get(r, out, recv[r], COUNT);
    for (size_t i = 0; i < COUNT; i++) CHECK(close_to(out[i], (float)members));
  }
  for (int r = 0; r < nranks; r++) NC(ncclCommDestroy(kids[r])); /* NULL for NOCOLOR: a no-op */

  /* One thread per rank, blocking ncclCommInitRank. */
  NC(ncclGetUniqueId(&threadId));
  pthread_t th[MAXR];
  for (int r = 0; r < nranks; r++) CHECK(pthread_create(&th[r], NULL, threadInit, (void*)(size_t)r) == 0);
  for (int r = 0; r < nranks; r++) CHECK(pthread_join(th[r], NULL) == 0);
  for (size_t i = 0; i < COUNT; i++) host[i] = 2.0f;
  for (int r = 0; r < nranks; r++) put(r, send[r], host, COUNT);
  for (int r = 0; r < nranks; r++) NC(ncclAllReduce(send[r], recv[r], COUNT, ncclFloat, ncclMax, threadComms[r], streams[r]));
  waitAll(threadComms, streams, nranks);
  for (int r = 0; r < nranks; r++) {
    get(r, out, recv[r], COUNT);
    for (size_t i = 0; i < COUNT; i++) CHECK(close_to(out[i], 2.0f));
    NC(ncclCommAbort(threadComms[r]));
  }

  /* Teardown. */
  for (int r = 0; r < nranks; r++) {
    ncclResult_t async;
    NC(ncclCommGetAsyncError(comms[r], &async));
    CHECK(async == ncclSuccess);
    NC(ncclCommFinalize(comms[r]));
    NC(ncclCommDestroy(comms[r]));
    CHECK(ncclCommDestroy(comms[r]) == ncclInvalidArgument); /* destroyed twice */
    setDevice(r);
    CU(cuStreamDestroy(streams[r]));
    NC(ncclMemFree(send[r]));
    NC(ncclMemFree(recv[r]));
  }
  free(host);
  free(out);
  printf("gpu_smoke: OK\n");
  return 0;
}
