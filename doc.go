// Package ringo is a collective communication library: NCCL's Ring
// algorithm — all-reduce, reduce-scatter, all-gather, broadcast and reduce —
// reimplemented from scratch in Go.
//
// A Comm is one rank of a communicator. NewLocal makes all n ranks of a
// communicator inside one process, one Comm per rank, joined by in-memory
// connections; each rank is then driven by its own goroutine, exactly as each
// rank of an MPI or torchrun job is driven by its own process:
//
//	comms, err := ringo.NewLocal(4, nil)
//	...
//	go func() { err := ringo.AllReduce(ctx, comms[r], send, recv, ringo.OpSum) }()
//
// Collectives are generic over the element type (int8 … float64 and ringo's
// Float16, BFloat16, Float8E4M3 and Float8E5M2), so a float16 buffer cannot
// be passed as float32. Comm.Do takes untyped byte buffers with a DataType
// for callers that learn the type at run time; each DataType is named after
// its element type (TypeFloat32, TypeFloat16, …; TypeOf[T]() gives T's).
//
// Point-to-point (sendrecv.go): Send and Recv between any two ranks,
// SendRecv for a group of them (SendOp, RecvOp) on one or several
// communicators, and AllToAll, AllToAllV, Gather and Scatter, which every
// rank calls. Sends and receives match by order per pair of ranks, as in
// NCCL. Host communicators only; between ranks in separate processes only
// the calls every rank makes (the others return ErrNotSupported).
//
// # Concurrency
//
// A Comm is used by one goroutine at a time; a second concurrent call on the
// same Comm returns an error instead of corrupting the ring. Different Comms
// — the ranks of one communicator, or different communicators — may be used
// concurrently. Every rank must issue the same collectives, with the same
// counts, datatypes, ops and roots, in the same order (as with NCCL); a
// mismatch between in-process ranks is detected and reported. Send, Recv
// and SendRecv involve only the ranks they name and are not numbered among
// the collectives; a group's ops on several communicators run concurrently,
// one goroutine per communicator, all finished when SendRecv returns.
//
// # Errors
//
// Errors are values of type *Error locating the failure (operation, rank,
// peer, channel, step) and wrap one of the sentinels ErrInvalidArgument,
// ErrTimeout, ErrAborted, ErrPeerLost, ErrRevoked or ErrNotSupported, or
// the context's error. Bad arguments are reported before anything moves and leave the Comm
// usable. A failure in the middle of a collective (a deadline, a cancelled
// context, Abort) leaves the ring's connections in an unknown state: every
// rank of the communicator then fails with ErrAborted until it is closed.
// Nothing waits forever: a call is bounded by its context's deadline or, when
// the context has none, by Config.Timeout (RINGO_TIMEOUT, default 5 minutes).
//
// # Surviving a lost rank
//
// A broken communicator is not the end of the job (shrink.go, revoke.go,
// grow.go; host communicators only — GPU ones return ErrNotSupported):
//
//	err := ringo.AllReduce(ctx, c, send, recv, ringo.OpSum) // ErrPeerLost, naming rank 2
//	lost := c.Lost()                                        // [2], on every survivor
//	nc, err := c.ShrinkAbort(ctx, lost, nil)                // the survivors, renumbered
//	c.Close()
//
// Lost lists the ranks the library knows are gone. Revoke (NCCL's
// ncclCommRevoke) makes every rank's calls fail with ErrRevoked, so that
// survivors stop together. Shrink (NCCL_SHRINK_DEFAULT: this rank idle)
// and ShrinkAbort (NCCL_SHRINK_ABORT: this rank's work aborted first) make
// a communicator of the ranks that remain; only they call it. GrowID,
// Grow and JoinGrow (ncclCommGetUniqueId, ncclCommGrow) let new ranks join.
// Split splits host communicators too.
//
// Across processes, the survivors must not depend on a dead rank, and the
// dead rank may have run the bootstrap root (a launcher's rank 0 does).
// So they agree — on whom they exclude, and on the new communicator's id —
// over the point-to-point connections of the old communicator's bootstrap,
// which a loss leaves working (package internal/peers, Shrink); the first
// survivor starts the new communicator's root in its own process; the
// data connections are made afresh (shared-memory segments and sockets of
// the new communicator's own), not taken over from the old one: after an
// abort its FIFOs are mid-collective in a state no rank knows, its ring
// had other neighbours, and a host connection costs about a millisecond to
// make. How the bootstrap learns who is gone when its root died with a
// rank: package bootstrap (liveness.go).
package ringo
