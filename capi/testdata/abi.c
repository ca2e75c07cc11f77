/*
 * abi.c — checks ringo's libnccl.so.2 through NCCL's C ABI, as a program
 * built against include/nccl.h sees it, without a GPU. Run by
 * TestCABI (abi_test.go); prints "abi: OK" and exits 0 when every check
 * passes, else names each failed check and exits 1.
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "nccl.h"

/* Exported by ringo (PyTorch 2.11 links against them) but not in NCCL
 * 2.27's nccl.h. */
ncclResult_t ncclDevCommCreate(ncclComm_t comm, const void* reqs, void* outDevComm);
ncclResult_t ncclDevCommDestroy(ncclComm_t comm, const void* devComm);

static int failures;

#define CHECK(cond, ...)                                   \
  do {                                                     \
    if (!(cond)) {                                         \
      failures++;                                          \
      fprintf(stderr, "abi: %s:%d: ", __FILE__, __LINE__); \
      fprintf(stderr, __VA_ARGS__);                        \
      fprintf(stderr, "\n");                               \
    }                                                      \
  } while (0)

/* expect checks that a call returned want and that ncclGetLastError now
 * mentions each of the given words. */
static void expect(const char* what, ncclResult_t got, ncclResult_t want, const char* word1, const char* word2) {
  CHECK(got == want, "%s returned %d (%s), want %d", what, (int)got, ncclGetErrorString(got), (int)want);
  const char* last = ncclGetLastError(NULL);
  CHECK(last != NULL, "%s: ncclGetLastError returned NULL", what);
  if (last == NULL) return;
  if (word1) CHECK(strstr(last, word1) != NULL, "%s: last error \"%s\" does not mention \"%s\"", what, last, word1);
  if (word2) CHECK(strstr(last, word2) != NULL, "%s: last error \"%s\" does not mention \"%s\"", what, last, word2);
}

int main(void) {
  /* Layouts. */
  CHECK(sizeof(ncclConfig_t) == 72, "sizeof(ncclConfig_t) = %zu, want 72", sizeof(ncclConfig_t));
  CHECK(sizeof(ncclUniqueId) == 128, "sizeof(ncclUniqueId) = %zu, want 128", sizeof(ncclUniqueId));

  /* Version. */
  int version = 0;
  CHECK(ncclGetVersion(&version) == ncclSuccess, "ncclGetVersion failed");
  CHECK(version == NCCL_VERSION_CODE, "ncclGetVersion = %d, want NCCL_VERSION_CODE %d", version, NCCL_VERSION_CODE);
  CHECK(version == 22707, "ncclGetVersion = %d, want 22707", version);
  expect("ncclGetVersion(NULL)", ncclGetVersion(NULL), ncclInvalidArgument, "ncclGetVersion", "NULL");

  /* Error strings: NCCL's, for every result. */
  static const char* const want[] = {
      "no error",
      "unhandled cuda error (run with NCCL_DEBUG=INFO for details)",
      "unhandled system error (run with NCCL_DEBUG=INFO for details)",
      "internal error - please report this issue to the NCCL developers",
      "invalid argument (run with NCCL_DEBUG=WARN for details)",
      "invalid usage (run with NCCL_DEBUG=WARN for details)",
      "remote process exited or there was a network error",
      "NCCL operation in progress",
  };
  for (int r = 0; r < ncclNumResults; r++) {
    const char* s = ncclGetErrorString((ncclResult_t)r);
    CHECK(s != NULL && strcmp(s, want[r]) == 0, "ncclGetErrorString(%d) = \"%s\", want \"%s\"", r, s ? s : "(null)", want[r]);
  }
  CHECK(strcmp(ncclGetErrorString(ncclNumResults), "unknown result code") == 0, "ncclGetErrorString(ncclNumResults)");
  CHECK(strcmp(ncclGetErrorString((ncclResult_t)-1), "unknown result code") == 0, "ncclGetErrorString(-1)");

  /* Communicator creation with bad arguments fails before any CUDA. */
  ncclUniqueId id;
  memset(&id, 0, sizeof id);
  ncclComm_t comm = (ncclComm_t)&id; /* must be overwritten with NULL */
  expect("ncclCommInitRank(nranks 0)", ncclCommInitRank(&comm, 0, id, 0), ncclInvalidArgument, "ncclCommInitRank", "nranks");
  CHECK(comm == NULL, "ncclCommInitRank(nranks 0) left *comm = %p, want NULL", (void*)comm);
  const char* held = ncclGetLastError(NULL);
  char copy[1024];
  snprintf(copy, sizeof copy, "%s", held);
  expect("ncclCommInitRank(rank 2 of 2)", ncclCommInitRank(&comm, 2, id, 2), ncclInvalidArgument, "rank 2", NULL);
  CHECK(strcmp(held, copy) == 0, "an earlier ncclGetLastError text changed after one more error: \"%s\"", held);
  expect("ncclCommInitRank(NULL)", ncclCommInitRank(NULL, 1, id, 0), ncclInvalidArgument, "NULL", NULL);
  ncclConfig_t config = NCCL_CONFIG_INITIALIZER;
  config.magic = 0;
  expect("ncclCommInitRankConfig(bad magic)", ncclCommInitRankConfig(&comm, 1, id, 0, &config), ncclInvalidArgument, "magic", NULL);
  config = (ncclConfig_t)NCCL_CONFIG_INITIALIZER;
  config.blocking = 7;
  expect("ncclCommInitRankConfig(blocking 7)", ncclCommInitRankConfig(&comm, 1, id, 0, &config), ncclInvalidArgument, "blocking", NULL);
  expect("ncclCommInitAll(NULL)", ncclCommInitAll(NULL, 1, NULL), ncclInvalidArgument, "ncclCommInitAll", NULL);
  CHECK(ncclCommInitAll(&comm, 0, NULL) == ncclSuccess, "ncclCommInitAll(ndev 0) failed");

  /* Unique ids: a bootstrap root of this process. */
  ncclUniqueId a, b;
  memset(&a, 0, sizeof a);
  memset(&b, 0, sizeof b);
  CHECK(ncclGetUniqueId(&a) == ncclSuccess, "ncclGetUniqueId: %s", ncclGetLastError(NULL));
  CHECK(ncclGetUniqueId(&b) == ncclSuccess, "ncclGetUniqueId: %s", ncclGetLastError(NULL));
  CHECK(memcmp(&a, &b, sizeof a) != 0, "two ncclGetUniqueId calls gave the same id");

  /* Bad handles. */
  int n = -1;
  expect("ncclCommCount(NULL)", ncclCommCount(NULL, &n), ncclInvalidArgument, "ncclCommCount", "NULL");
  expect("ncclCommUserRank(garbage)", ncclCommUserRank((ncclComm_t)&a, &n), ncclInvalidArgument, "not a communicator", NULL);
  ncclResult_t async;
  expect("ncclCommGetAsyncError(NULL)", ncclCommGetAsyncError(NULL, &async), ncclInvalidArgument, "ncclCommGetAsyncError", NULL);
  CHECK(ncclCommDestroy(NULL) == ncclSuccess, "ncclCommDestroy(NULL) is not a no-op, as it is in NCCL");
  CHECK(ncclCommAbort(NULL) == ncclSuccess, "ncclCommAbort(NULL) is not a no-op, as it is in NCCL");
  expect("ncclCommFinalize(NULL)", ncclCommFinalize(NULL), ncclInvalidArgument, "ncclCommFinalize", NULL);

  /* Each collective names itself. */
  float x = 0;
  expect("ncclAllReduce", ncclAllReduce(&x, &x, 1, ncclFloat, ncclSum, NULL, NULL), ncclInvalidArgument, "ncclAllReduce:", NULL);
  expect("ncclReduceScatter", ncclReduceScatter(&x, &x, 1, ncclFloat, ncclSum, NULL, NULL), ncclInvalidArgument, "ncclReduceScatter:", NULL);
  expect("ncclAllGather", ncclAllGather(&x, &x, 1, ncclFloat, NULL, NULL), ncclInvalidArgument, "ncclAllGather:", NULL);
  expect("ncclBroadcast", ncclBroadcast(&x, &x, 1, ncclFloat, 0, NULL, NULL), ncclInvalidArgument, "ncclBroadcast:", NULL);
  expect("ncclBcast", ncclBcast(&x, 1, ncclFloat, 0, NULL, NULL), ncclInvalidArgument, "ncclBcast:", NULL);
  expect("ncclReduce", ncclReduce(&x, &x, 1, ncclFloat, ncclSum, 0, NULL, NULL), ncclInvalidArgument, "ncclReduce:", NULL);
  expect("ncclSend", ncclSend(&x, 1, ncclFloat, 1, NULL, NULL), ncclInvalidArgument, "ncclSend:", "NULL");
  expect("ncclRecv", ncclRecv(&x, 1, ncclFloat, 1, NULL, NULL), ncclInvalidArgument, "ncclRecv:", "NULL");
  expect("ncclAlltoAll", ncclAlltoAll(&x, &x, 1, ncclFloat, NULL, NULL), ncclInvalidArgument, "ncclAlltoAll:", NULL);
  expect("ncclGather", ncclGather(&x, &x, 1, ncclFloat, 0, NULL, NULL), ncclInvalidArgument, "ncclGather:", NULL);
  expect("ncclScatter", ncclScatter(&x, &x, 1, ncclFloat, 0, NULL, NULL), ncclInvalidArgument, "ncclScatter:", NULL);

  /* A bad send in a group fails the group's end too, as in NCCL. */
  CHECK(ncclGroupStart() == ncclSuccess, "ncclGroupStart");
  expect("ncclSend in a group", ncclSend(&x, 1, ncclFloat, 1, NULL, NULL), ncclInvalidArgument, "ncclSend:", NULL);
  expect("its ncclGroupEnd", ncclGroupEnd(), ncclInvalidArgument, "ncclGroupEnd", "ncclSend:");

  /* Shrinking, revoking and growing (NCCL 2.27, 2.29): argument checks. */
  ncclComm_t shrunk = (ncclComm_t)&a;
  expect("ncclCommShrink", ncclCommShrink(NULL, NULL, 0, &shrunk, NULL, NCCL_SHRINK_ABORT), ncclInvalidArgument, "ncclCommShrink", "comm is NULL");
  CHECK(shrunk == NULL, "ncclCommShrink left *newcomm set");
  expect("ncclCommRevoke", ncclCommRevoke(NULL, NCCL_REVOKE_DEFAULT), ncclInvalidArgument, "ncclCommRevoke", "comm is NULL");
  ncclUniqueId gid;
  expect("ncclCommGetUniqueId", ncclCommGetUniqueId(NULL, &gid), ncclInvalidArgument, "ncclCommGetUniqueId", "comm is NULL");
  ncclComm_t grown = (ncclComm_t)&a;
  expect("ncclCommGrow", ncclCommGrow(NULL, 4, NULL, 3, &grown, NULL), ncclInvalidArgument, "ncclCommGrow", "uniqueId is NULL");
  CHECK(grown == NULL, "ncclCommGrow left *newcomm set");

  /* Windows (NCCL 2.27): argument checks. */
  ncclWindow_t win;
  expect("ncclCommWindowRegister", ncclCommWindowRegister(NULL, &x, 4, &win, NCCL_WIN_COLL_SYMMETRIC), ncclInvalidArgument, "ncclCommWindowRegister", "comm is NULL");
  expect("ncclCommWindowDeregister", ncclCommWindowDeregister(NULL, NULL), ncclInvalidArgument, "ncclCommWindowDeregister", "comm is NULL");

  /* Registrations: argument checks (buff and size reach the library). */
  void* reg;
  expect("ncclCommRegister", ncclCommRegister(NULL, &x, 4, &reg), ncclInvalidArgument, "ncclCommRegister", "comm is NULL");
  expect("ncclCommDeregister", ncclCommDeregister(NULL, NULL), ncclInvalidArgument, "ncclCommDeregister", "comm is NULL");

  /* What ringo does not do. */
  ncclSimInfo_t sim = NCCL_SIM_INFO_INITIALIZER;
  expect("ncclGroupSimulateEnd", ncclGroupSimulateEnd(&sim), ncclInvalidUsage, "ncclGroupSimulateEnd", NULL);
  char devComm[64];
  expect("ncclDevCommCreate", ncclDevCommCreate(NULL, NULL, devComm), ncclInvalidUsage, "ncclDevCommCreate", "not supported by ringo");
  expect("ncclDevCommDestroy", ncclDevCommDestroy(NULL, devComm), ncclInvalidUsage, "ncclDevCommDestroy", "not supported by ringo");

  /* Operators. */
  ncclRedOp_t op;
  float scalar = 2;
  expect("ncclRedOpCreatePreMulSum(NULL comm)", ncclRedOpCreatePreMulSum(&op, &scalar, ncclFloat, ncclScalarHostImmediate, NULL),
         ncclInvalidArgument, "ncclRedOpCreatePreMulSum", NULL);
  expect("ncclRedOpDestroy(NULL comm)", ncclRedOpDestroy((ncclRedOp_t)ncclNumOps, NULL), ncclInvalidArgument, "ncclRedOpDestroy", NULL);

  /* Groups nest; an unmatched end is an error. */
  CHECK(ncclGroupStart() == ncclSuccess, "ncclGroupStart");
  CHECK(ncclGroupStart() == ncclSuccess, "nested ncclGroupStart");
  CHECK(ncclGroupEnd() == ncclSuccess, "inner ncclGroupEnd");
  CHECK(ncclGroupEnd() == ncclSuccess, "outer ncclGroupEnd");
  expect("unmatched ncclGroupEnd", ncclGroupEnd(), ncclInvalidUsage, "ncclGroupEnd", NULL);

  /* Memory: NULL and zero sizes need no GPU. */
  CHECK(ncclMemFree(NULL) == ncclSuccess, "ncclMemFree(NULL)");
  void* p = &x;
  CHECK(ncclMemAlloc(&p, 0) == ncclSuccess && p == NULL, "ncclMemAlloc(0) should give NULL");
  expect("ncclMemAlloc(NULL)", ncclMemAlloc(NULL, 4), ncclInvalidArgument, "ncclMemAlloc", NULL);

  /* The profiling names are the same functions. */
  extern ncclResult_t pncclGetVersion(int*);
  version = 0;
  CHECK(pncclGetVersion(&version) == ncclSuccess && version == NCCL_VERSION_CODE, "pncclGetVersion");

  ncclResetDebugInit();

  if (failures) {
    fprintf(stderr, "abi: %d checks failed\n", failures);
    return 1;
  }
  printf("abi: OK\n");
  return 0;
}
