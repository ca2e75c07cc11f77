package sim

import (
	"fmt"

	"github.com/ringo-ccl/ringo/ring"
)

// The engine executes plans as a dataflow: every slice's start is the
// latest of its channel becoming free, its data arriving and its credit
// returning, so the times do not depend on the order in which the engine
// visits the programs. A program runs until it blocks on a connection, and
// the connection wakes it when the slice or the credit it waits for is
// there: every slice is executed once, and the whole run costs time in
// proportion to the slices.

type connKey struct{ from, to, ch int }

// message is a slice sent and not yet received.
type message struct {
	at    float64 // µs: when it is in the receiver's FIFO
	bytes int64
	step  int // the sender's step, for errors
}

// conn is the FIFO of one channel from one rank to another.
type conn struct {
	key      connKey
	users    int     // channels carrying data over its link, itself included if it does
	bw       float64 // GB/s a sending slice gets
	data     bool    // some step sends bytes over it
	queue    [ring.NSteps]message
	head, n  int
	sent     int64                // slots sent
	consumed int64                // slots the receiver has finished with
	freedAt  [ring.NSteps]float64 // when slot i%NSteps was finished with
	waiting  [2]*prog             // the receiver waiting for data, the sender for credit
}

// prog is one rank's program on one channel.
type prog struct {
	rank, ch    int
	plan        *ring.Plan
	steps       []ring.Step
	step, slice int
	free        float64 // µs: when the channel has finished its last slice
	recv, send  *conn   // the current step's connections
	from, to    []*conn // every connection it receives on, sends on
	queued      bool
}

// find returns the connection of list with peer, or nil.
func find(list []*conn, peer int, sending bool) *conn {
	for _, c := range list {
		if (sending && c.key.to == peer) || (!sending && c.key.from == peer) {
			return c
		}
	}
	return nil
}

// engine is a set of plans, checked and linked, ready to run with any
// parameters.
type engine struct {
	coll      ring.Collective
	elt       int64
	par       *Params
	progs     []prog
	conns     map[connKey]*conn
	links     []*conn          // every connection, in the order they were found
	index     map[[2]int]*prog // by rank and channel
	work      []*prog
	transfers int
}

func newEngine(plans []*ring.Plan) (*engine, error) {
	n := len(plans)
	e := &engine{coll: plans[0].Spec.Coll, elt: int64(plans[0].Spec.WireSize()), conns: map[connKey]*conn{}}
	for r, p := range plans {
		for c := range p.Channels {
			e.progs = append(e.progs, prog{rank: r, ch: c, plan: p, steps: p.Channels[c].Steps})
		}
	}
	e.index = make(map[[2]int]*prog, len(e.progs))
	for i := range e.progs {
		p := &e.progs[i]
		e.index[[2]int{p.rank, p.ch}] = p
	}
	for i := range e.progs {
		p := &e.progs[i]
		for j := range p.steps {
			if err := e.checkStep(p, j, n); err != nil {
				return nil, err
			}
		}
	}
	// Links are shared by the channels that carry data over them.
	users := map[[2]int]int{}
	for _, cn := range e.links {
		if cn.data {
			users[[2]int{cn.key.from, cn.key.to}]++
		}
	}
	for _, cn := range e.links {
		cn.users = users[[2]int{cn.key.from, cn.key.to}]
	}
	return e, nil
}

// checkStep checks step i of program p and registers its connections.
func (e *engine) checkStep(p *prog, i, n int) error {
	r, c, st := p.rank, p.ch, &p.steps[i]
	bad := func(format string, a ...any) error {
		return fmt.Errorf("sim: %w: %v ch%d rank %d step %d (%v): %s",
			ErrInvalidPlans, e.coll, c, r, i, st.Prim, fmt.Sprintf(format, a...))
	}
	if !st.Prim.Valid() {
		return bad("invalid primitive")
	}
	if st.Prim.Recvs() != (st.RecvPeer >= 0) || st.Prim.Sends() != (st.SendPeer >= 0) {
		return bad("peers recv %d send %d do not match the primitive", st.RecvPeer, st.SendPeer)
	}
	for _, peer := range []int32{st.RecvPeer, st.SendPeer} {
		if peer >= int32(n) || int(peer) == r {
			return bad("peer %d: need another rank of 0…%d", peer, n-1)
		}
	}
	if st.Count < 0 {
		return bad("negative count %d", st.Count)
	}
	local := st.Prim == ring.Copy || st.Prim == ring.ReduceCopy
	if spp := int64(p.plan.SlicesPerStep); !local && st.SliceLen*spp < st.Count {
		return bad("%d slices of %d elements cannot carry %d", spp, st.SliceLen, st.Count)
	}
	if st.Prim.Recvs() && find(p.from, int(st.RecvPeer), false) == nil {
		p.from = append(p.from, e.conn(connKey{int(st.RecvPeer), r, c}))
	}
	if st.Prim.Sends() {
		cn := find(p.to, int(st.SendPeer), true)
		if cn == nil {
			cn = e.conn(connKey{r, int(st.SendPeer), c})
			p.to = append(p.to, cn)
		}
		cn.data = cn.data || st.Count > 0
	}
	return nil
}

func (e *engine) conn(k connKey) *conn {
	cn := e.conns[k]
	if cn == nil {
		cn = &conn{key: k}
		e.conns[k] = cn
		e.links = append(e.links, cn)
	}
	return cn
}

// run executes every program with par and returns when the last slice
// ends (µs).
func (e *engine) run(par *Params) (float64, error) {
	e.par, e.transfers, e.work = par, 0, e.work[:0]
	for _, c := range e.links {
		c.bw = par.ChannelGBs
		if c.users > 0 {
			c.bw = min(par.ChannelGBs, par.LinkGBs/float64(c.users))
		}
		c.head, c.n, c.sent, c.consumed, c.waiting = 0, 0, 0, 0, [2]*prog{}
	}
	for i := len(e.progs) - 1; i >= 0; i-- {
		p := &e.progs[i]
		p.step, p.slice, p.free, p.recv, p.send, p.queued = 0, 0, 0, nil, nil, false
		e.wake(p)
	}
	for len(e.work) > 0 {
		p := e.work[len(e.work)-1]
		e.work = e.work[:len(e.work)-1]
		p.queued = false
		if err := e.advance(p); err != nil {
			return 0, err
		}
	}
	var end float64
	for i := range e.progs {
		p := &e.progs[i]
		if p.step < len(p.steps) {
			return 0, e.stuck()
		}
		end = max(end, p.free)
	}
	if err := e.unread(); err != nil {
		return 0, err
	}
	return end, nil
}

func (e *engine) wake(p *prog) {
	if p != nil && !p.queued {
		p.queued = true
		e.work = append(e.work, p)
	}
}

// advance runs p's slices until it blocks or finishes.
func (e *engine) advance(p *prog) error {
	sps := int64(p.plan.SlotsPerSlice)
	for p.step < len(p.steps) {
		st := &p.steps[p.step]
		recvs, sends := st.Prim.Recvs(), st.Prim.Sends()
		if p.slice == 0 {
			p.recv, p.send = nil, nil
			if recvs {
				p.recv = find(p.from, int(st.RecvPeer), false)
			}
			if sends {
				p.send = find(p.to, int(st.SendPeer), true)
			}
		}
		var count int64
		if st.Prim == ring.Copy || st.Prim == ring.ReduceCopy {
			count = st.Count
		} else {
			_, count = st.Slice(p.slice)
		}
		bytes := count * e.elt
		start := p.free
		if recvs {
			c := p.recv
			if c.n == 0 {
				c.waiting[0] = p
				return nil
			}
			m := c.queue[c.head]
			if m.bytes != bytes {
				return fmt.Errorf("sim: %w: %v ch%d rank %d step %d (%v) slice %d expects %d bytes from rank %d, which sent %d (its step %d)",
					ErrUnmatched, e.coll, p.ch, p.rank, p.step, st.Prim, p.slice, bytes, c.key.from, m.bytes, m.step)
			}
			start = max(start, m.at)
		}
		if sends {
			c := p.send
			if need := c.sent + sps - ring.NSteps; need > 0 {
				if c.consumed < need {
					c.waiting[1] = p
					return nil
				}
				start = max(start, c.freedAt[(need-1)%ring.NSteps])
			}
		}
		bw := e.par.ChannelGBs
		if sends {
			bw = p.send.bw
		}
		end := start + e.par.AlphaUs + float64(bytes)/(bw*1e3)
		p.free = end
		e.transfers++
		if recvs {
			c := p.recv
			c.head, c.n = (c.head+1)%ring.NSteps, c.n-1
			for s := c.consumed; s < c.consumed+sps; s++ {
				c.freedAt[s%ring.NSteps] = end
			}
			c.consumed += sps
			e.wake(c.waiting[1])
			c.waiting[1] = nil
		}
		if sends {
			c := p.send
			c.queue[(c.head+c.n)%ring.NSteps] = message{at: end, bytes: bytes, step: p.step}
			c.n++
			c.sent += sps
			e.wake(c.waiting[0])
			c.waiting[0] = nil
		}
		p.slice++
		if p.slice == p.plan.SlicesPerStep || st.Prim == ring.Copy || st.Prim == ring.ReduceCopy {
			p.step, p.slice = p.step+1, 0
		}
	}
	return nil
}
