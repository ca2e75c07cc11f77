package ringo

import (
	"context"
	"errors"
	"fmt"
	"slices"

	"github.com/ringo-ccl/ringo/bootstrap"
	"github.com/ringo-ccl/ringo/internal/errs"
	"github.com/ringo-ccl/ringo/internal/group"
	"github.com/ringo-ccl/ringo/internal/peers"
	"github.com/ringo-ccl/ringo/reduce"
	"github.com/ringo-ccl/ringo/ring"
)

// hier is a rank's part in the hierarchical variant (ring.Hierarchy): the
// communicators of its group and of its column — made beside the parent's
// ranks in its process (NewLocal, NewLocalGPUs), or by each rank in its own
// process as ncclCommSplit makes them (NewComm, NewGPUComm) — and its
// position in the group (its rank in intra).
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

// newHiers gives the ranks of comms — one communicator's ranks of this
// process, by rank, nil for a rank of another process — their group's and
// their column's communicators, made by mk, as the variant's hierarchy
// splits the parent's ranks. Sub-communicators run the plain ring with the
// parent's other settings and at most its channels. When one cannot be
// made, the error names its group or column and nothing made is left open.
func newHiers(comms []*Comm, cfg *Config, mk subMaker) error {
	i := slices.IndexFunc(comms, func(c *Comm) bool { return c != nil })
	s := &comms[i].cfg
	if s.Variant != ring.Hierarchical {
		return nil
	}
	h, err := ring.NewHierarchy(s.Ring, s.Group)
	if err != nil {
		return err
	}
	sub := Config{}
	if cfg != nil {
		sub = *cfg
	}
	sub.Variant, sub.Ring, sub.Group, sub.sub, sub.subChannels = ring.RingVariant.String(), nil, 0, true, s.Channels
	split := func(what string, parts [][]int, set func(r, part, pos int, c *Comm)) error {
		subs, failed, err := mk(parts, &sub)
		if err != nil {
			closeHiers(comms)
			return fmt.Errorf("%s %d %v: %w", what, failed, parts[failed], err)
		}
		for i, part := range parts {
			for j, r := range part {
				if comms[r] != nil {
					set(r, i, j, subs[r])
				}
			}
		}
		return nil
	}
	if err := split("group", h.Groups, func(r, i, j int, c *Comm) {
		comms[r].hier = &hier{intra: c, group: i, pos: j, size: h.Size}
	}); err != nil {
		return err
	}
	return split("column", h.Columns, func(r, _, _ int, c *Comm) { comms[r].hier.inter = c })
}

// subMaker makes the communicators of one split of a hierarchy — its
// groups or its columns, parts[i] the parent ranks of part i — for the
// parent's ranks in this process: subs[r] is parent rank r's, nil for a
// rank of another process. When a part cannot be made it returns the
// part's index with the error, having closed what it made.
type subMaker func(parts [][]int, cfg *Config) (subs []*Comm, failed int, err error)

// localSubs makes each part's ranks together in this process with mk (the
// ranks of NewLocal or NewLocalGPUs).
func localSubs(mk func(ranks []int, cfg *Config) ([]*Comm, error)) subMaker {
	return func(parts [][]int, cfg *Config) ([]*Comm, int, error) {
		subs := make([]*Comm, len(parts)*len(parts[0]))
		for i, part := range parts {
			made, err := mk(part, cfg)
			if err != nil {
				for _, c := range subs {
					if c != nil {
						c.Close()
					}
				}
				return nil, i, err
			}
			for j, r := range part {
				subs[r] = made[j]
			}
		}
		return subs, -1, nil
	}
}

// splitSubs makes the part of a rank in its own process (whose parent's
// bootstrap is bs) as NCCL's ncclCommSplit does: a rendezvous of all the
// parent's ranks (color: the part's index, key: the rank's place in it),
// then mk makes the rank's communicator from its place in the part, each
// rank in its process. The ranks then tell each other whether they made
// theirs, so that all fail together, naming a part that was not made.
func splitSubs(ctx context.Context, bs *bootstrap.Bootstrap, mk func(p peers.Part, cfg *Config) (*Comm, error)) subMaker {
	return func(parts [][]int, cfg *Config) ([]*Comm, int, error) {
		rank := bs.Rank()
		partOf := func(r int) (part, pos int) {
			for i, p := range parts {
				if j := slices.Index(p, r); j >= 0 {
					return i, j
				}
			}
			return -1, 0
		}
		color, key := partOf(rank)
		var sub *Comm
		p, err := peers.Split(ctx, bs, color, key, NewUniqueID)
		if err == nil {
			sub, err = mk(p, cfg)
		}
		var why []byte
		if err != nil {
			why = []byte(err.Error())
		}
		all, gerr := bs.AllGather(ctx, why)
		if err == nil && gerr != nil {
			err = fmt.Errorf("learning whether the other ranks made theirs: %w", gerr)
		}
		for r := range all {
			if err == nil && len(all[r]) > 0 {
				color, _ = partOf(r)
				err = fmt.Errorf("rank %d could not make its communicator: %s", r, all[r])
			}
		}
		if err != nil {
			if sub != nil {
				sub.Close()
			}
			return nil, color, err
		}
		subs := make([]*Comm, bs.Size())
		subs[rank] = sub
		return subs, -1, nil
	}
}

// procHier gives c, a rank in its own process, its group's and column's
// communicators, each made by mk from c's place in it (see splitSubs).
func (c *Comm) procHier(ctx context.Context, cfg *Config, mk func(p peers.Part, cfg *Config) (*Comm, error)) error {
	comms := make([]*Comm, c.size)
	comms[c.rank] = c
	return newHiers(comms, cfg, splitSubs(ctx, c.group.(*group.Procs).BS, mk))
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
// phases on the sub-communicators (this rank's part of each is on its GPU), the
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
