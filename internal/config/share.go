package config

import (
	"fmt"
	"slices"

	"github.com/ringo-ccl/ringo/internal/cuda/queues"
	"github.com/ringo-ccl/ringo/internal/env"
	"github.com/ringo-ccl/ringo/internal/errs"
	"github.com/ringo-ccl/ringo/internal/peers"
	"github.com/ringo-ccl/ringo/ring"
)

// GPUShare is one GPU of a communicator: how many of its ranks run there,
// and how many blocks of ringo's collective kernels it holds at once
// (device.Resident).
type GPUShare struct {
	Name     string // for messages: "GPU 0", or a UUID across processes
	Ranks    int
	Local    int // of them, ranks of this process (sharing its context)
	Resident int
}

// FitShared caps the channels so that the kernels of every GPU's ranks are
// resident together. A rank's kernel keeps a block per channel until its
// ring neighbours have passed it the data, and the kernels of ranks sharing
// a GPU run at once, so a GPU whose ranks' blocks did not all fit would
// hold blocks that wait for blocks that cannot start. NCCL refuses a second
// rank on a GPU; ringo fits them, or says how many fit: a Config.Channels
// above the cap, or a GPU too small for one channel per rank, is an error.
func (s *Settings) FitShared(gpus []GPUShare) error {
	limit, at := s.Channels, GPUShare{}
	for _, g := range gpus {
		// Each local rank's stream, and the stream of the device's
		// synchronous copies (package cuda), on a hardware queue of its
		// own (package queues).
		conns := queues.Connections()
		switch {
		case g.Local <= 1 || g.Local+1 <= conns:
		case g.Local+1 > queues.Most:
			return fmt.Errorf("%w: %d ranks of this process share %s: at most %d fit (their streams need a hardware queue each, and the device's copies one; CUDA has %d)",
				errs.ErrInvalidArgument, g.Local, g.Name, queues.Most-1, queues.Most)
		default:
			return fmt.Errorf("%w: %s=%d: %d ranks of this process share %s, and their kernels, each waiting for the others on a stream of its own, can wait behind each other forever on fewer hardware queues than ranks plus one: set it to at least %d (at most %d), or leave it unset",
				errs.ErrInvalidArgument, queues.Variable, conns, g.Local, g.Name, g.Local+1, queues.Most)
		}
		if per := g.Resident / g.Ranks; per < limit {
			limit, at = per, g
		}
	}
	switch {
	case limit == s.Channels:
		return nil
	case limit < 1:
		return fmt.Errorf("%w: %d ranks share %s, which holds %d blocks of ringo's kernels at once: at most %d ranks fit there",
			errs.ErrInvalidArgument, at.Ranks, at.Name, at.Resident, at.Resident)
	case s.ChannelsGiven:
		return fmt.Errorf("%w: config: Channels %d: %d ranks share %s, which holds %d blocks of ringo's kernels at once, so %d channels each fit",
			errs.ErrInvalidArgument, s.Channels, at.Ranks, at.Name, at.Resident, limit)
	}
	env.Info(env.SubInit, "%d ranks share %s (%d blocks resident at once): %d channels instead of %d", at.Ranks, at.Name, at.Resident, limit, s.Channels)
	s.Channels, s.MinChannels = limit, min(s.MinChannels, limit)
	return nil
}

// SharedP2P gives the point-to-point calls of ranks of one process on one
// or two GPUs the whole channel budget, MaxChannels, unless
// NCCL_MAX_P2P_NCHANNELS sets it: their sends copy straight into the
// receivers' buffers (ring.P2PSpec.Direct), so a channel is one block's
// copy. On one H200, 64 channels took 2 ranks' send/recv from 779 to 967
// GB/s, 4 ranks' from 253 to 375; on two H200s joined by NVLink (nccl-tests
// -g 2, 3 rounds) send/recv from 314 to 348–350 GB/s at 512 MiB and
// 196–214 to 234–236 at 8 MiB, all-to-all from 257 to 294–296 at 1 GiB
// (BENCHMARKS, issue 20). More GPUs keep NCCL's default: not measured.
func (s *Settings) SharedP2P(gpus []GPUShare) {
	ranks := 0
	for _, g := range gpus {
		ranks += g.Ranks
	}
	if len(gpus) <= 2 && ranks > 1 && !s.P2PChannelsGiven {
		s.P2PChannels = ring.MaxChannels
	}
}

// RankStripe returns a rank's ring.P2PSpec.Stripe, in bytes, on a
// communicator of this process whose ranks are on gpus: where all are on
// one GPU and their messages may go direct (not DirectOff), its share of
// P2PStripe; else 0 (whole parts).
func (s *Settings) RankStripe(gpus []GPUShare) int64 {
	if len(gpus) != 1 || s.DirectOff {
		return 0
	}
	return int64(s.P2PStripe / gpus[0].Ranks)
}

// LocalShares counts the ranks of each GPU of gpus (rank r on gpus[r], all
// of this process) and asks resident (device.Resident) how many blocks it
// holds.
func LocalShares(gpus []int, resident func(gpu int) (int, error)) ([]GPUShare, error) {
	var out []GPUShare
	for r, g := range gpus {
		if slices.Contains(gpus[:r], g) {
			continue
		}
		res, err := resident(g)
		if err != nil {
			return nil, err
		}
		n := count(gpus, g)
		out = append(out, GPUShare{Name: fmt.Sprintf("GPU %d", g), Ranks: n, Local: n, Resident: res})
	}
	return out, nil
}

// PeerShares counts the ranks of each GPU of a communicator whose ranks
// are processes, as rank rank sees them (ps: every rank's Info; Local
// counts the ranks of rank's process).
func PeerShares(ps []peers.Info, rank int) []GPUShare {
	var shares []GPUShare
	at := map[string]int{}
	for _, p := range ps {
		key := fmt.Sprint(p.Host, p.ShmDev, p.GPU)
		local := 0
		if p.Pid == ps[rank].Pid && p.SameHost(ps[rank]) {
			local = 1
		}
		if i, ok := at[key]; ok {
			shares[i].Ranks++
			shares[i].Local += local
			continue
		}
		at[key] = len(shares)
		shares = append(shares, GPUShare{Name: "GPU " + p.GPU, Ranks: 1, Local: local, Resident: p.Resident})
	}
	return shares
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
