// Package p2p connects GPU ranks: it chooses a GPU rank's transport and
// lays its connections out in memory its kernels reach.
//
// The connections of a ring are laid out (Layout) the same way whatever
// carries them: each receiver's FIFO slots, tail and LL lines in its own
// region, which its predecessor's kernel writes into (P2P write, the
// default), or the Simple slots in the sender's region, which the
// receiver's kernel reads (P2P read, NCCL_P2P_READ_ENABLE=1); the head
// counter in the sender's region. Peer access between two GPUs (NVLink or
// PCIe) is probed once per pair (Probe); ranks that share a GPU connect
// through that GPU's memory.
//
// Ranks of one process: Connect wires a whole ring in GPU memory.
//
// Ranks in processes (one file per transport): Rank.Select is NCCL's
// selectTransport — every rank probes the link to its ring successor, the
// answers are all-gathered, and all choose alike, in NCCL's order: CUDA IPC
// when every pair of neighbours has peer access on one host (ipc_cuda.go),
// else /dev/shm segments registered with CUDA on one host unless
// NCCL_SHM_DISABLE (shm_cuda.go), else the network: host memory registered
// with CUDA, moved by package network's proxies (net_cuda.go). The Choice
// also carries the LL128 facts (a link where it is unsafe; FIFOs in host
// memory), which the caller's settings act on before Rank.Connect makes
// the connections, uploads the kernels' connection table and returns it
// with what frees it. In the path of one communicator's making, this sits
// after the bootstrap and the peers' exchange, before the device executor
// (package device) is started over the table.
//
// Everything but Layout, Probe and the choice's values needs the build tag
// "cuda"; without it Probe returns cuda.ErrNoCUDA.
package p2p

import "errors"

// ErrNoPeerAccess: the driver says a GPU cannot access another's memory.
var ErrNoPeerAccess = errors.New("no peer access between the GPUs")
