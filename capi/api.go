package main

import (
	"context"
	"fmt"
	"hash/fnv"
	"time"
	"unsafe"

	"github.com/ringo-ccl/ringo"
	"github.com/ringo-ccl/ringo/internal/env"
)

// library is the state behind the C ABI, and its methods implement the nccl*
// functions with Go types (exports.go converts). Its hooks to ringo and CUDA
// are fields, so tests drive everything with fakes.
type library struct {
	join     joinFunc                      // ringo.NewGPUComm
	device   func() (int, error)           // the calling thread's current CUDA device
	devices  func() (int, error)           // the number of CUDA devices
	memAlloc func(uint64) (uintptr, error) // cuMemAlloc
	// memShared allocates on the current device from CUDA's virtual
	// memory API (device.AllocShared); memFree frees either.
	memShared  func(uint64) (uintptr, error)
	memFree    func(uintptr) error
	newID      func() ([128]byte, error) // ringo.NewUniqueID
	sendRecv   sendRecvFunc              // ringo.SendRecv
	streams    streamCUDA
	log        *logger
	setLastErr func(string)

	handles handleTable
	regs    regTable
	ops     opTable
	reg     *registry
	runs    spares[p2pScratch] // runP2P's
}

var envTimeout = env.Var{Name: "TIMEOUT"} // RINGO_TIMEOUT, parsed as ringo parses it

// rendezvousTimeout bounds the making of a rank: the wait for the other
// ranks of its communicator and their connection.
func rendezvousTimeout() time.Duration {
	d, _ := envTimeout.Duration(ringo.DefaultTimeout) // a bad value fails the communicator's init, naming it
	return d
}

// newLibrary returns the library over ringo and the CUDA driver.
func newLibrary() *library {
	return &library{
		join:       joinGPU,
		device:     cudaCurrentDevice,
		devices:    cudaDeviceCount,
		memAlloc:   cudaMemAlloc,
		memShared:  cudaMemShared,
		memFree:    cudaMemFree,
		newID:      newUniqueID,
		sendRecv:   gpuSendRecv,
		streams:    streamCUDA{alloc: cudaStreamAlloc, copy: cudaStreamCopy, free: cudaStreamFree, wait: cudaStreamWait},
		log:        newLogger(stderrSink),
		setLastErr: setLastError,
		reg:        newRegistry(rendezvousTimeout),
	}
}

// joinGPU makes a rank with ringo.NewGPUComm.
func joinGPU(ctx context.Context, id [128]byte, nranks, rank, dev int, cfg *ringo.Config) (rankComm, error) {
	if err := ensureCUDA(); err != nil {
		return nil, err
	}
	c, err := ringo.NewGPUComm(ctx, ringo.UniqueID(id), nranks, rank, dev, cfg)
	if err != nil {
		return nil, err
	}
	return gpuComm{c}, nil
}

// newUniqueID starts a bootstrap root in this process, which must outlive
// the ranks (it reports dead ones): ringo stops it once every rank has
// closed.
func newUniqueID() ([128]byte, error) {
	id, err := ringo.NewUniqueID()
	return [128]byte(id), err
}

// idHash is a short name of a unique id for log lines (NCCL's commId).
func idHash(id [128]byte) uint64 {
	h := fnv.New64a()
	h.Write(id[:])
	return h.Sum64()
}

// putInt32 stores v at the C int* out.
func putInt32(out unsafe.Pointer, v int32) { *(*int32)(out) = v }

// putPtr stores p at the C void** (or ncclComm_t*) out.
func putPtr(out, p unsafe.Pointer) { *(*unsafe.Pointer)(out) = p }

func (l *library) getVersion(out unsafe.Pointer) error {
	if out == nil {
		return invalidArg("ncclGetVersion: version is NULL")
	}
	putInt32(out, versionCode)
	return nil
}

func (l *library) getUniqueID(out unsafe.Pointer) error {
	if out == nil {
		return invalidArg("ncclGetUniqueId: uniqueId is NULL")
	}
	id, err := l.newID()
	if err != nil {
		return apiErrorf(ncclSystemError, "ncclGetUniqueId: %v", err)
	}
	copy(unsafe.Slice((*byte)(out), len(id)), id[:])
	return nil
}

// finalize is ncclCommFinalize: ringo's collectives need no flushing, so it
// only checks the handle, and returns ncclSuccess for a non-blocking
// communicator too (NCCL may return ncclInProgress and finish in the
// background).
func (l *library) finalize(h unsafe.Pointer) error {
	_, err := l.handles.lookup("ncclCommFinalize", h)
	return err
}

// getAsyncError is ncclCommGetAsyncError: the state of a communicator
// (commEntry.async), which also becomes ncclGetLastError's text when it is
// an error. A communicator a shrink replaced reports ncclSuccess
// (commEntry.shrunk); its calls still fail.
func (l *library) getAsyncError(h, out unsafe.Pointer) error {
	const fn = "ncclCommGetAsyncError"
	e, err := l.handles.lookup(fn, h)
	if err != nil {
		return err
	}
	if out == nil {
		return invalidArg("%s: asyncError is NULL", fn)
	}
	async := e.async()
	res := resultOf(async)
	putInt32(out, int32(res))
	if res != ncclSuccess && res != ncclInProgress {
		l.setLastErr(fmt.Sprintf("%s: comm %p: %v", fn, h, async))
	}
	return nil
}

// query is ncclCommCount, ncclCommCuDevice and ncclCommUserRank.
func (l *library) query(fn string, h, out unsafe.Pointer, get func(rankComm) int) error {
	e, err := l.handles.lookup(fn, h)
	if err != nil {
		return err
	}
	if out == nil {
		return invalidArg("%s: the int* to fill is NULL", fn)
	}
	st, err := e.get(fn)
	if err != nil {
		return err
	}
	putInt32(out, int32(get(st.comm)))
	return nil
}

// record makes err ncclGetLastError's text, prints it at NCCL_DEBUG=WARN,
// and returns its result.
func (l *library) record(err error) result {
	msg := err.Error()
	l.setLastErr(msg)
	l.log.warnf(-1, "%s", msg)
	return resultOf(err)
}
