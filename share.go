package ringo

import (
	"fmt"
	"slices"

	"github.com/ringo-ccl/ringo/device"
	"github.com/ringo-ccl/ringo/internal/cuda/queues"
	"github.com/ringo-ccl/ringo/internal/env"
)

// gpuShare is one GPU of a communicator: how many of its ranks run there,
// and how many blocks of ringo's collective kernels it holds at once
// (device.Resident).
type gpuShare struct {
	name     string // for messages: "GPU 0", or a UUID across processes
	ranks    int
	local    int // of them, ranks of this process (sharing its context)
	resident int
}

// fitShared caps the channels so that the kernels of every GPU's ranks are
// resident together. A rank's kernel keeps a block per channel until its
// ring neighbours have passed it the data, and the kernels of ranks sharing
// a GPU run at once, so a GPU whose ranks' blocks did not all fit would
// hold blocks that wait for blocks that cannot start. NCCL refuses a second
// rank on a GPU; ringo fits them, or says how many fit: a Config.Channels
// above the cap, or a GPU too small for one channel per rank, is an error.
func (s *settings) fitShared(gpus []gpuShare) error {
	limit, at := s.channels, gpuShare{}
	for _, g := range gpus {
		// Each local rank's stream, and the legacy stream's synchronous
		// copies, on a hardware queue of its own (package queues).
		conns := queues.Connections()
		switch {
		case g.local <= 1 || g.local+1 <= conns:
		case g.local+1 > queues.Most:
			return fmt.Errorf("%w: %d ranks of this process share %s: at most %d fit (their streams need a hardware queue each, and the legacy stream one; CUDA has %d)",
				ErrInvalidArgument, g.local, g.name, queues.Most-1, queues.Most)
		default:
			return fmt.Errorf("%w: %s=%d: %d ranks of this process share %s, and their kernels, each waiting for the others on a stream of its own, can wait behind each other forever on fewer hardware queues than ranks plus one: set it to at least %d (at most %d), or leave it unset",
				ErrInvalidArgument, queues.Variable, conns, g.local, g.name, g.local+1, queues.Most)
		}
		if per := g.resident / g.ranks; per < limit {
			limit, at = per, g
		}
	}
	switch {
	case limit == s.channels:
		return nil
	case limit < 1:
		return fmt.Errorf("%w: %d ranks share %s, which holds %d blocks of ringo's kernels at once: at most %d ranks fit there",
			ErrInvalidArgument, at.ranks, at.name, at.resident, at.resident)
	case s.channelsGiven:
		return fmt.Errorf("%w: config: Channels %d: %d ranks share %s, which holds %d blocks of ringo's kernels at once, so %d channels each fit",
			ErrInvalidArgument, s.channels, at.ranks, at.name, at.resident, limit)
	}
	env.Info(env.SubInit, "%d ranks share %s (%d blocks resident at once): %d channels instead of %d", at.ranks, at.name, at.resident, limit, s.channels)
	s.channels, s.minChannels = limit, min(s.minChannels, limit)
	return nil
}

// sharesOf counts the ranks of each GPU of gpus (rank r on gpus[r]) and
// asks each how many blocks it holds.
func sharesOf(gpus []int) ([]gpuShare, error) {
	var out []gpuShare
	for r, g := range gpus {
		if slices.Contains(gpus[:r], g) {
			continue
		}
		res, err := device.Resident(g)
		if err != nil {
			return nil, err
		}
		n := count(gpus, g)
		out = append(out, gpuShare{name: fmt.Sprintf("GPU %d", g), ranks: n, local: n, resident: res})
	}
	return out, nil
}

// count returns how many elements of s are v.
func count[T comparable](s []T, v T) int {
	n := 0
	for _, x := range s {
		if x == v {
			n++
		}
	}
	return n
}
