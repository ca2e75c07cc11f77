// Package p2p is ringo's GPU peer-to-peer transport for the ranks of one
// process: NVLink or PCIe peer access between GPUs, probed once per pair,
// and the connections of a ring laid out in GPU memory — each receiver's
// FIFO slots, tail and LL lines in its own GPU memory, which its
// predecessor's kernel writes into (P2P write, the default), or the Simple
// slots in the sender's memory, which the receiver's kernel reads (P2P read,
// NCCL_P2P_READ_ENABLE=1); the head counter in the sender's memory. Ranks
// that share a GPU connect through that GPU's memory.
//
// Everything here needs the build tag "cuda"; without it Probe and Connect
// return cuda.ErrNoCUDA.
package p2p

import "errors"

// ErrNoPeerAccess: the driver says a GPU cannot access another's memory.
var ErrNoPeerAccess = errors.New("no peer access between the GPUs")
