// Package config resolves a communicator's settings: the public Config's
// fields (a Request; ringo.Config documents them) over the environment
// (NCCL_* and RINGO_* variables, read through internal/env with its one
// rule for bad values) and the defaults of a kind of communicator (Host,
// GPU), into Settings: channels, protocols, FIFO sizes, timeout, ring
// order, variant, the on/off switches and the GPU cost model.
//
// Settings are resolved once, at a communicator's making, and then
// adjusted while its connections are made: FitShm settles the Simple
// FIFOs of host ranks in separate processes from the room every host's
// /dev/shm has, FitShared caps the channels so that the kernels of ranks
// sharing a GPU fit there together, PlaceLL128 keeps or drops LL128 once
// the links are known (package p2p's Choice), and Layout gives the GPU
// connections' layout. Fingerprint is what ranks
// in separate processes compare (package peers) before connecting. On
// every call the communicator asks them for the protocol (Protocol on the
// host, GPUChoice with the cost model on GPUs) and FIFO size (BuffSize).
package config
