// Package group holds what the ranks of one communicator share, behind the
// root's Comm: Group, the interface a rank calls at each call's entry and
// exit, when it fails, and when it closes; World, the group of ranks that
// all live in this process (their call records in a calls.Table, one
// abort flag, and what they free together); and Procs, the group of a rank
// in its own process (the bootstrap and its liveness watcher, RINGO_CHECK's
// comparison of calls, the host ranks' connection mesh, a GPU rank's
// kernels' stop and cleanup, and the Siblings of its process).
//
// ConnectHosts makes a host rank's Procs: it exchanges peer information,
// orders the ring host by host, settles the Simple FIFOs' size from what
// every rank has free in /dev/shm (config.Settings.FitShm), and connects
// the ring's edges through shared memory (package shm) or the net
// transport (package network).
// ConnectGPU (cuda tag) makes a GPU rank's: it exchanges peer information,
// fits the settings to the ranks sharing a GPU, has package p2p choose and
// connect the transport, and starts the rank's device executor, which its
// Release's cleanup closes after the kernels.
//
// Both revoke (Revoke: a World's ranks at once, a Procs' through its
// bootstrap's notices) and know which ranks are gone (Lost: a World's as
// World.Lose marks them, a Procs' as its bootstrap learned). A World's
// ranks meet for a shrink, split or grow in memory (Meet, meet.go).
//
// Life cycle: a World is released by the last of its ranks to close; a
// Procs by its rank's Close, once (or, with Siblings, with the last rank
// of its process). Procs.Watch starts routineWatch, which Release stops.
package group
