// Package device is ringo's device executor: it runs one rank's ring plan
// (package ring) on its GPU as one kernel launch — one block per channel,
// each block interpreting its channel's steps with the plan's protocol
// (Simple, LL or LL128) over the rank's connections (package p2p) —
// enqueued on the caller's stream.
//
// Plans are encoded once per distinct call shape and kept in device memory,
// so a steady stream of collectives costs one launch each; past PlanCache
// shapes the least recently used plans whose kernels have finished (a
// fence event recorded every few launches says so) give their memory to
// new plans, and plans a CUDA graph may replay are kept until Close. Every
// spin loop of the kernels polls an abort flag in mapped host memory:
// Abort stops a running collective and Wait turns a deadline into an
// abort, so no kernel waits forever for a peer that never comes.
//
// Where the GPU and driver allow it (Hopper on, CUDA 12.3 on), a
// collective's kernel is launched to overlap the end of the kernel before
// it on the stream (programmatic dependent launch): its blocks are placed
// as that kernel's last blocks finish, and wait at their top until it has
// retired. Every kernel launched here so waits, and lets its successor
// launch only after its own last step, so a successor's blocks never hold
// multiprocessors a running kernel (or a peer's, on a shared GPU) needs.
//
// It also holds the public API's GPU memory and streams by ordinal and
// address (memory.go: Alloc, CopyHtoD, NewStream, CheckPtr …), a rank's
// check of its calls' device buffers and stream (Checker, which remembers
// the allocations it has seen), and SyncBounded, the wait for a GPU's work
// that aborts it past a timeout, which closing a communicator uses.
//
// Everything here but SyncBounded needs the build tag "cuda"; without it
// New returns cuda.ErrNoCUDA and the memory functions an error wrapping
// errs.ErrNotSupported and cuda.ErrNoCUDA.
package device
