package ringo

import (
	"context"

	"github.com/ringo-ccl/ringo/host"
	"github.com/ringo-ccl/ringo/internal/calls"
	"github.com/ringo-ccl/ringo/internal/errs"
	"github.com/ringo-ccl/ringo/ring"
)

// p2pPlans is a communicator's cache of point-to-point plans, by spec: a
// call seen before (a training step's sends and receives are the same
// every step) is neither planned nor connected again — its plan is kept,
// and its connections, once made, stay. Owned by the goroutine holding
// the communicator.
type p2pPlans struct {
	plans map[uint64][]*ring.Plan // by ring.P2PSpec.Hash; the few that hash alike side by side
	n     int
	// The spec of the call being made, its slices reused from call to call.
	spec ring.P2PSpec
	// The messages of the call being made, when they came as a group's
	// ops (SendRecv), reused from call to call.
	msgs []calls.Msg
	// A host communicator's input and output segments of the call being
	// made, reused from call to call.
	segs [2][]host.Seg
}

// messages returns the messages of comm's ops among ops, in order, in the
// slice kept for them.
func (c *p2pPlans) messages(comm *Comm, ops []P2POp) []calls.Msg {
	c.msgs = c.msgs[:0]
	for i := range ops {
		if ops[i].c == comm {
			c.msgs = append(c.msgs, ops[i].msg)
		}
	}
	return c.msgs
}

// p2pPlanCache is the most plans a communicator keeps; past it the cache
// starts again (calls whose messages change every time, as a
// mixture-of-experts layer's uneven all-to-alls, plan each time anyway).
const p2pPlanCache = 256

// start returns the spec of a new call, with no messages, for the caller
// to fill.
func (c *p2pPlans) start(s ring.P2PSpec) *ring.P2PSpec {
	s.Sends, s.Recvs = c.spec.Sends[:0], c.spec.Recvs[:0]
	c.spec = s
	return &c.spec
}

// p2pPlan returns the plan of the spec c.p2ps.start returned, for call pc:
// the kept one, or one ring.NewP2P makes once the connections to pc's
// peers are (peerEdges), then kept — or errNotKept, with nothing done, for
// a call that asks for a kept plan only. First pc's messages are matched
// with those of the ranks in this process (Group.Match): a pair of other
// sizes fails the communicator, whose other rank may already wait for
// bytes that will not come.
func (c *Comm) p2pPlan(ctx context.Context, pc *p2pCall) (*ring.Plan, error) {
	pp := &c.p2ps
	h := pp.spec.Hash()
	var kept *ring.Plan
	for _, p := range pp.plans[h] {
		if p.P2P.Equal(&pp.spec) {
			kept = p
			break
		}
	}
	if kept == nil && pc.keptOnly {
		return nil, errNotKept
	}
	if err := c.group.Match(ctx, c.rank, pc.msgs); err != nil {
		return nil, errs.At(pc.name, c.rank, err)
	}
	if kept != nil {
		return kept, nil
	}
	p, err := ring.NewP2P(pp.spec) // copies the spec's messages
	if err != nil {
		return nil, errs.InvalidErr(pc.name, c.rank, err)
	}
	if err := c.group.Connect(ctx, c.rank, peerEdges(c.rank, pc.msgs, pp.spec.Channels)); err != nil {
		return nil, errs.At(pc.name, c.rank, err)
	}
	if pp.n >= p2pPlanCache || pp.plans == nil {
		pp.plans, pp.n = map[uint64][]*ring.Plan{}, 0
	}
	pp.plans[h] = append(pp.plans[h], p)
	pp.n++
	return p, nil
}
