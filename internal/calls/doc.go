// Package calls holds what a communicator's ranks record of their
// collectives: each rank's latest call (Record: its sequence number,
// collective, count, datatype, op, root and, for a GPU rank, its stream),
// the comparisons that catch ranks disagreeing on a collective (Mismatch)
// or two ranks of one process enqueueing it on one stream (SameStream),
// the records of a process's ranks (Table), their exchange between
// processes under RINGO_CHECK=1 (Compare), and the stall report of a
// collective that timed out (StallReport).
//
// In the path of one call it sits at the entry: the root's check.go
// numbers the call and hands its Record to the communicator's group
// (an in-process world's Table, or a process group's Compare), before any
// plan is built.
package calls
