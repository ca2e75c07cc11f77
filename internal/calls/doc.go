// Package calls holds every call's argument check and what a
// communicator's ranks record of their collectives. Args is a call as its
// entry sees it, host or device buffers alike; Args.Check validates it
// once for both kinds (NCCL's ncclEnqueueCheck), a device call's buffers
// and stream through a DeviceCheck (device.Checker). Then: each rank's
// latest call (Record: its sequence number, collective, count, datatype,
// op, root and, for a GPU rank, its stream), the comparisons that catch
// ranks disagreeing on a collective (Mismatch) or two ranks of one process
// enqueueing it on one stream (SameStream), the records of a process's
// ranks (Table), their exchange between processes under RINGO_CHECK=1
// (Compare), and the stall report of a collective that timed out
// (StallReport).
//
// In the path of one call it sits at the entry: the root's check.go
// checks the call (Args.Check), numbers it and hands its Record to the
// communicator's group (package group: a World's Table, or a Procs'
// Compare), before any plan is built.
package calls
