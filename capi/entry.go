package main

import (
	"context"
	"fmt"
	"sync"
	"sync/atomic"
	"unsafe"

	"github.com/ringo-ccl/ringo"
)

// rankComm is what the C ABI needs of one rank of a communicator:
// gpuComm (a *ringo.Comm), or a fake in tests.
type rankComm interface {
	DoDevice(ctx context.Context, call ringo.DeviceCall, s ringo.Stream) error
	Err() error
	Abort()
	Close() error
	Rank() int
	Size() int
	GPU() int
	// Split is ncclCommSplit's part of this rank: collective over every rank
	// of the communicator, in any process; a negative color gets nil.
	Split(ctx context.Context, color, key int, cfg *ringo.Config) (rankComm, error)
	// Shrink is ncclCommShrink's part of this rank (ringo's ShrinkAbort
	// with abort): collective over the ranks not in exclude.
	Shrink(ctx context.Context, exclude []int, cfg *ringo.Config, abort bool) (rankComm, error)
	// Revoke is ncclCommRevoke: safe on any thread, at any time.
	Revoke()
	// GrowID is ncclCommGetUniqueId: the id of a communicator grown from
	// this one.
	GrowID() (ringo.UniqueID, error)
	// Grow is ncclCommGrow's part of an existing rank: collective over
	// every rank of the communicator and the new ranks; id is nil but on
	// the rank that made it.
	Grow(ctx context.Context, newSize int, id *ringo.UniqueID, cfg *ringo.Config) (rankComm, error)
	// RegisterWindow is ncclCommWindowRegister's part of this rank:
	// collective over every rank of the communicator.
	RegisterWindow(ctx context.Context, addr uintptr, bytes int64) (commWindow, error)
	// Register is ncclCommRegister: this rank's alone.
	Register(ctx context.Context, addr uintptr, bytes int64) (commWindow, error)
}

// joinFunc makes this process rank rank, on CUDA device dev, of the
// nranks-rank communicator of unique id, meeting the other ranks — in this
// process or others — through ringo's bootstrap: ringo.NewGPUComm, or a fake
// in tests. It blocks until all nranks ranks have joined or ctx ends, so the
// ranks of one process must call it concurrently.
type joinFunc func(ctx context.Context, id [128]byte, nranks, rank, dev int, cfg *ringo.Config) (rankComm, error)

// gpuComm is a rank made by ringo: a *ringo.Comm whose Split returns a
// rankComm.
type gpuComm struct{ *ringo.Comm }

var _ rankComm = gpuComm{}

func (c gpuComm) Split(ctx context.Context, color, key int, cfg *ringo.Config) (rankComm, error) {
	kid, err := c.Comm.Split(ctx, color, key, cfg)
	if err != nil || kid == nil {
		return nil, err // no typed nil in the interface
	}
	return gpuComm{kid}, nil
}

func (c gpuComm) Shrink(ctx context.Context, exclude []int, cfg *ringo.Config, abort bool) (rankComm, error) {
	shrink := c.Comm.Shrink
	if abort {
		shrink = c.Comm.ShrinkAbort
	}
	kid, err := shrink(ctx, exclude, cfg)
	if err != nil {
		return nil, err
	}
	return gpuComm{kid}, nil
}

func (c gpuComm) Grow(ctx context.Context, newSize int, id *ringo.UniqueID, cfg *ringo.Config) (rankComm, error) {
	kid, err := c.Comm.Grow(ctx, newSize, id, cfg)
	if err != nil {
		return nil, err
	}
	return gpuComm{kid}, nil
}

func (c gpuComm) RegisterWindow(ctx context.Context, addr uintptr, bytes int64) (commWindow, error) {
	w, err := c.Comm.RegisterWindow(ctx, addr, bytes)
	if err != nil {
		return nil, err // no typed nil in the interface
	}
	return w, nil
}

func (c gpuComm) Register(ctx context.Context, addr uintptr, bytes int64) (commWindow, error) {
	r, err := c.Comm.Register(ctx, addr, bytes)
	if err != nil {
		return nil, err // no typed nil in the interface
	}
	return r, nil
}

// commEntry is what an ncclComm_t handle stands for.
type commEntry struct {
	handle unsafe.Pointer // its C block, set once by handleTable.add
	dev    int            // the CUDA device it was created on
	cfg    commConfig

	state atomic.Pointer[entryState] // nil while the communicator is being created

	// mu serialises the calls that drive comm — collectives, ncclCommSplit,
	// ncclCommShrink (but NCCL_SHRINK_ABORT's), ncclCommGetUniqueId,
	// ncclCommGrow and Close — which a ringo.Comm takes one at a time.
	mu sync.Mutex

	// creation is what makes it while that is deferred or under way; guarded
	// by registry.mu.
	creation *creation

	// pending counts the background work of non-blocking calls that uses
	// this communicator (nonblocking.go): while there is any,
	// ncclCommGetAsyncError says ncclInProgress and other calls are refused.
	pending atomic.Int32
	// bgErr is the first failure of such work that is not the failure to
	// make it (its group's sends and receives): ncclCommGetAsyncError
	// reports it from then on, as NCCL's ncclCommSetAsyncError.
	bgErr atomic.Pointer[error]

	// shrunk: a ncclCommShrink of this communicator succeeded. Its async
	// state is ncclSuccess from then on, as NCCL's (whose NCCL_SHRINK_ABORT
	// clears the parent's abort flags again): the failure that led to the
	// shrink is handled, and PyTorch's shrink_group waits on the parent's
	// state before it takes the new communicator.
	shrunk atomic.Bool
}

// entryState is a created communicator, or why creating it failed.
type entryState struct {
	comm rankComm
	err  error
}

func (e *commEntry) ready(c rankComm) { e.state.Store(&entryState{comm: c}) }
func (e *commEntry) fail(err error)   { e.state.Store(&entryState{err: err}) }

// made returns the entry's communicator, or why there is none.
func (e *commEntry) made(fn string) (*entryState, error) {
	st := e.state.Load()
	switch {
	case st == nil:
		return nil, invalidArg("%s: comm %p is still being initialised (its ncclGroupEnd has not run, or it is non-blocking and ncclCommGetAsyncError says ncclInProgress)", fn, e.handle)
	case st.err != nil:
		return nil, fmt.Errorf("%s: comm %p failed to initialise: %w", fn, e.handle, st.err)
	}
	return st, nil
}

// get is made, refusing also a communicator that background work of a
// non-blocking call still uses, as NCCL's ncclCommEnsureReady does.
func (e *commEntry) get(fn string) (*entryState, error) {
	st, err := e.made(fn)
	if err == nil && e.pending.Load() > 0 {
		return nil, invalidArg("%s: comm %p is busy with a non-blocking call (ncclCommGetAsyncError says ncclInProgress until it is done)", fn, e.handle)
	}
	return st, err
}

// async is ncclCommGetAsyncError's answer, as an error: errInProgress
// while the communicator is being made or background work uses it; then
// why it could not be made, the first failure of such work, or its
// communicator's error — none once a shrink replaced it (shrunk).
func (e *commEntry) async() error {
	st := e.state.Load()
	switch {
	case st == nil || e.pending.Load() > 0:
		return errInProgress
	case st.err != nil:
		return st.err
	case e.shrunk.Load():
		return nil
	}
	if err := e.bgErr.Load(); err != nil {
		return *err
	}
	return st.comm.Err()
}

// launch enqueues call on c, the entry's communicator, on the stream with
// handle stream of c's GPU.
func (e *commEntry) launch(c rankComm, call *ringo.DeviceCall, stream uintptr) error {
	e.mu.Lock()
	defer e.mu.Unlock() // a panicking launch must not leave the rank locked
	return c.DoDevice(context.Background(), *call, ringo.StreamHandle(c.GPU(), stream))
}

// close closes c, the entry's communicator, after any launch under way.
func (e *commEntry) close(c rankComm) error {
	e.mu.Lock()
	defer e.mu.Unlock()
	return c.Close()
}

// split is c's part in ncclCommSplit (c is the entry's communicator), after
// any launch under way; a Close waits for it, an Abort cuts it short.
func (e *commEntry) split(ctx context.Context, c rankComm, color, key int, cfg *ringo.Config) (rankComm, error) {
	e.mu.Lock()
	defer e.mu.Unlock()
	return c.Split(ctx, color, key, cfg)
}

// shrink is c's part in ncclCommShrink (c is the entry's communicator):
// after any launch under way, or, with abort, at once — ringo's
// ShrinkAbort stops whatever runs on c.
func (e *commEntry) shrink(ctx context.Context, c rankComm, exclude []int, cfg *ringo.Config, abort bool) (rankComm, error) {
	if !abort {
		e.mu.Lock()
		defer e.mu.Unlock()
	}
	kid, err := c.Shrink(ctx, exclude, cfg, abort)
	if err == nil {
		e.shrunk.Store(true)
	}
	return kid, err
}

// grow is c's part in ncclCommGrow, after any launch under way.
func (e *commEntry) grow(ctx context.Context, c rankComm, newSize int, id *ringo.UniqueID, cfg *ringo.Config) (rankComm, error) {
	e.mu.Lock()
	defer e.mu.Unlock()
	return c.Grow(ctx, newSize, id, cfg)
}
