// The C ABI: every function of include/nccl.h, defined with the header's
// exact prototype (the compiler checks each against it), forwarding to the
// Go exports of exports.go, plus a pncclX alias of each (NCCL's profiling
// names). Error strings and the last-error text live here, in static
// storage, as NCCL keeps them.
//
// Calls that may reach CUDA run between RINGO_ENTER and RINGO_LEAVE, which
// restore the calling thread's current CUDA context: ringo makes a
// communicator's context current on the thread that drives it, and the
// application's current device must not change under it.

#include <pthread.h>
#include <stdatomic.h>
#include <stddef.h>
#include <stdint.h>
#include <string.h>

#include "nccl.h"
#include "_cgo_export.h"

#ifdef RINGO_CUDA
#include <cuda.h>

// nccl.h's own cudaStream_t (RINGO_NCCL_H_WITHOUT_CUDA) is CUDA's.
_Static_assert(__builtin_types_compatible_p(cudaStream_t, CUstream), "nccl.h: cudaStream_t is not CUDA's");

static void ringoRestoreContext(CUcontext saved) {
	CUcontext now = NULL;
	if (cuCtxGetCurrent(&now) == CUDA_SUCCESS && now != saved) (void)cuCtxSetCurrent(saved);
}

#define RINGO_ENTER              \
	CUcontext ringoSaved = NULL; \
	(void)cuCtxGetCurrent(&ringoSaved)
#define RINGO_LEAVE ringoRestoreContext(ringoSaved)
#else
#define RINGO_ENTER \
	do {            \
	} while (0)
#define RINGO_LEAVE \
	do {            \
	} while (0)
#endif

// RINGO_CALL returns the Go export's result, with the context restored.
#define RINGO_CALL(expr)                      \
	do {                                      \
		RINGO_ENTER;                          \
		ncclResult_t ringoRes = (ncclResult_t)(expr); \
		RINGO_LEAVE;                          \
		return ringoRes;                      \
	} while (0)

// The calling thread, for the group nesting, which is per thread.
#define RINGO_TID ((uint64_t)pthread_self())

// The layout config.go reads, checked against the header.
_Static_assert(sizeof(ncclConfig_t) == 72, "ncclConfig_t is not NCCL 2.27's (config.go)");
_Static_assert(offsetof(ncclConfig_t, magic) == 8, "config.go: cfgOffMagic");
_Static_assert(offsetof(ncclConfig_t, version) == 12, "config.go: cfgOffVersion");
_Static_assert(offsetof(ncclConfig_t, blocking) == 16, "config.go: cfgOffBlocking");
_Static_assert(offsetof(ncclConfig_t, cgaClusterSize) == 20, "config.go: cfgOffCGAClusterSz");
_Static_assert(offsetof(ncclConfig_t, minCTAs) == 24, "config.go: cfgOffMinCTAs");
_Static_assert(offsetof(ncclConfig_t, maxCTAs) == 28, "config.go: cfgOffMaxCTAs");
_Static_assert(offsetof(ncclConfig_t, netName) == 32, "config.go: cfgOffNetName");
_Static_assert(offsetof(ncclConfig_t, splitShare) == 40, "config.go: cfgOffSplitShare");
_Static_assert(offsetof(ncclConfig_t, trafficClass) == 44, "config.go: cfgOffTrafficClass");
_Static_assert(offsetof(ncclConfig_t, commName) == 48, "config.go: cfgOffCommName");
_Static_assert(offsetof(ncclConfig_t, collnetEnable) == 56, "config.go: cfgOffCollnetEnable");
_Static_assert(offsetof(ncclConfig_t, CTAPolicy) == 60, "config.go: cfgOffCTAPolicy");
_Static_assert(offsetof(ncclConfig_t, shrinkShare) == 64, "config.go: cfgOffShrinkShare");
_Static_assert(offsetof(ncclConfig_t, nvlsCTAs) == 68, "config.go: cfgOffNVLSCTAs");
_Static_assert(sizeof(ncclUniqueId) == 128, "ncclUniqueId is 128 bytes");
_Static_assert(sizeof(ncclRedOp_t) == 4 && sizeof(ncclDataType_t) == 4 && sizeof(ncclResult_t) == 4, "enums are ints");
_Static_assert(NCCL_VERSION_CODE == 22707, "result.go: versionCode must be nccl.h's NCCL_VERSION_CODE");
_Static_assert(ncclNumResults == 8 && ncclNumOps == 5 && ncclNumTypes == 12, "result.go, ops.go: NCCL 2.27's enums");
_Static_assert(NCCL_SPLIT_NOCOLOR == -1, "registry.go: ncclSplitNoColor");
_Static_assert(NCCL_SHRINK_DEFAULT == 0 && NCCL_SHRINK_ABORT == 1 && NCCL_REVOKE_DEFAULT == 0, "shrink.go: the flags");
_Static_assert(ncclScalarDevice == 0 && ncclScalarHostImmediate == 1, "api.go: residences");

// The collective APIs, as api.go's collAPIs lists them.
enum { RINGO_COLL_ALLREDUCE, RINGO_COLL_REDUCESCATTER, RINGO_COLL_ALLGATHER, RINGO_COLL_BROADCAST, RINGO_COLL_REDUCE, RINGO_COLL_BCAST };

// The unsupported APIs, as api.go's unsupportedAPIs lists them.
enum {
	RINGO_UNSUPPORTED_GROUP_SIMULATE_END,
	RINGO_UNSUPPORTED_DEV_COMM_CREATE,
	RINGO_UNSUPPORTED_DEV_COMM_DESTROY,
};

// The point-to-point APIs, as p2p.go's p2pAPIs lists them.
enum { RINGO_P2P_SEND, RINGO_P2P_RECV, RINGO_P2P_ALLTOALL, RINGO_P2P_GATHER, RINGO_P2P_SCATTER };

// Functions of newer NCCLs that nccl.h (2.27) lacks and PyTorch 2.11 links
// against: declared here, exported, and refused. Nothing here calls them,
// so their arguments are opaque.
ncclResult_t ncclDevCommCreate(ncclComm_t comm, const void* reqs, void* outDevComm);
ncclResult_t ncclDevCommDestroy(ncclComm_t comm, const void* devComm);

/* Errors. */

const char* ncclGetErrorString(ncclResult_t result) {
	switch (result) {
	case ncclSuccess: return "no error";
	case ncclUnhandledCudaError: return "unhandled cuda error (run with NCCL_DEBUG=INFO for details)";
	case ncclSystemError: return "unhandled system error (run with NCCL_DEBUG=INFO for details)";
	case ncclInternalError: return "internal error - please report this issue to the NCCL developers";
	case ncclInvalidArgument: return "invalid argument (run with NCCL_DEBUG=WARN for details)";
	case ncclInvalidUsage: return "invalid usage (run with NCCL_DEBUG=WARN for details)";
	case ncclRemoteError: return "remote process exited or there was a network error";
	case ncclInProgress: return "NCCL operation in progress";
	default: return "unknown result code";
	}
}

// The last error: process-wide, in four buffers used in turn, so the text a
// caller holds stays valid and unchanged until three more errors are set.
enum { RINGO_LAST_ERRORS = 4, RINGO_LAST_ERROR_BYTES = 1024 };
static char ringoLastErrors[RINGO_LAST_ERRORS][RINGO_LAST_ERROR_BYTES];
static unsigned ringoLastErrorNext; // guarded by ringoLastErrorMu
static pthread_mutex_t ringoLastErrorMu = PTHREAD_MUTEX_INITIALIZER;
static _Atomic(const char*) ringoLastError = "";

// ringoSetLastError makes the n bytes at msg the last error (lasterror.go).
void ringoSetLastError(const char* msg, size_t n) {
	pthread_mutex_lock(&ringoLastErrorMu);
	char* buf = ringoLastErrors[ringoLastErrorNext];
	ringoLastErrorNext = (ringoLastErrorNext + 1) % RINGO_LAST_ERRORS;
	if (n > RINGO_LAST_ERROR_BYTES - 1) n = RINGO_LAST_ERROR_BYTES - 1;
	if (n > 0) memcpy(buf, msg, n);
	buf[n] = '\0';
	atomic_store(&ringoLastError, buf);
	pthread_mutex_unlock(&ringoLastErrorMu);
}

const char* ncclGetLastError(ncclComm_t comm) {
	(void)comm; // process-wide, as in NCCL
	return atomic_load(&ringoLastError);
}

void ncclResetDebugInit(void) { ringoResetDebugInit(); }

ncclResult_t ncclCommGetAsyncError(ncclComm_t comm, ncclResult_t* asyncError) {
	return (ncclResult_t)ringoCommGetAsyncError(comm, asyncError);
}

/* Versions and identifiers. */

ncclResult_t ncclGetVersion(int* version) { return (ncclResult_t)ringoGetVersion(version); }

ncclResult_t ncclGetUniqueId(ncclUniqueId* uniqueId) { return (ncclResult_t)ringoGetUniqueId(uniqueId); }

/* Communicators. */

ncclResult_t ncclCommInitRankConfig(ncclComm_t* comm, int nranks, ncclUniqueId commId, int rank, ncclConfig_t* config) {
	RINGO_CALL(ringoCommInitRankConfig(RINGO_TID, comm, nranks, commId.internal, rank, config));
}

ncclResult_t ncclCommInitRank(ncclComm_t* comm, int nranks, ncclUniqueId commId, int rank) {
	RINGO_CALL(ringoCommInitRank(RINGO_TID, comm, nranks, commId.internal, rank));
}

ncclResult_t ncclCommInitAll(ncclComm_t* comm, int ndev, const int* devlist) {
	RINGO_CALL(ringoCommInitAll(comm, ndev, (void*)devlist));
}

ncclResult_t ncclCommInitRankScalable(ncclComm_t* newcomm, int nranks, int myrank, int nId, ncclUniqueId* commIds,
                                      ncclConfig_t* config) {
	RINGO_CALL(ringoCommInitRankScalable(RINGO_TID, newcomm, nranks, myrank, nId, commIds, config));
}

ncclResult_t ncclCommFinalize(ncclComm_t comm) { return (ncclResult_t)ringoCommFinalize(comm); }

ncclResult_t ncclCommDestroy(ncclComm_t comm) { RINGO_CALL(ringoCommDestroy(comm)); }

ncclResult_t ncclCommAbort(ncclComm_t comm) { RINGO_CALL(ringoCommAbort(comm)); }

ncclResult_t ncclCommSplit(ncclComm_t comm, int color, int key, ncclComm_t* newcomm, ncclConfig_t* config) {
	RINGO_CALL(ringoCommSplit(RINGO_TID, comm, color, key, newcomm, config));
}

ncclResult_t ncclCommShrink(ncclComm_t comm, int* excludeRanksList, int excludeRanksCount, ncclComm_t* newcomm,
                            ncclConfig_t* config, int shrinkFlags) {
	RINGO_CALL(ringoCommShrink(RINGO_TID, comm, excludeRanksList, excludeRanksCount, newcomm, config, shrinkFlags));
}

ncclResult_t ncclCommRevoke(ncclComm_t comm, int revokeFlags) { return (ncclResult_t)ringoCommRevoke(comm, revokeFlags); }

ncclResult_t ncclCommGetUniqueId(ncclComm_t comm, ncclUniqueId* uniqueId) {
	RINGO_CALL(ringoCommGetUniqueId(comm, uniqueId));
}

ncclResult_t ncclCommGrow(ncclComm_t comm, int nRanks, const ncclUniqueId* uniqueId, int rank, ncclComm_t* newcomm,
                          ncclConfig_t* config) {
	RINGO_CALL(ringoCommGrow(RINGO_TID, comm, nRanks, (void*)uniqueId, rank, newcomm, config));
}

/* Queries. */

ncclResult_t ncclCommCount(const ncclComm_t comm, int* count) { return (ncclResult_t)ringoCommCount(comm, count); }

ncclResult_t ncclCommCuDevice(const ncclComm_t comm, int* device) {
	return (ncclResult_t)ringoCommCuDevice(comm, device);
}

ncclResult_t ncclCommUserRank(const ncclComm_t comm, int* rank) { return (ncclResult_t)ringoCommUserRank(comm, rank); }

/* Memory. */

ncclResult_t ncclMemAlloc(void** ptr, size_t size) { RINGO_CALL(ringoMemAlloc(ptr, size)); }

ncclResult_t ncclMemFree(void* ptr) { RINGO_CALL(ringoMemFree(ptr)); }

ncclResult_t ncclCommRegister(const ncclComm_t comm, void* buff, size_t size, void** handle) {
	RINGO_CALL(ringoCommRegister(comm, buff, size, handle));
}

ncclResult_t ncclCommDeregister(const ncclComm_t comm, void* handle) {
	RINGO_CALL(ringoCommDeregister(comm, handle));
}

ncclResult_t ncclCommWindowRegister(ncclComm_t comm, void* buff, size_t size, ncclWindow_t* win, int winFlags) {
	RINGO_CALL(ringoCommWindowRegister(RINGO_TID, comm, buff, size, (void*)win, winFlags));
}

ncclResult_t ncclCommWindowDeregister(ncclComm_t comm, ncclWindow_t win) {
	RINGO_CALL(ringoCommWindowDeregister(comm, (void*)win));
}

/* Operators. */

ncclResult_t ncclRedOpCreatePreMulSum(ncclRedOp_t* op, void* scalar, ncclDataType_t datatype,
                                      ncclScalarResidence_t residence, ncclComm_t comm) {
	return (ncclResult_t)ringoRedOpCreatePreMulSum(op, scalar, (int)datatype, (int)residence, comm);
}

ncclResult_t ncclRedOpDestroy(ncclRedOp_t op, ncclComm_t comm) { return (ncclResult_t)ringoRedOpDestroy((int)op, comm); }

/* Collectives. */

ncclResult_t ncclReduce(const void* sendbuff, void* recvbuff, size_t count, ncclDataType_t datatype, ncclRedOp_t op,
                        int root, ncclComm_t comm, cudaStream_t stream) {
	RINGO_CALL(ringoCollective(RINGO_COLL_REDUCE, (void*)sendbuff, recvbuff, count, (int)datatype, (int)op, root, comm, stream));
}

ncclResult_t ncclBcast(void* buff, size_t count, ncclDataType_t datatype, int root, ncclComm_t comm,
                       cudaStream_t stream) {
	RINGO_CALL(ringoCollective(RINGO_COLL_BCAST, buff, buff, count, (int)datatype, 0, root, comm, stream));
}

ncclResult_t ncclBroadcast(const void* sendbuff, void* recvbuff, size_t count, ncclDataType_t datatype, int root,
                           ncclComm_t comm, cudaStream_t stream) {
	RINGO_CALL(ringoCollective(RINGO_COLL_BROADCAST, (void*)sendbuff, recvbuff, count, (int)datatype, 0, root, comm, stream));
}

ncclResult_t ncclAllReduce(const void* sendbuff, void* recvbuff, size_t count, ncclDataType_t datatype, ncclRedOp_t op,
                           ncclComm_t comm, cudaStream_t stream) {
	RINGO_CALL(ringoCollective(RINGO_COLL_ALLREDUCE, (void*)sendbuff, recvbuff, count, (int)datatype, (int)op, 0, comm, stream));
}

ncclResult_t ncclReduceScatter(const void* sendbuff, void* recvbuff, size_t recvcount, ncclDataType_t datatype,
                               ncclRedOp_t op, ncclComm_t comm, cudaStream_t stream) {
	RINGO_CALL(ringoCollective(RINGO_COLL_REDUCESCATTER, (void*)sendbuff, recvbuff, recvcount, (int)datatype, (int)op, 0, comm, stream));
}

ncclResult_t ncclAllGather(const void* sendbuff, void* recvbuff, size_t sendcount, ncclDataType_t datatype,
                           ncclComm_t comm, cudaStream_t stream) {
	RINGO_CALL(ringoCollective(RINGO_COLL_ALLGATHER, (void*)sendbuff, recvbuff, sendcount, (int)datatype, 0, 0, comm, stream));
}

/* Point-to-point, and the collectives NCCL makes of it (2.28). Inside a
 * group they are deferred to its outermost end (group.go). */

ncclResult_t ncclSend(const void* sendbuff, size_t count, ncclDataType_t datatype, int peer, ncclComm_t comm,
                      cudaStream_t stream) {
	RINGO_CALL(ringoP2P(RINGO_TID, RINGO_P2P_SEND, (void*)sendbuff, NULL, count, (int)datatype, peer, comm, stream));
}

ncclResult_t ncclRecv(void* recvbuff, size_t count, ncclDataType_t datatype, int peer, ncclComm_t comm,
                      cudaStream_t stream) {
	RINGO_CALL(ringoP2P(RINGO_TID, RINGO_P2P_RECV, NULL, recvbuff, count, (int)datatype, peer, comm, stream));
}

ncclResult_t ncclAlltoAll(const void* sendbuff, void* recvbuff, size_t count, ncclDataType_t datatype, ncclComm_t comm,
                          cudaStream_t stream) {
	RINGO_CALL(ringoP2P(RINGO_TID, RINGO_P2P_ALLTOALL, (void*)sendbuff, recvbuff, count, (int)datatype, 0, comm, stream));
}

ncclResult_t ncclGather(const void* sendbuff, void* recvbuff, size_t count, ncclDataType_t datatype, int root,
                        ncclComm_t comm, cudaStream_t stream) {
	RINGO_CALL(ringoP2P(RINGO_TID, RINGO_P2P_GATHER, (void*)sendbuff, recvbuff, count, (int)datatype, root, comm, stream));
}

ncclResult_t ncclScatter(const void* sendbuff, void* recvbuff, size_t count, ncclDataType_t datatype, int root,
                         ncclComm_t comm, cudaStream_t stream) {
	RINGO_CALL(ringoP2P(RINGO_TID, RINGO_P2P_SCATTER, (void*)sendbuff, recvbuff, count, (int)datatype, root, comm, stream));
}

/* Device communicators. */

ncclResult_t ncclDevCommCreate(ncclComm_t comm, const void* reqs, void* outDevComm) {
	(void)comm, (void)reqs, (void)outDevComm;
	return (ncclResult_t)ringoUnsupported(RINGO_UNSUPPORTED_DEV_COMM_CREATE);
}

ncclResult_t ncclDevCommDestroy(ncclComm_t comm, const void* devComm) {
	(void)comm, (void)devComm;
	return (ncclResult_t)ringoUnsupported(RINGO_UNSUPPORTED_DEV_COMM_DESTROY);
}

/* Groups. */

ncclResult_t ncclGroupStart(void) { return (ncclResult_t)ringoGroupStart(RINGO_TID); }

ncclResult_t ncclGroupEnd(void) { RINGO_CALL(ringoGroupEnd(RINGO_TID)); }

ncclResult_t ncclGroupSimulateEnd(ncclSimInfo_t* simInfo) {
	(void)simInfo;
	return (ncclResult_t)ringoUnsupported(RINGO_UNSUPPORTED_GROUP_SIMULATE_END);
}

/* pncclX: the same functions under NCCL's profiling names. */

#define RINGO_ALIAS(f) extern __typeof__(f) p##f __attribute__((alias(#f)))
RINGO_ALIAS(ncclGetVersion);
RINGO_ALIAS(ncclGetUniqueId);
RINGO_ALIAS(ncclCommInitRankConfig);
RINGO_ALIAS(ncclCommInitRank);
RINGO_ALIAS(ncclCommInitAll);
RINGO_ALIAS(ncclCommInitRankScalable);
RINGO_ALIAS(ncclCommFinalize);
RINGO_ALIAS(ncclCommDestroy);
RINGO_ALIAS(ncclCommAbort);
RINGO_ALIAS(ncclCommSplit);
RINGO_ALIAS(ncclCommShrink);
RINGO_ALIAS(ncclCommRevoke);
RINGO_ALIAS(ncclCommGetUniqueId);
RINGO_ALIAS(ncclCommGrow);
RINGO_ALIAS(ncclGetErrorString);
RINGO_ALIAS(ncclGetLastError);
RINGO_ALIAS(ncclResetDebugInit);
RINGO_ALIAS(ncclCommGetAsyncError);
RINGO_ALIAS(ncclCommCount);
RINGO_ALIAS(ncclCommCuDevice);
RINGO_ALIAS(ncclCommUserRank);
RINGO_ALIAS(ncclMemAlloc);
RINGO_ALIAS(ncclMemFree);
RINGO_ALIAS(ncclCommRegister);
RINGO_ALIAS(ncclCommDeregister);
RINGO_ALIAS(ncclCommWindowRegister);
RINGO_ALIAS(ncclCommWindowDeregister);
RINGO_ALIAS(ncclRedOpCreatePreMulSum);
RINGO_ALIAS(ncclRedOpDestroy);
RINGO_ALIAS(ncclReduce);
RINGO_ALIAS(ncclBcast);
RINGO_ALIAS(ncclBroadcast);
RINGO_ALIAS(ncclAllReduce);
RINGO_ALIAS(ncclReduceScatter);
RINGO_ALIAS(ncclAllGather);
RINGO_ALIAS(ncclSend);
RINGO_ALIAS(ncclRecv);
RINGO_ALIAS(ncclGroupStart);
RINGO_ALIAS(ncclGroupEnd);
RINGO_ALIAS(ncclGroupSimulateEnd);
RINGO_ALIAS(ncclAlltoAll);
RINGO_ALIAS(ncclGather);
RINGO_ALIAS(ncclScatter);
RINGO_ALIAS(ncclDevCommCreate);
RINGO_ALIAS(ncclDevCommDestroy);
