// Package ring is ringo's planner: a pure function from the description of a
// collective (which collective, how many ranks in which ring order, how many
// elements of which size, how many channels, which protocol and FIFO size) to
// the program each rank runs — per channel, the ordered primitive steps of
// NCCL's Ring algorithm with their peers, buffer offsets, chunk and slice
// lengths.
//
// Nothing here does I/O, touches memory or knows about GPUs: the same Plan is
// run by the host executor (package host) over host memory and by the device
// executor over GPU memory, and it is the same on every machine. A new ring
// variant is a new plan generator (Spec.Variant: NCCL's ring, the one-shot
// all-reduce of two ranks, bidirectional rings; docs/variants.md); Verify
// executes a set of plans symbolically and checks that every element is
// reduced exactly once from every rank and every output element is written,
// so a generator can be tested on a laptop. Schedule (schedule.go) is every
// rank's plan as a versioned JSON document, checked by Verify when read.
//
// Point-to-point plans (p2p.go) come from NewP2P, not New: a rank's sends
// and receives (Xfer: peer, offset, count), matched with the peers' by
// order per pair as NCCL matches ncclSend and ncclRecv, scheduled in
// NCCL's rounds — in round d rank r sends to r+d and receives from r−d,
// round 0 copying to itself — each message cut into chunks spread over
// the channels, a round's send and receive chunks paired in SendRecv steps
// (the primitive with two independent halves, Step.RecvCount), the longer
// side's rest as Send or Recv steps. p2p.go argues why no set of matched
// messages can deadlock; Verify checks delivery (verify_p2p.go). AllToAll,
// AllToAllV, Gather and Scatter give the message lists of those
// collectives. The plans' collective is SendRecvs.
//
// For ring allreduce each rank runs, per loop over its channel's range:
//
//	send, (n−2)×recvReduceSend, recvReduceCopySend, (n−2)×recvCopySend, recv
//
// reduce-scatter is the first half of that sequence, all-gather the second,
// and broadcast and reduce are chains along the ring ending or starting at the
// root (see reference/nccl-internals.md §1.4 and NCCL's src/device/*.h).
package ring

// NSteps is the number of FIFO slots of every connection (NCCL_STEPS).
const NSteps = 8

// MaxChannels is the largest channel count a plan may have (NCCL's MAXCHANNELS).
const MaxChannels = 64
