package config

import (
	"fmt"
	"slices"

	"github.com/ringo-ccl/ringo/internal/env"
	"github.com/ringo-ccl/ringo/internal/peers"
	"github.com/ringo-ccl/ringo/transport"
)

// ShmMargin is how many times the bytes of a host's shared-memory
// segments at RoomySimple every rank of that host must have seen free in
// /dev/shm for the communicator to take RoomySimple. The segments counted
// are those made at once, for the ring; the rest of the margin is for what
// comes later and is not counted: the one-shot board (2 slots of
// host.BoardSlot per rank), the point-to-point connections a pair makes
// on its first Send/Recv, the communicators a job makes after this one
// (a hierarchical variant's, PyTorch's process groups: each measures
// again, after this one's segments took their space), and other programs.
const ShmMargin = 2

// FitShm settles the Simple FIFO of host ranks in separate processes,
// once they have exchanged their Info (ps, by rank) and before any FIFO
// exists: RoomySimple where every host's /dev/shm has room for it
// (ShmShort), else Sizes.Simple, which it leaves. edges are the
// connections the communicator makes at once, link reports which of them
// go through /dev/shm. Every rank computes the same from the same ps,
// edges and link, so both ends of each connection have one size; ranks
// that would decide differently — one set NCCL_BUFFSIZE, another left it
// open — already differ in their Fingerprint, which names both sizes, and
// Exchange refused them. The choice holds for every connection of the
// communicator, the network's too (heap memory, as NCCL's 4-MiB default).
func (s *Settings) FitShm(ps []peers.Info, edges []transport.Edge, link func(from, to int) bool) {
	if s.RoomySimple <= s.Sizes.Simple {
		return
	}
	roomy := s.Sizes
	roomy.Simple = s.RoomySimple
	if short := ShmShort(ps, edges, link, roomy.Bytes()); short != "" {
		env.Info(env.SubInit|env.SubShm, "Simple FIFOs of %d bytes, not %d: %s (NCCL_BUFFSIZE sets the size)", s.Sizes.Simple, roomy.Simple, short)
		return
	}
	env.Info(env.SubInit|env.SubShm, "Simple FIFOs of %d bytes: every host's /dev/shm has %d× room for them", roomy.Simple, ShmMargin)
	s.Sizes = roomy
}

// ShmShort returns why some host's /dev/shm lacks room for the segments
// its ranks make for the connections of edges that link sends through
// shared memory, of perConn bytes each (transport.Sizes.Bytes), with
// ShmMargin to spare; "" where every host has room. A host is the ranks
// that share one /dev/shm (peers.Info.SameHost). A rank's segment holds
// its receiving ends (package shm), so a host's segments take perConn
// bytes for each connection one of its ranks receives, and every one of
// its ranks must have seen ShmMargin times that free: each measured on
// its own, at its own moment, and the smallest report counts. A rank
// that could not measure reported 0.
func ShmShort(ps []peers.Info, edges []transport.Edge, link func(from, to int) bool, perConn int) string {
	hostOf := make([]int, len(ps)) // each rank's host, by its first rank's place in heads
	var heads []int
	for r, p := range ps {
		h := slices.IndexFunc(heads, func(q int) bool { return ps[q].SameHost(p) })
		if h < 0 {
			h, heads = len(heads), append(heads, r)
		}
		hostOf[r] = h
	}
	conns := make([]uint64, len(heads))
	for _, e := range edges {
		if link(e.From, e.To) {
			conns[hostOf[e.To]]++
		}
	}
	for r, p := range ps {
		n := conns[hostOf[r]]
		if need := ShmMargin * n * uint64(perConn); p.ShmFree < need {
			return fmt.Sprintf("rank %d's /dev/shm (host %s) has %d bytes free, less than %d× the %d bytes its host's segments take (%d connections)",
				r, p.Host, p.ShmFree, ShmMargin, n*uint64(perConn), n)
		}
	}
	return ""
}
