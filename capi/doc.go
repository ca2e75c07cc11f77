// Command capi is ringo's C ABI: built with -buildmode=c-shared it is
// libnccl.so.2, a stand-in for NCCL that programs built against NCCL's
// header — nccl-tests, PyTorch — load unmodified (scripts/build-libnccl.sh).
// Every function of include/nccl.h (NCCL 2.27.7, plus 2.28's ncclAlltoAll,
// ncclGather and ncclScatter) is exported with that exact C signature, plus
// a pncclX alias of each; so are two functions of newer NCCLs that PyTorch
// 2.11 links against — ncclDevCommCreate and ncclDevCommDestroy — which
// nccl_abi.c declares itself and refuses.
//
// # Layers
//
// nccl_abi.c defines the nccl* functions. It includes nccl.h, so the C
// compiler checks every prototype against the header, and forwards each call
// to a Go export named ringo* (exports.go) that takes only Go types. The Go
// exports recover any panic (ncclInternalError) and turn errors into
// ncclResult_t codes and ncclGetLastError's text. The work is done by the
// methods of library (api.go; init.go creates and destroys communicators,
// collective.go launches, p2p.go, p2p_run.go and stage.go send and receive,
// group.go ends groups, memory.go allocates and registers, ops.go makes
// operators) over three tables: communicator handles (handles.go, entry.go),
// reduction operators (ops.go) and the threads' groups with the creations of
// ranks and the sends and receives deferred to their ends (registry.go).
// cuda_cuda.go holds the few driver calls the ABI makes itself (current
// device, ncclMemAlloc, ncclMemFree, and the stream work around sends and
// receives); cuda_stub.go answers them in a build without the cuda tag.
//
// # Handles
//
// An ncclComm_t is a 16-byte block of C memory holding a magic word and an
// index into the Go handle table, never a Go pointer. A destroyed handle's
// block is marked dead and never freed, so a second ncclCommDestroy, or any
// call with a destroyed handle, is reported as ncclInvalidArgument rather than
// reading freed memory (16 bytes per communicator ever destroyed). ncclRedOp_t
// values from ncclRedOpCreatePreMulSum are ncclNumOps + an index into the
// operator table, owned by the communicator they were made for and freed
// with it; registration handles are small C blocks. ncclCommDestroy and
// ncclCommAbort of NULL are no-ops, as in NCCL; any other NULL, destroyed or
// unknown handle is ncclInvalidArgument naming the argument. A handle whose
// group has not ended yet, or whose communicator a non-blocking call is
// still making or using, is ncclInvalidArgument too, except to
// ncclCommGetAsyncError, which reports it ncclInProgress (# Non-blocking
// communicators).
//
// # Creating communicators
//
// Every rank is made by its own call of ringo.NewGPUComm (the library's join
// hook): the ranks of an ncclUniqueId meet through ringo's TCP bootstrap,
// whose root ncclGetUniqueId started in the process that made the id. They
// may be in one process (threads, or one thread's group: they then share GPU
// memory directly), in several (torchrun's one rank per process: CUDA IPC or
// host shared memory), or both. The root must outlive the ranks, since it
// also reports dead ones; ringo stops it once every rank has closed.
//
// ncclCommInitRank* takes (unique id, nranks, rank, current CUDA device,
// config). Outside a group the calling thread blocks in ringo until all nranks
// ranks have joined (unless the communicator is non-blocking: # Non-blocking
// communicators). Inside ncclGroupStart/End it returns at once, writing the
// handle (ncclCommGetAsyncError says ncclInProgress, other calls
// ncclInvalidArgument), and the thread's outermost ncclGroupEnd runs every
// creation deferred in the group concurrently, one goroutine each — they wait
// for each other in the bootstrap — and blocks until all are done; its result
// is the first failure, and each handle holds its own outcome. This process
// refuses a second ncclCommInitRank* of a rank of an id it is already making,
// and an nranks differing from its other ranks' of that id; ringo's root
// checks the same across processes. Each creation is bounded by RINGO_TIMEOUT
// (a Go duration or seconds; default 5 minutes; zero or negative: no limit),
// counted from the call outside a group or from the group's end; ringo's error
// names the ranks that never joined and maps to ncclSystemError, and the
// library adds the ranks of the id it holds back in a group that has not
// ended. A handle destroyed before its group ends is dropped from it; one
// destroyed while being made is closed once made; one aborted while being made
// has its creation cancelled (ringo gives up at once, and a blocking call or
// group end waiting for it fails), so ncclCommAbort does not wait for ranks
// that may never come. The ranks of one communicator in one process are
// released together by the last of them destroyed (one thread may destroy them
// one after another, as nccl-tests does): the others' ncclCommDestroy returns
// at once; the last waits for all their work, then for the ranks of other
// processes to be destroyed too (at most 10 seconds; they may still read this
// process's memory), then frees it all.
//
// ncclCommSplit is each parent rank's call of ringo's Split, collective over
// every rank of the parent (in any process): like an init, it blocks outside a
// group (unless non-blocking) and is deferred to the group's end inside one;
// ranks of one color form a communicator ordered by (key, parent rank), and
// NCCL_SPLIT_NOCOLOR gets NULL. ncclCommInitAll is uniform with the rest: a
// fresh unique id, then one concurrent join per device (rank i on devlist[i]);
// it blocks, in a group or not, and its communicators split like any other.
// Ranks of one communicator may share a GPU — a device listed twice, or
// torchrun's ranks on a machine with fewer GPUs — which NCCL refuses
// ("Duplicate GPU"): their channels are capped so that their kernels fit on
// the GPU together (ringo.NewGPUComm); ranks in separate processes on one GPU
// take turns on it (the driver time-slices their contexts, or MPS runs them at
// once), so they are slower than ranks of one process.
//
// ncclCommShrink (NCCL 2.27), ncclCommRevoke, ncclCommGetUniqueId and
// ncclCommGrow (2.29) are ringo's Shrink (ShrinkAbort under
// NCCL_SHRINK_ABORT), Revoke, GrowID and Grow (JoinGrow for a new rank, which
// passes a NULL comm): shrink and grow make their communicators as
// ncclCommSplit does, blocking outside a group (unless non-blocking) and
// deferred to its end inside one. ncclCommRevoke returns ncclSuccess at once
// (never ncclInProgress); NCCL_SHRINK_ABORT does not wait for a launch under
// way on another thread. Every rank the C ABI makes is a ringo.NewGPUComm rank
// (ncclCommInitAll's too), which ringo shrinks and grows over its bootstrap,
// each rank on its GPU. Tested with fakes; not yet run on a GPU.
//
// # Non-blocking communicators
//
// A communicator is non-blocking when its ncclConfig_t says blocking = 0
// (a split, shrink or grow without a config takes its parent's), or under
// NCCL_COMM_BLOCKING=0 whatever its config, NULL too; NCCL_COMM_BLOCKING=1
// makes every one blocking. RINGO_COMM_BLOCKING is read first; another
// number is ignored with a warning, as NCCL ignores it, and text is
// ncclInvalidArgument naming the variable.
//
// Outside a group, ncclCommInitRankConfig, ncclCommInitRankScalable,
// ncclCommSplit, ncclCommShrink and ncclCommGrow of a non-blocking
// communicator write its handle and return at once, its creation running
// in the background (bounded by RINGO_TIMEOUT, as a blocking one's): they
// return its async state, ncclInProgress while it runs. Inside a group they
// return ncclSuccess, as NCCL's do, and the outermost ncclGroupEnd of a
// group of non-blocking creations returns ncclInProgress, running them, and
// then the group's sends and receives, in the background. Until that work
// is done, ncclCommGetAsyncError says ncclInProgress for every communicator
// it uses — those it makes, the parents of its splits, shrinks and grows
// (an NCCL_SPLIT_NOCOLOR rank, which gets no handle, polls its parent),
// those its sends and receives run on — and their other calls are
// ncclInvalidArgument, as NCCL's ncclCommEnsureReady makes them, but
// ncclCommRevoke of one already made, ncclCommFinalize, ncclCommDestroy and
// ncclCommAbort. Then it says ncclSuccess, or the failure: a creation's for
// its handle (kept, failed, to be destroyed), the sends' and receives' (or
// a panic's) for the communicators they ran on, which report it from then
// on, as NCCL's ncclCommSetAsyncError leaves it.
//
// Blocking and non-blocking communicators in one group — its creations,
// sends and receives; its collectives are launched when called and join no
// group — are refused as in NCCL: the call that brings the second kind
// returns ncclInvalidArgument ("Blocking and nonblocking communicators are
// not allowed in the same group"), and the group's end fails with it,
// running none of its sends and receives; its creations still run, as a
// blocking group's do (in the background if the group is non-blocking).
//
// Nothing else runs in the background; these return ncclSuccess where NCCL
// may return ncclInProgress: collectives, and sends and receives outside a
// group (enqueued when called); a group of sends and receives without
// creations (enqueued before its end returns); ncclCommInitAll (it blocks;
// its communicators follow NCCL_COMM_BLOCKING afterwards);
// ncclCommFinalize (ringo has nothing to flush); ncclCommDestroy (it waits
// for a creation under way, as for a blocking one); ncclCommAbort (it
// cancels the creation); ncclCommRevoke. NCCL decides whether a split,
// shrink or grow blocks by its parent's config, ringo by the new
// communicator's; they differ only when a config passed to the call says
// otherwise. Tested with fakes; not yet run on a GPU.
//
// Group depth is per OS thread, as NCCL's is (thread-local): a group opened
// on one thread is closed on the same thread. Collectives are launched at
// once, inside a group or not: ringo's kernels of different ranks wait for
// each other on the GPUs, so one thread may enqueue rank 0 and then rank 1.
//
// # Point-to-point
//
// ncclSend and ncclRecv, and ncclAlltoAll, ncclGather and ncclScatter
// (NCCL 2.28's, which NCCL makes of sends and receives, and so does the
// library: p2p.go), are checked when called. Outside a group a call's sends
// and receives run at once, as one ringo.SendRecv. Inside one they are
// recorded, in order, and the thread's outermost ncclGroupEnd runs all of
// them, on every communicator, as one ringo.SendRecv once the group's
// creations are done (group.go; in the background for a group of
// non-blocking creations): each communicator's ops as one launch, the
// communicators concurrently. Launched one by one they could not work: two
// ranks exchanging large messages would each wait in its send for the
// other's receive, and a thread driving several ranks would wait in rank 0's
// first connection to a peer for rank 1's. Collectives called inside the
// group are launched when called, so they run before its sends and receives
// on their streams — NCCL orders a group's operations no more than that, and
// every rank of a communicator reorders alike. An argument error inside a
// group is returned by the call and again by the group's end, which then
// runs none of its sends and receives (NCCL's group error). A
// communicator's ops on several streams are launched on the first's, after
// the work enqueued so far on the others, which then wait for the launch,
// as NCCL joins a group's streams (p2p_run.go).
//
// ringo refuses a receive into memory another message of the launch uses;
// NCCL does not, and in-place ncclGather and ncclScatter, and nccl-tests'
// in-place sendrecv and alltoall, rely on it. The library drops a send to
// the rank itself and its receive from itself at one address (nothing to
// copy), and receives any other overlapping message into scratch memory
// (cuMemAllocAsync on the launch's stream) that it then copies to its
// place: the results are those of sends that read their buffers before any
// receive wrote (stage.go). Operations of one group that depend on each
// other's data — a send of what a receive of the same group brings — get
// no such order, in NCCL or here.
//
// Every call may be captured into a CUDA graph (nccl-tests' -G, PyTorch's
// graphs): launches, stream joins, the scratch memory (a capture's
// cuMemAllocAsync is placed only when the graph runs, so ringo's argument
// check lets a buffer of a call on a capturing stream pass when the driver
// cannot place it) and the copies are recorded; each collective's plan is
// uploaded outside the capture when first seen and kept while a graph may
// launch it. nccl-tests' eleven binaries with -G 3 -d all: 0 wrong on one
// H200.
//
// # Configuration
//
// ncclConfig_t is read as NCCL reads it (size first, at most our 72 bytes,
// magic, fields newer than its version reset) and never written. blocking
// = 0 makes a non-blocking communicator, and NCCL_COMM_BLOCKING overrides
// it, as in NCCL (# Non-blocking communicators). The CTA, CGA, net,
// split-share, traffic class, collnet and NVLS fields are validated as NCCL
// validates them and otherwise ignored: ringo takes its channel count and
// protocol from NCCL_MIN_NCHANNELS, NCCL_MAX_NCHANNELS and NCCL_PROTO.
//
// # Errors
//
// ncclGetLastError's text is process-wide (NCCL's is too) and lives in one
// of four static C buffers used in turn, so a returned pointer stays valid
// and unchanged until three more errors have been recorded. Go errors map to
// results: ErrInvalidArgument → ncclInvalidArgument; ErrNotSupported →
// ncclInvalidUsage; ErrPeerLost → ncclRemoteError; ErrTimeout and ErrAborted
// → ncclSystemError (NCCL 2.27 has no timeout code); CUDA driver errors →
// ncclUnhandledCudaError; anything else → ncclInternalError. What ringo
// does not do is ncclInvalidUsage with a message saying so: memory windows, ncclGroupSimulateEnd, more than one id in
// ncclCommInitRankScalable, ncclDevCommCreate,
// ncclDevCommDestroy, and PreMulSum scalars in device memory
// (ncclScalarDevice: NCCL reads those when the kernel runs, ringo's kernels
// take the scalar by value). NCCL_DEBUG (RINGO_DEBUG first) = VERSION, WARN
// or INFO prints, on standard error, the version banner, warnings for failed
// calls and one "Init COMPLETE" line per rank created.
//
// # CUDA
//
// The library does not initialise the CUDA driver when it is loaded (NCCL
// does not either, and a process that forks before using CUDA depends on
// it); it calls cuInit on first use. gorgonia.org/cu, below ringo, calls
// cuInit from a package initialiser and exits the process when that fails, as
// it does on a machine without a GPU: cuinit_hook.c gives that call a
// private, do-nothing cuInit, and the library calls the driver's own. Calls
// that may switch CUDA contexts (creation, collectives, destruction, memory)
// restore the calling thread's current context before returning, so the
// application's current device never changes under it.
package main

// main is required by -buildmode=c-shared and never runs.
func main() {}
