// Package ringtest makes plans for tests of what runs them: schedules that
// are not rings, so executors and transports are seen to connect any two
// ranks.
package ringtest

import (
	"fmt"

	"github.com/ringo-ccl/ringo/ring"
)

// DirectAllGather returns every rank's plan of an all-gather in which each
// rank sends its input straight to every other rank and receives theirs —
// no ring: on every channel, rank r first sends its part of the channel's
// range to r+1, r+2, …, r+n−1 and then receives from r−1, r−2, …, r−n+1,
// so every pair of ranks is connected both ways. spec gives the
// collective's geometry (Coll must be AllGather; Ring, Count, EltSize,
// Channels, Proto, BuffSize); its Variant must be the ring. Each part must
// fit one step: count/channels elements at most SlicesPerStep slices.
func DirectAllGather(spec ring.Spec) ([]*ring.Plan, error) {
	if spec.Coll != ring.AllGather || spec.Variant != ring.RingVariant {
		return nil, fmt.Errorf("ringtest: DirectAllGather of %v %v", spec.Coll, spec.Variant)
	}
	n := spec.Ring.Size()
	plans := make([]*ring.Plan, n)
	for r := range n {
		spec.Rank = r
		p, err := ring.New(spec)
		if err != nil {
			return nil, err
		}
		for c := range p.Channels {
			ch := &p.Channels[c]
			ch.Steps = ch.Steps[:0]
			if ch.Count == 0 {
				continue
			}
			if ch.Count > p.SliceCapElems*int64(p.SlicesPerStep) {
				return nil, fmt.Errorf("ringtest: channel %d's %d elements do not fit one step of %d slices of %d", c, ch.Count, p.SlicesPerStep, p.SliceCapElems)
			}
			slice := (ch.Count + int64(p.SlicesPerStep) - 1) / int64(p.SlicesPerStep)
			slice = (slice + p.AlignmentElems - 1) / p.AlignmentElems * p.AlignmentElems
			step := func(prim ring.Prim, recv, send, owner int) ring.Step {
				return ring.Step{Prim: prim, Chunk: int32(owner), RecvPeer: int32(recv), SendPeer: int32(send),
					InOff: ch.Offset, OutOff: int64(owner)*spec.Count + ch.Offset, Count: ch.Count, SliceLen: slice}
			}
			for k := 1; k < n; k++ {
				prim := ring.Send
				if k == 1 {
					prim = ring.CopySend // the rank's own part lands in its output once
				}
				ch.Steps = append(ch.Steps, step(prim, -1, (r+k)%n, r))
			}
			for k := 1; k < n; k++ {
				from := (r - k + n) % n
				ch.Steps = append(ch.Steps, step(ring.Recv, from, -1, from))
			}
		}
		plans[r] = p
	}
	return plans, nil
}
