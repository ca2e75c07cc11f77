// Package p2p connects GPU ranks: it chooses a GPU rank's transport and
// lays its connections out in memory its kernels reach.
//
// A connection is an edge (transport.Edge: rank to rank on a channel). The
// edges are made in rounds — a ring's channels at init (Edges), then the
// ones a schedule first needs — and Tables gives each its entries in the
// two ranks' connection tables (kernels.Table), alike on every rank: the
// sender's entry holds its send end, the receiver's its receive end, and
// an entry holds a receive end and a send end of one channel (a ring's
// channel c is entry c). Each round's entries are laid out (Layout) in a
// region per rank, the same way whatever carries them: each receive end's
// FIFO slots, tail and LL lines in the receiver's region, which the
// sender's kernel writes into (P2P write, the default), or the Simple
// slots in the sender's region, which the receiver's kernel reads (P2P
// read, NCCL_P2P_READ_ENABLE=1); the head counter in the sender's region.
// Peer access between two GPUs (NVLink or PCIe) is probed once per pair
// (Probe); ranks that share a GPU connect through that GPU's memory.
//
// Ranks of one process: Connect makes the regions in GPU memory, seen
// directly, and Local.Add the later rounds.
//
// Ranks in processes (one file per transport): Rank.Select is NCCL's
// selectTransport — every rank probes the link to its ring successor (and
// whether it reaches every other rank's GPU, for connections off the
// ring), the answers are all-gathered, and all choose alike, in NCCL's
// order: CUDA IPC when every pair of neighbours has peer access on one
// host (ipc_cuda.go), else /dev/shm segments registered with CUDA on one
// host unless NCCL_SHM_DISABLE (shm_cuda.go), else the network: host
// memory registered with CUDA, moved by package network's proxies
// (net_cuda.go). The Choice also carries the LL128 facts (a link where it
// is unsafe; FIFOs in host memory), which the caller's settings act on
// before Rank.Connect makes the first round, uploads the kernels'
// connection table and returns it (Conns; Conns.Add makes later rounds,
// every rank at once). In the path of one communicator's making, this
// sits after the bootstrap and the peers' exchange, before the device
// executor (package device) is started over the table.
//
// Everything but Layout, Tables, Probe and the choice's values needs the build tag
// "cuda"; without it Probe returns cuda.ErrNoCUDA.
package p2p

import "errors"

// ErrNoPeerAccess: the driver says a GPU cannot access another's memory.
var ErrNoPeerAccess = errors.New("no peer access between the GPUs")
