package main

import "C"

import (
	"runtime/debug"
	"unsafe"
)

// The Go side of the C ABI: one export per nccl* function (or family),
// called by nccl_abi.c with Go types. Each recovers any panic — none may
// cross into C — and turns errors into ncclResult_t values and
// ncclGetLastError's text.

// lib is the library the exports drive.
var lib = newLibrary()

// finish returns err's result, recording it unless it is ncclSuccess or
// ncclInProgress.
func finish(err error) int32 {
	if err == nil || err == errInProgress {
		return int32(resultOf(err))
	}
	return int32(lib.record(err))
}

// guard, deferred by every export, turns a panic into ncclInternalError
// with the panic in ncclGetLastError (and its stack at NCCL_DEBUG=WARN).
func guard(fn string, res *int32) {
	if p := recover(); p != nil {
		lib.log.warnf(-1, "%s: panic: %v\n%s", fn, p, debug.Stack())
		*res = int32(lib.record(panicError(fn, p)))
	}
}

//export ringoGetVersion
func ringoGetVersion(version unsafe.Pointer) (res int32) {
	defer guard("ncclGetVersion", &res)
	return finish(lib.getVersion(version))
}

//export ringoGetUniqueId
func ringoGetUniqueId(id unsafe.Pointer) (res int32) {
	defer guard("ncclGetUniqueId", &res)
	return finish(lib.getUniqueID(id))
}

//export ringoCommInitRank
func ringoCommInitRank(tid uint64, comm unsafe.Pointer, nranks int32, id unsafe.Pointer, rank int32) (res int32) {
	defer guard("ncclCommInitRank", &res)
	return finish(lib.initRank("ncclCommInitRank", tid, comm, nranks, rank, id, nil))
}

//export ringoCommInitRankConfig
func ringoCommInitRankConfig(tid uint64, comm unsafe.Pointer, nranks int32, id unsafe.Pointer, rank int32, config unsafe.Pointer) (res int32) {
	defer guard("ncclCommInitRankConfig", &res)
	return finish(lib.initRank("ncclCommInitRankConfig", tid, comm, nranks, rank, id, config))
}

//export ringoCommInitRankScalable
func ringoCommInitRankScalable(tid uint64, comm unsafe.Pointer, nranks, rank, nID int32, ids, config unsafe.Pointer) (res int32) {
	defer guard("ncclCommInitRankScalable", &res)
	return finish(lib.initRankScalable(tid, comm, nranks, rank, nID, ids, config))
}

//export ringoCommInitAll
func ringoCommInitAll(comms unsafe.Pointer, ndev int32, devlist unsafe.Pointer) (res int32) {
	defer guard("ncclCommInitAll", &res)
	return finish(lib.initAll(comms, ndev, devlist))
}

//export ringoCommFinalize
func ringoCommFinalize(comm unsafe.Pointer) (res int32) {
	defer guard("ncclCommFinalize", &res)
	return finish(lib.finalize(comm))
}

//export ringoCommDestroy
func ringoCommDestroy(comm unsafe.Pointer) (res int32) {
	defer guard("ncclCommDestroy", &res)
	return finish(lib.destroy(comm))
}

//export ringoCommAbort
func ringoCommAbort(comm unsafe.Pointer) (res int32) {
	defer guard("ncclCommAbort", &res)
	return finish(lib.abort(comm))
}

//export ringoCommSplit
func ringoCommSplit(tid uint64, comm unsafe.Pointer, color, key int32, newcomm, config unsafe.Pointer) (res int32) {
	defer guard("ncclCommSplit", &res)
	return finish(lib.split(tid, comm, color, key, newcomm, config))
}

//export ringoCommShrink
func ringoCommShrink(tid uint64, comm, exclude unsafe.Pointer, nExclude int32, newcomm, config unsafe.Pointer, flags int32) (res int32) {
	defer guard("ncclCommShrink", &res)
	return finish(lib.shrink(tid, comm, exclude, nExclude, newcomm, config, flags))
}

//export ringoCommRevoke
func ringoCommRevoke(comm unsafe.Pointer, flags int32) (res int32) {
	defer guard("ncclCommRevoke", &res)
	return finish(lib.revoke(comm, flags))
}

//export ringoCommGetUniqueId
func ringoCommGetUniqueId(comm, id unsafe.Pointer) (res int32) {
	defer guard("ncclCommGetUniqueId", &res)
	return finish(lib.commGetUniqueID(comm, id))
}

//export ringoCommGrow
func ringoCommGrow(tid uint64, comm unsafe.Pointer, nranks int32, id unsafe.Pointer, rank int32, newcomm, config unsafe.Pointer) (res int32) {
	defer guard("ncclCommGrow", &res)
	return finish(lib.grow(tid, comm, nranks, id, rank, newcomm, config))
}

//export ringoCommGetAsyncError
func ringoCommGetAsyncError(comm, asyncError unsafe.Pointer) (res int32) {
	defer guard("ncclCommGetAsyncError", &res)
	return finish(lib.getAsyncError(comm, asyncError))
}

//export ringoCommCount
func ringoCommCount(comm, count unsafe.Pointer) (res int32) {
	defer guard("ncclCommCount", &res)
	return finish(lib.query("ncclCommCount", comm, count, rankComm.Size))
}

//export ringoCommCuDevice
func ringoCommCuDevice(comm, device unsafe.Pointer) (res int32) {
	defer guard("ncclCommCuDevice", &res)
	return finish(lib.query("ncclCommCuDevice", comm, device, rankComm.GPU))
}

//export ringoCommUserRank
func ringoCommUserRank(comm, rank unsafe.Pointer) (res int32) {
	defer guard("ncclCommUserRank", &res)
	return finish(lib.query("ncclCommUserRank", comm, rank, rankComm.Rank))
}

//export ringoMemAlloc
func ringoMemAlloc(ptr unsafe.Pointer, size uint64) (res int32) {
	defer guard("ncclMemAlloc", &res)
	return finish(lib.memAllocAPI(ptr, size))
}

//export ringoMemFree
func ringoMemFree(ptr unsafe.Pointer) (res int32) {
	defer guard("ncclMemFree", &res)
	return finish(lib.memFreeAPI(ptr))
}

//export ringoCommRegister
func ringoCommRegister(comm, buff unsafe.Pointer, size uint64, handle unsafe.Pointer) (res int32) {
	defer guard("ncclCommRegister", &res)
	return finish(lib.register(comm, uintptr(buff), size, handle)) // a device address: never dereferenced here
}

//export ringoCommDeregister
func ringoCommDeregister(comm, handle unsafe.Pointer) (res int32) {
	defer guard("ncclCommDeregister", &res)
	return finish(lib.deregister(comm, handle))
}

//export ringoCommWindowRegister
func ringoCommWindowRegister(tid uint64, comm, buff unsafe.Pointer, size uint64, win unsafe.Pointer, flags int32) (res int32) {
	defer guard("ncclCommWindowRegister", &res)
	return finish(lib.windowRegister(tid, comm, uintptr(buff), size, win, flags)) // a device address: never dereferenced here
}

//export ringoCommWindowDeregister
func ringoCommWindowDeregister(comm, win unsafe.Pointer) (res int32) {
	defer guard("ncclCommWindowDeregister", &res)
	return finish(lib.windowDeregister(comm, win))
}

//export ringoRedOpCreatePreMulSum
func ringoRedOpCreatePreMulSum(op, scalar unsafe.Pointer, datatype, residence int32, comm unsafe.Pointer) (res int32) {
	defer guard("ncclRedOpCreatePreMulSum", &res)
	return finish(lib.redOpCreatePreMulSum(op, scalar, datatype, residence, comm))
}

//export ringoRedOpDestroy
func ringoRedOpDestroy(op int32, comm unsafe.Pointer) (res int32) {
	defer guard("ncclRedOpDestroy", &res)
	return finish(lib.redOpDestroy(op, comm))
}

//export ringoCollective
func ringoCollective(api int32, send, recv unsafe.Pointer, count uint64, datatype, op, root int32, comm, stream unsafe.Pointer) (res int32) {
	defer guard("collective", &res)
	return finish(lib.collective(api, send, recv, count, datatype, op, root, comm, stream))
}

//export ringoP2P
func ringoP2P(tid uint64, api int32, send, recv unsafe.Pointer, count uint64, datatype, peer int32, comm, stream unsafe.Pointer) (res int32) {
	fn := "point-to-point"
	if api >= 0 && int(api) < len(p2pAPIs) {
		fn = p2pAPIs[api]
	}
	defer guard(fn, &res)
	return finish(lib.p2p(tid, api, send, recv, count, datatype, peer, comm, stream))
}

//export ringoUnsupported
func ringoUnsupported(api int32) (res int32) {
	defer guard("unsupported", &res)
	return finish(lib.unsupported(api))
}

//export ringoGroupStart
func ringoGroupStart(tid uint64) (res int32) {
	defer guard("ncclGroupStart", &res)
	lib.groupStart(tid)
	return int32(ncclSuccess)
}

//export ringoGroupEnd
func ringoGroupEnd(tid uint64) (res int32) {
	defer guard("ncclGroupEnd", &res)
	return finish(lib.groupEnd(tid))
}

//export ringoResetDebugInit
func ringoResetDebugInit() {
	defer func() { recover() }()
	lib.log.reset()
}
