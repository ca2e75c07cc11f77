package ringtest

import (
	"fmt"
	"math/rand/v2"

	"github.com/ringo-ccl/ringo/ring"
)

// SendRecvAllGather returns every rank's plan of an all-gather made of
// point-to-point exchanges: on every channel, rank r copies its part of the
// channel's range into its output, then in round k = 1 … n−1 sends it to
// r+k and receives r−k's in the same SendRecv step. spec is as for
// DirectAllGather, whose limits apply.
func SendRecvAllGather(spec ring.Spec) ([]*ring.Plan, error) {
	plans, err := DirectAllGather(spec)
	if err != nil {
		return nil, err
	}
	n := spec.Ring.Size()
	for r, p := range plans {
		for c := range p.Channels {
			ch := &p.Channels[c]
			if len(ch.Steps) == 0 {
				continue
			}
			slice := ch.Steps[0].SliceLen
			ch.Steps = ch.Steps[:0]
			ch.Steps = append(ch.Steps, ring.Step{Prim: ring.Copy, Chunk: int32(r), RecvPeer: -1, SendPeer: -1,
				InOff: ch.Offset, OutOff: int64(r)*spec.Count + ch.Offset, Count: ch.Count, SliceLen: ch.Count})
			for k := 1; k < n; k++ {
				from := (r - k + n) % n
				ch.Steps = append(ch.Steps, ring.Step{Prim: ring.SendRecv, Chunk: int32(from), RecvPeer: int32(from),
					SendPeer: int32((r + k) % n), InOff: ch.Offset, OutOff: int64(from)*spec.Count + ch.Offset,
					Count: ch.Count, RecvCount: ch.Count, SliceLen: slice})
			}
		}
	}
	return plans, nil
}

// Patterns P2PGroup draws from.
const (
	PatternAllToAll = iota
	PatternAllToAllV
	PatternGather
	PatternScatter
	PatternRandom
	NumPatterns
)

// P2PGroup returns a random group of matched point-to-point messages among
// n ranks — sends[r] and recvs[r] are rank r's, in issue order — of the
// given pattern: an all-to-all, an all-to-allv with zeros, a gather, a
// scatter, or random pairs (several messages to one peer, messages to
// itself, ranks idle), counts up to maxCount, offsets packed with random
// gaps in each rank's buffers.
func P2PGroup(rng *rand.Rand, n, pattern int, maxCount int64) (sends, recvs [][]ring.Xfer) {
	sends, recvs = make([][]ring.Xfer, n), make([][]ring.Xfer, n)
	count := func() int64 { return rng.Int64N(maxCount + 1) }
	switch pattern {
	case PatternAllToAll:
		c := count()
		for r := range n {
			sends[r], recvs[r] = ring.AllToAll(n, c)
		}
		return sends, recvs
	case PatternGather, PatternScatter:
		root, c := rng.IntN(n), count()
		for r := range n {
			if pattern == PatternGather {
				sends[r], recvs[r] = ring.Gather(n, r, root, c)
			} else {
				sends[r], recvs[r] = ring.Scatter(n, r, root, c)
			}
		}
		return sends, recvs
	}
	// A global list of messages in issue order; each rank issues its own in
	// that order, so the k-th send of a pair meets its k-th receive.
	type msg struct {
		from, to int
		count    int64
	}
	var msgs []msg
	switch pattern {
	case PatternAllToAllV:
		for a := range n {
			for b := range n {
				c := count()
				if rng.IntN(3) == 0 {
					c = 0
				}
				msgs = append(msgs, msg{a, b, c})
			}
		}
	case PatternRandom:
		for range rng.IntN(3 * n) {
			msgs = append(msgs, msg{rng.IntN(n), rng.IntN(n), count()})
		}
	default:
		panic(fmt.Sprintf("ringtest: pattern %d", pattern))
	}
	rng.Shuffle(len(msgs), func(i, j int) { msgs[i], msgs[j] = msgs[j], msgs[i] })
	sendEnd, recvEnd := make([]int64, n), make([]int64, n)
	for _, m := range msgs {
		sendEnd[m.from] += rng.Int64N(3)
		recvEnd[m.to] += rng.Int64N(3)
		sends[m.from] = append(sends[m.from], ring.Xfer{Peer: m.to, Off: sendEnd[m.from], Count: m.count})
		recvs[m.to] = append(recvs[m.to], ring.Xfer{Peer: m.from, Off: recvEnd[m.to], Count: m.count})
		sendEnd[m.from] += m.count
		recvEnd[m.to] += m.count
	}
	return sends, recvs
}

// P2PPlans returns every rank's NewP2P plan of a group, geometry from g
// (Rank, Sends and Recvs are filled in).
func P2PPlans(g ring.P2PSpec, sends, recvs [][]ring.Xfer) ([]*ring.Plan, error) {
	plans := make([]*ring.Plan, len(sends))
	for r := range sends {
		g.Rank, g.Sends, g.Recvs = r, sends[r], recvs[r]
		p, err := ring.NewP2P(g)
		if err != nil {
			return nil, fmt.Errorf("rank %d: %w", r, err)
		}
		plans[r] = p
	}
	return plans, nil
}
