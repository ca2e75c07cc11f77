package ringo

import (
	"context"
	"errors"
	"fmt"

	"github.com/ringo-ccl/ringo/internal/errs"
	"github.com/ringo-ccl/ringo/reduce"
	"github.com/ringo-ccl/ringo/ring"
)

// hier is a rank's part in the hierarchical variant (ring.Hierarchy): the
// communicators of its group and of its column, made beside the parent in
// the same process, and its position in the group (its rank in intra).
// An all-reduce of count elements runs as a reduce-scatter of the first
// count − count%size elements inside the group, landing in this rank's
// segment of the output; an all-reduce of that segment along the column; an
// all-gather of the segments inside the group, in place; and the
// count%size tail as the parent's flat ring. No scratch memory: each phase
// works in the output buffer, in NCCL's in-place layouts.
type hier struct {
	intra, inter *Comm
	group, pos   int
	size         int // ranks per group
}

// covers reports whether an all-reduce of count elements with op kind k
// runs hierarchically. PreMulSum and Avg would apply their scalar or divisor
// once per phase, so they run the flat ring; so does a message smaller than
// a group.
func (h *hier) covers(coll Collective, k reduce.OpKind, count int64) bool {
	if h == nil || coll != CollAllReduce || count < int64(h.size) {
		return false
	}
	return k == reduce.Sum || k == reduce.Prod || k == reduce.Max || k == reduce.Min
}

// newHiers gives every rank of comms (all of one communicator's ranks, in
// this process) its group's and its column's communicators, made by mk
// from the parent ranks they join. Sub-communicators run the plain ring
// with the parent's other settings and at most its channels.
func newHiers(comms []*Comm, cfg *Config, mk func(ranks []int, cfg *Config) ([]*Comm, error)) error {
	s := &comms[0].cfg
	if s.variant != ring.Hierarchical {
		return nil
	}
	h, err := ring.NewHierarchy(s.ring, s.group)
	if err != nil {
		return err
	}
	sub := Config{}
	if cfg != nil {
		sub = *cfg
	}
	sub.Variant, sub.Ring, sub.Group, sub.sub, sub.subChannels = ring.RingVariant.String(), nil, 0, true, s.channels
	for i, g := range h.Groups {
		subs, err := mk(g, &sub)
		if err != nil {
			closeHiers(comms)
			return fmt.Errorf("group %d %v: %w", i, g, err)
		}
		for j, r := range g {
			comms[r].hier = &hier{intra: subs[j], group: i, pos: j, size: h.Size}
		}
	}
	for j, col := range h.Columns {
		subs, err := mk(col, &sub)
		if err != nil {
			closeHiers(comms)
			return fmt.Errorf("column %d %v: %w", j, col, err)
		}
		for i, r := range col {
			comms[r].hier.inter = subs[i]
		}
	}
	return nil
}

// closeHiers closes every sub-communicator of comms.
func closeHiers(comms []*Comm) error {
	var errs []error
	for _, c := range comms {
		if c != nil && c.hier != nil {
			errs = append(errs, c.hier.close())
		}
	}
	return errors.Join(errs...)
}

func (h *hier) subs() []*Comm {
	var cs []*Comm
	for _, c := range []*Comm{h.intra, h.inter} {
		if c != nil {
			cs = append(cs, c)
		}
	}
	return cs
}

func (h *hier) close() error {
	var errs []error
	for _, c := range h.subs() {
		errs = append(errs, c.Close())
	}
	return errors.Join(errs...)
}

func (h *hier) abort() {
	for _, c := range h.subs() {
		c.Abort()
	}
}

func (h *hier) err() error {
	for _, c := range h.subs() {
		if err := c.Err(); err != nil {
			return err
		}
	}
	return nil
}

// phaseErr locates a phase's failure on the parent rank.
func (c *Comm) phaseErr(phase string, err error) error {
	if err == nil {
		return nil
	}
	return errs.AtDetail(CollAllReduce.String(), c.rank,
		fmt.Sprintf("hierarchical %s (group %d, position %d)", phase, c.hier.group, c.hier.pos), err)
}

// runHier runs a host all-reduce hierarchically; the tail runs on c's ring.
func (c *Comm) runHier(ctx context.Context, call *Call) error {
	h := c.hier
	elt := int64(call.Type.Size())
	seg := call.Count / int64(h.size)
	main := seg * int64(h.size)
	mine := call.Recv[int64(h.pos)*seg*elt : int64(h.pos+1)*seg*elt]
	phase := func(name string, sub *Comm, p Call) error {
		p.Type, p.Op, p.Count = call.Type, call.Op, seg
		return c.phaseErr(name, sub.Do(ctx, p))
	}
	if err := phase("reduce-scatter", h.intra, Call{Coll: CollReduceScatter, Send: call.Send[:main*elt], Recv: mine}); err != nil {
		return err
	}
	if err := phase("all-reduce", h.inter, Call{Coll: CollAllReduce, Send: mine, Recv: mine}); err != nil {
		return err
	}
	if err := phase("all-gather", h.intra, Call{Coll: CollAllGather, Send: mine, Recv: call.Recv[:main*elt]}); err != nil {
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
// phases on the sub-communicators (their ranks are on this rank's GPU), the
// tail on c's ring.
func (c *Comm) hierDevice(ctx context.Context, call DeviceCall, s Stream) error {
	h := c.hier
	elt := uintptr(call.Type.Size())
	seg := call.Count / int64(h.size)
	main := seg * int64(h.size)
	mine := call.Recv + uintptr(h.pos)*uintptr(seg)*elt
	phase := func(name string, sub *Comm, p DeviceCall) error {
		p.Type, p.Op, p.Count = call.Type, call.Op, seg
		return c.phaseErr(name, sub.DoDevice(ctx, p, s))
	}
	if err := phase("reduce-scatter", h.intra, DeviceCall{Coll: CollReduceScatter, Send: call.Send, Recv: mine}); err != nil {
		return err
	}
	if err := phase("all-reduce", h.inter, DeviceCall{Coll: CollAllReduce, Send: mine, Recv: mine}); err != nil {
		return err
	}
	if err := phase("all-gather", h.intra, DeviceCall{Coll: CollAllGather, Send: mine, Recv: call.Recv}); err != nil {
		return err
	}
	if main == call.Count {
		return nil
	}
	tail := call
	tail.Count, tail.Send, tail.Recv = call.Count-main, call.Send+uintptr(main)*elt, call.Recv+uintptr(main)*elt
	return c.launch(tail, s)
}
