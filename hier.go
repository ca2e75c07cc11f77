package ringo

import (
	"context"
	"errors"
	"slices"

	"github.com/ringo-ccl/ringo/internal/config"
	"github.com/ringo-ccl/ringo/internal/errs"
	"github.com/ringo-ccl/ringo/internal/hier"
	"github.com/ringo-ccl/ringo/ring"
)

// subConfig is the configuration of the hierarchical variant's group and
// column communicators of a communicator made from cfg (which may be nil)
// and resolved to s: the plain ring with the parent's other settings and
// at most its channels.
func subConfig(cfg *Config, s *config.Settings) *Config {
	sub := Config{}
	if cfg != nil {
		sub = *cfg
	}
	sub.Variant, sub.Ring, sub.Group, sub.sub, sub.subChannels = ring.RingVariant.String(), nil, 0, true, s.Channels
	return &sub
}

// newHiers gives the ranks of comms — one communicator's ranks of this
// process, by rank, nil for a rank of another process — their parts in the
// hierarchical variant (package hier), made by mk, when that is their
// variant.
func newHiers(comms []*Comm, mk hier.Maker[*Comm]) error {
	s := &comms[slices.IndexFunc(comms, func(c *Comm) bool { return c != nil })].cfg
	if s.Variant != ring.Hierarchical {
		return nil
	}
	h, err := ring.NewHierarchy(s.Ring, s.Group)
	if err != nil {
		return err
	}
	local := make([]bool, len(comms))
	for r, c := range comms {
		local[r] = c != nil
	}
	parts, err := hier.Make(h, local, mk)
	if err != nil {
		return err
	}
	for r, p := range parts {
		if p != nil {
			comms[r].hier = p
			p.Intra.parentBroken, p.Inter.parentBroken = comms[r].group.Broken(), comms[r].group.Broken()
		}
	}
	return nil
}

// procHier gives c, a rank in its own process, its group's and column's
// communicators, each made by mk (see hier.Split).
func (c *Comm) procHier(mk hier.Maker[*Comm]) error {
	comms := make([]*Comm, c.size)
	comms[c.rank] = c
	return newHiers(comms, mk)
}

// phaseErr locates a phase's failure on the parent rank. A lost peer is
// told in the parent's ranks: the sub-communicator names its own, so the
// parent's group is failed with it first — which waits for the parent's
// bootstrap to name the rank (group.Procs.Fail) — and its error is
// returned instead.
func (c *Comm) phaseErr(phase string, err error) error {
	if err == nil {
		return nil
	}
	if errors.Is(err, ErrPeerLost) {
		c.group.Fail(err)
		if perr := c.group.Broken().Err(); errors.Is(perr, ErrPeerLost) {
			err = perr
		}
	}
	return errs.AtDetail(CollAllReduce.String(), c.rank, c.hier.Where(phase), err)
}

// runHier runs a host all-reduce hierarchically (see hier.Part); the tail
// runs on c's ring.
func (c *Comm) runHier(ctx context.Context, call *Call) error {
	h := c.hier
	elt := int64(call.Type.Size())
	seg, main := h.Segments(call.Count)
	mine := call.Recv[int64(h.Pos)*seg*elt : int64(h.Pos+1)*seg*elt]
	phase := func(name string, sub *Comm, p Call) error {
		p.Type, p.Op, p.Count = call.Type, call.Op, seg
		return c.phaseErr(name, sub.Do(ctx, p))
	}
	if err := phase("reduce-scatter", h.Intra, Call{Coll: CollReduceScatter, Send: call.Send[:main*elt], Recv: mine}); err != nil {
		return err
	}
	if err := phase("all-reduce", h.Inter, Call{Coll: CollAllReduce, Send: mine, Recv: mine}); err != nil {
		return err
	}
	if err := phase("all-gather", h.Intra, Call{Coll: CollAllGather, Send: mine, Recv: call.Recv[:main*elt]}); err != nil {
		return err
	}
	if main == call.Count {
		return nil
	}
	tail := *call
	tail.Count, tail.Send, tail.Recv = call.Count-main, call.Send[main*elt:], call.Recv[main*elt:]
	return c.runRing(ctx, &tail)
}

// hierDevice enqueues a GPU all-reduce hierarchically on s: the three
// phases on the sub-communicators (this rank's part of each is on its GPU), the
// tail on c's ring.
func (c *Comm) hierDevice(ctx context.Context, call DeviceCall, s Stream) error {
	h := c.hier
	elt := uintptr(call.Type.Size())
	seg, main := h.Segments(call.Count)
	mine := call.Recv + uintptr(h.Pos)*uintptr(seg)*elt
	phase := func(name string, sub *Comm, p DeviceCall) error {
		p.Type, p.Op, p.Count = call.Type, call.Op, seg
		return c.phaseErr(name, sub.DoDevice(ctx, p, s))
	}
	if err := phase("reduce-scatter", h.Intra, DeviceCall{Coll: CollReduceScatter, Send: call.Send, Recv: mine}); err != nil {
		return err
	}
	if err := phase("all-reduce", h.Inter, DeviceCall{Coll: CollAllReduce, Send: mine, Recv: mine}); err != nil {
		return err
	}
	if err := phase("all-gather", h.Intra, DeviceCall{Coll: CollAllGather, Send: mine, Recv: call.Recv}); err != nil {
		return err
	}
	if main == call.Count {
		return nil
	}
	tail := call
	tail.Count, tail.Send, tail.Recv = call.Count-main, call.Send+uintptr(main)*elt, call.Recv+uintptr(main)*elt
	return c.launch(tail, s)
}
