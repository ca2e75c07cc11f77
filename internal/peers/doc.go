// Package peers holds what the ranks of a communicator in separate
// processes tell each other before they connect, and what the ranks of one
// communicator that share this process hold together.
//
// Exchange all-gathers every rank's Info (host, process, /dev/shm device
// and its free bytes, CPUs, GPU, the fingerprint of its settings) over the
// bootstrap and refuses ranks whose settings or shared-memory switch
// differ; Ring orders the ranks host by host; HostID names this host
// (NCCL_HOSTID). Split is ncclCommSplit's rendezvous: the ranks of one
// color ordered by key, the new communicator's id made by the first and
// handed to the others (Part).
// Shrink is ncclCommShrink's: the survivors of a loss agree on whom they
// exclude and on the new id, over their point-to-point connections (the
// root and the ring may have died with a rank). Grow is ncclCommGrow's: the
// existing ranks agree on the new size and the coordinator's id.
// Siblings are the ranks of one communicator in this process: they check each
// other's streams and release their memory together, when the last of
// them closes.
//
// In the path of a communicator's making it sits between the bootstrap's
// join and the transports' choice (package shm and network for host ranks,
// package p2p for GPU ranks); Siblings live until the communicator's
// ranks in this process have closed.
package peers
