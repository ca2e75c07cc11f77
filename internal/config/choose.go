package config

import (
	"crypto/sha256"
	"encoding/json"
	"fmt"

	"github.com/ringo-ccl/ringo/internal/env"
	"github.com/ringo-ccl/ringo/internal/errs"
	"github.com/ringo-ccl/ringo/kernels"
	"github.com/ringo-ccl/ringo/p2p"
	"github.com/ringo-ccl/ringo/ring"
)

// Fingerprint is the part of the settings every rank must share: what
// the connections' layout (Layout, and PlaceLL128's choice, which an
// explicit protocol selection changes) and each call's plan (the channel
// range and the GPU cost model) depend on. Its Simple FIFO is the one
// resolved, "1048576|4194304" where FitShm picks one of the two later:
// ranks that would pick differently differ here.
func (s *Settings) Fingerprint() string {
	model := ""
	if s.Model != nil {
		b, _ := json.Marshal(s.Model)
		sum := sha256.Sum256(b)
		model = fmt.Sprintf("%s/%x", s.Model.Machine, sum[:8])
	}
	buff := fmt.Sprint(s.Sizes.Simple)
	if s.RoomySimple > 0 {
		buff += fmt.Sprintf("|%d", s.RoomySimple)
	}
	return fmt.Sprintf("channels=%d..%d protos=%v protoset=%v buffsize=%s llbuffsize=%d ll128buffsize=%d p2pll=%d p2pchannels=%d p2pread=%v directmax=%d twoshotmax=%d gathermin=%d directoff=%v ring=%v variant=%v group=%d model=%s",
		s.MinChannels, s.Channels, s.Protos, s.ProtoFrom != "", buff, s.Sizes.LL, s.LL128Size, s.P2PLLMax, s.P2PChannels, s.P2PRead, s.DirectMax, s.TwoShotMax, s.GatherDirectMin, s.DirectOff, s.Ring.Order, s.Variant, s.Group, model)
}

// GPUChoice picks the protocol (one of protos) and channel count of a GPU
// collective moving bytes (of its larger buffer) with the cost model.
func (s *Settings) GPUChoice(coll ring.Collective, n int, bytes int64, protos [3]bool) (ring.Protocol, int) {
	if ch, ok := s.Model.Choose(coll, n, bytes, protos, s.MinChannels, s.Channels); ok {
		return ch.Proto, ch.Channels
	}
	for _, p := range []ring.Protocol{ring.Simple, ring.LL128} {
		if protos[p] {
			return p, s.Channels
		}
	}
	return ring.LL, s.Channels
}

// Direct returns the direct kernel (device.Rank.LaunchDirect) a GPU
// collective of coll moving bytes per rank (an all-gather's input, a
// reduce-scatter's output) among n ranks runs where the ranks reach each
// other's memory: all-reduces up to DirectMax in one shot, above it up to
// TwoShotMax in two; reduce-scatters and all-gathers whose whole buffer
// (n·bytes) is at least GatherDirectMin and at most DirectStage, which a
// rank in another process stages its input in. kernels.NotDirect: the
// ring, which also runs every call that asks for a protocol or a variant.
func (s *Settings) Direct(coll ring.Collective, bytes int64, n int) kernels.DirectKind {
	if s.ProtoFrom != "" || s.Variant != ring.RingVariant {
		return kernels.NotDirect
	}
	switch coll {
	case ring.AllReduce:
		switch {
		case bytes <= int64(s.DirectMax):
			return kernels.OneShot
		case bytes <= int64(s.TwoShotMax):
			return kernels.TwoShot
		}
	case ring.ReduceScatter, ring.AllGather:
		if whole := bytes * int64(n); whole > s.DirectStage() || whole < int64(s.GatherDirectMin) {
			return kernels.NotDirect
		}
		if coll == ring.ReduceScatter {
			return kernels.DirectReduceScatter
		}
		return kernels.DirectAllGather
	}
	return kernels.NotDirect
}

// DirectStage is the staging buffer a rank of direct collectives needs
// where the others cannot read its input in place: the largest call's
// input.
func (s *Settings) DirectStage() int64 { return int64(max(s.DirectMax, s.TwoShotMax)) }

// DirectFor reports whether a communicator of n GPU ranks sets direct
// all-reduces up at all (where its ranks reach each other's memory):
// RINGO_DIRECT_MAX or RINGO_TWOSHOT_MAX and NCCL_P2P_DIRECT_DISABLE allow
// it, and the kernels take n ranks.
func (s *Settings) DirectFor(n int) bool {
	return (s.DirectMax > 0 || s.TwoShotMax > 0) && !s.DirectOff && n >= 2 && n <= kernels.DirectMaxRanks
}

// Protocol picks the protocol of a call moving bytes per rank buffer.
func (s *Settings) Protocol(bytes int64) ring.Protocol {
	switch {
	case !s.Protos[ring.Simple]:
		return ring.LL
	case !s.Protos[ring.LL]:
		return ring.Simple
	case bytes <= llMaxBytes:
		return ring.LL
	}
	return ring.Simple
}

// P2PLL returns the LL threshold in bytes and the LL FIFO of a GPU
// point-to-point plan of protocol p (ring.P2PSpec's LLMax and LLBuffSize):
// its small messages go by LL where p is Simple and LL is allowed (NCCL's
// NCCL_P2P_LL_THRESHOLD); zeros where every message goes by p.
func (s *Settings) P2PLL(p ring.Protocol) (int64, int) {
	if p != ring.Simple || !s.Protos[ring.LL] || s.P2PLLMax == 0 {
		return 0, 0
	}
	return int64(s.P2PLLMax), s.Sizes.LL
}

// BuffSize is the FIFO size of protocol p.
func (s *Settings) BuffSize(p ring.Protocol) int {
	switch p {
	case ring.LL:
		return s.Sizes.LL
	case ring.LL128:
		return s.LL128Size
	}
	return s.Sizes.Simple
}

// Layout is the GPU connections' layout the settings ask for.
func (s *Settings) Layout() p2p.Layout {
	l := p2p.Layout{SimpleBytes: s.Sizes.Simple, LLBytes: s.Sizes.LL, Read: s.P2PRead}
	if s.Protos[ring.LL128] {
		l.LL128Bytes = s.LL128Size
	}
	return l
}

// LL128Link is what a GPU communicator's connections mean for LL128.
type LL128Link struct {
	HostMemory bool   // FIFOs in host memory (shared memory, a net transport): LL128 cannot run
	Unsafe     string // otherwise, why a 128-byte line may arrive torn ("" where it cannot)
}

// PlaceLL128 decides whether a GPU communicator keeps LL128 once its
// connections are known: where it is safe; where it is not but a selection
// (Config.Protocol, NCCL_PROTO) names it and the FIFOs are GPU memory, with
// a warning, as NCCL does; never over host memory. A Config.Protocol left
// with no protocol is an error; NCCL_PROTO falls back to the others.
func (s *Settings) PlaceLL128(l LL128Link) error {
	if !s.Protos[ring.LL128] {
		return nil
	}
	switch {
	case l.Unsafe == "" && !l.HostMemory:
		env.Info(env.SubInit|env.SubTuning, "LL128 on: NVLink between distinct GPUs of one compute capability")
		return nil
	case !l.HostMemory && s.ProtoFrom != "":
		env.Warnf("%s forces LL128 where %s: a 128-byte line may arrive torn and results be wrong", s.ProtoFrom, l.Unsafe)
		return nil
	}
	why := l.Unsafe
	if l.HostMemory {
		why = "the connections' FIFOs are in host memory"
	}
	s.Protos[ring.LL128] = false
	env.Info(env.SubInit|env.SubTuning, "LL128 off: %s", why)
	if s.Protos != [3]bool{} {
		if s.ProtoFrom != "" {
			env.Warnf("%s selects LL128, but %s; not using it", s.ProtoFrom, why)
		}
		return nil
	}
	if s.ProtoFrom == "Config.Protocol" {
		return fmt.Errorf("%w: config: Protocol selects only LL128, but %s", errs.ErrInvalidArgument, why)
	}
	s.Protos = GPU.protos
	s.Protos[ring.LL128] = false
	env.Warnf("%s selects only LL128, but %s; using LL, Simple", s.ProtoFrom, why)
	return nil
}
