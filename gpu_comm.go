package ringo

import "context"

// NewLocalGPUs makes one rank per entry of gpus, rank r on GPU gpus[r], all
// in this process and connected through GPU peer-to-peer access (NVLink or
// PCIe). An ordinal may repeat — several ranks on one GPU, which NCCL
// forbids and a workstation with one GPU needs; their kernels then run
// concurrently, each rank on a stream of its own, with the channels capped
// so that they fit on the GPU together (an error says how many ranks fit).
// cfg may be nil. In a build without the cuda tag it returns an error
// wrapping ErrNotSupported.
func NewLocalGPUs(gpus []int, cfg *Config) ([]*Comm, error) { return newLocalGPUs(gpus, cfg) }

// NewGPUComm makes this process rank rank of the nranks-rank communicator
// that id names, running on GPU gpu: one process per GPU, as torchrun and
// mpirun start them. The ranks meet through the bootstrap, then connect
// their GPUs: through peer access (each rank's connections in its GPU's
// memory, shared with its ring neighbours by CUDA IPC) when every pair of
// neighbours has it and NCCL_P2P_DISABLE is not set, else through host
// shared memory in /dev/shm registered with CUDA (unless NCCL_SHM_DISABLE).
// Every rank calls it with the same id and nranks; it returns once all have
// connected, or fails when ctx ends first. In a build without the cuda tag
// it returns an error wrapping ErrNotSupported.
func NewGPUComm(ctx context.Context, id UniqueID, nranks, rank, gpu int, cfg *Config) (*Comm, error) {
	return newGPUComm(ctx, id, nranks, rank, gpu, cfg)
}
