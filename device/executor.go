package device

import (
	"context"

	"github.com/ringo-ccl/ringo/kernels"
	"github.com/ringo-ccl/ringo/reduce"
	"github.com/ringo-ccl/ringo/ring"
	"github.com/ringo-ccl/ringo/trace"
)

// The executor's API, declared for every build. With the cuda tag rank.go
// and trace.go implement it; without it, New and Resident return
// cuda.ErrNoCUDA (stub.go), so no Rank exists.

// Rank is one rank's device executor: its GPU, its connection table, its
// abort flag and its cache of plans in device memory. Its methods must not
// be called concurrently, except Abort.
type Rank struct{ rankState }

// New returns the executor of the rank on GPU ordinal whose connections
// have the given channels; SetTable gives it their table before its first
// launch. With overlap, where the GPU and driver can (cuda.Device.Overlaps),
// each collective's kernel is launched to overlap the end of the kernel
// before it on its stream: its blocks are placed as that kernel's last
// blocks end, and wait for it to finish before they start (every kernel
// the Rank launches does: kernels/src/common.cuh's ringoAwaitPrevious).
// Between back-to-back calls that spares the GPU part of a launch's gap
// (BENCHMARKS, issue 20: "Launches that overlap").
func New(ordinal, channels int, overlap bool) (*Rank, error) {
	return newRank(ordinal, channels, overlap)
}

// SetTable makes the connection table at device address table, holding t,
// the one the rank's launches from now on use (their steps name t's
// entries). Entries are only ever appended (kernels.Table), so plans
// encoded earlier stay valid. The caller keeps the table's memory until no
// kernel can use it.
func (r *Rank) SetTable(table uintptr, t *kernels.Table) error { return r.setTable(table, t) }

// Resident returns how many blocks of ringo's collective kernels GPU
// ordinal can hold at once: its multiprocessors times the blocks of the
// most demanding kernel that fit on one. A collective's kernel keeps a
// block per channel resident until its ring neighbours' blocks have
// passed it the data, so ranks that share a GPU — their kernels run
// concurrently, on their own streams — must together use no more channels
// than this, or the blocks that did not fit wait for blocks that wait for
// them. The answer is cached per GPU.
func Resident(ordinal int) (int, error) { return residentBlocks(ordinal) }

// Launch enqueues plan p, the rank's collective seq, over the device
// buffers in and out on stream. f is the reduction (nil for collectives
// that only move data).
func (r *Rank) Launch(p *ring.Plan, seq uint64, in, out uintptr, f *reduce.Func, stream uintptr) error {
	return r.launchPlan(p, false, seq, in, out, f, stream)
}

// LaunchSchedule is Launch for a plan of a schedule (ring.Schedule), not
// the planner's: its encoding, not its spec, tells it apart from other
// plans.
func (r *Rank) LaunchSchedule(p *ring.Plan, seq uint64, in, out uintptr, f *reduce.Func, stream uintptr) error {
	return r.launchPlan(p, true, seq, in, out, f, stream)
}

// Local enqueues a collective of a one-rank communicator on stream, whose
// output is its input: in place nothing is enqueued (the call is trivially
// ordered with the stream's work, and a graph capture records nothing), out
// of place the driver copies the bytes at the GPU's copy bandwidth, and a
// reduction whose op has a pre-operation (PreMulSum) runs the scaling
// kernel, as wide as the GPU. f is nil for collectives that only move data.
func (r *Rank) Local(in, out uintptr, bytes int64, f *reduce.Func, stream uintptr) error {
	return r.local(in, out, bytes, f, stream)
}

// DirectArea returns the rank's sync area for direct all-reduces (made on
// first use, on the rank's GPU), with a staging buffer of stage bytes
// after its words (kernels.DirectSyncBytes) for ranks whose inputs the
// others cannot read where they are: every rank of the communicator writes
// to the area, so each must reach it (SetDirect).
func (r *Rank) DirectArea(stage int64) (uintptr, error) { return r.directArea(stage) }

// DirectSync reads the rank's sync area for direct all-reduces (nil
// before the first): what a stalled one waits for, read once its kernels
// have stopped (after Abort), as a stall report says it.
func (r *Rank) DirectSync() (*kernels.DirectSync, error) { return r.directSync() }

// SetDirect readies the rank for direct all-reduces as rank rank of a
// communicator whose ranks' sync areas (DirectArea) are areas, as this
// rank reaches them, summing in the order of the ring order. This rank's
// GPU must reach the others' (the same GPU, peer access, CUDA IPC).
func (r *Rank) SetDirect(rank int, areas []uintptr, order []int) error {
	return r.setDirect(rank, areas, order)
}

// SetWindow records where every rank's window w is as this rank reaches
// it (addrs, by rank; kernels.DirectMaxWindows windows), for direct
// all-reduces of inputs in it (LaunchDirect's kernels.DirectWindow + w).
func (r *Rank) SetWindow(w int, addrs []uintptr) error { return r.setWindow(w, addrs) }

// SetWindowOf records rank q's address in window w alone (a registration:
// one rank's buffer, direct.Peers.Register).
func (r *Rank) SetWindowOf(w, q int, addr uintptr) error { return r.setWindowOf(w, q, addr) }

// LaunchDirect enqueues a direct collective of kind (kernels.OneShot or
// TwoShot: an all-reduce of bytes; DirectReduceScatter: bytes of output a
// rank, its input n times that; DirectAllGather: bytes of input a rank,
// its output n times that — at most kernels.DirectMaxBytes in one shot,
// TwoShotMaxBytes for the others' whole buffer; staged, the input at most
// DirectArea's stage) from in to out with f (nil for an all-gather) on
// stream: every rank of the communicator must make the same call. how
// says where the others read this rank's input (kernels.DirectRaw: at in,
// kernels.DirectStaged: copied to the staging buffer, kernels.DirectWindow
// + w: in window w at offset at). SetDirect must have been called.
func (r *Rank) LaunchDirect(kind kernels.DirectKind, in, out uintptr, bytes int64, f *reduce.Func, how, at uint64, stream uintptr) error {
	return r.launchDirect(kind, in, out, bytes, f, how, at, stream)
}

// EnableTrace makes the rank's kernels record every step's start and end,
// which Wait adds to rec as events of process rank. It must be called
// before the first launch.
func (r *Rank) EnableTrace(rec *trace.Recorder, rank int) error { return r.enableTrace(rec, rank) }

// Wait returns when every launch on stream has finished. When ctx ends
// first it aborts the rank, waits for the kernels to stop, and returns
// ErrTimeout (or ctx's error); an error of the stream's work (an illegal
// memory access, say) is returned as it is.
func (r *Rank) Wait(ctx context.Context, stream uintptr) error { return r.wait(ctx, stream) }

// Abort raises the rank's abort flag: its running and future kernels stop
// at their next check. It is safe to call from any goroutine, during and
// after Close too (it then does nothing).
func (r *Rank) Abort() { r.abort() }

// Close frees the rank's plans and flag. No kernel may be running.
func (r *Rank) Close() error { return r.close() }
