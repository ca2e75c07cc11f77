package sim

import "fmt"

// stuck explains why programs are left unfinished: a receive whose sender
// has finished without sending it, or else the first blocked program.
func (e *engine) stuck() error {
	var first error
	for i := range e.progs {
		p := &e.progs[i]
		if p.step >= len(p.steps) {
			continue
		}
		st := &p.steps[p.step]
		var err error
		switch {
		case p.recv != nil && p.recv.waiting[0] == p:
			c := p.recv
			err = fmt.Errorf("sim: %w: %v ch%d rank %d step %d (%v) slice %d waits for data from rank %d, which sent %d slices on ch%d and %s",
				ErrUnmatched, e.coll, p.ch, p.rank, p.step, st.Prim, p.slice, c.key.from, c.sent/int64(p.plan.SlotsPerSlice), p.ch, e.state(c.key.from, p.ch))
			if e.done(c.key.from, p.ch) {
				return err
			}
		case p.send != nil && p.send.waiting[1] == p:
			c := p.send
			err = fmt.Errorf("sim: %w: %v ch%d rank %d step %d (%v) slice %d waits for rank %d to receive (%d slices unread) and rank %d %s",
				ErrUnmatched, e.coll, p.ch, p.rank, p.step, st.Prim, p.slice, c.key.to, c.n, c.key.to, e.state(c.key.to, p.ch))
			if e.done(c.key.to, p.ch) {
				return err
			}
		}
		if first == nil {
			first = err
		}
	}
	return first
}

// unread reports a slice sent and never received: the first by sender,
// channel and receiver.
func (e *engine) unread() error {
	var first *conn
	for _, c := range e.links {
		if c.n > 0 && (first == nil || less(c.key, first.key)) {
			first = c
		}
	}
	if first == nil {
		return nil
	}
	k, m := first.key, first.queue[first.head]
	return fmt.Errorf("sim: %w: %v ch%d rank %d step %d sent rank %d %d slices it never receives",
		ErrUnmatched, e.coll, k.ch, k.from, m.step, k.to, first.n)
}

func less(a, b connKey) bool {
	if a.from != b.from {
		return a.from < b.from
	}
	if a.ch != b.ch {
		return a.ch < b.ch
	}
	return a.to < b.to
}

func (e *engine) done(r, c int) bool {
	p := e.index[[2]int{r, c}]
	return p == nil || p.step >= len(p.steps)
}

// state says where rank r's program on channel c stands.
func (e *engine) state(r, c int) string {
	p := e.index[[2]int{r, c}]
	switch {
	case p == nil:
		return fmt.Sprintf("has no ch%d", c)
	case p.step >= len(p.steps):
		return "has finished"
	}
	return fmt.Sprintf("waits at its step %d (%v)", p.step, p.steps[p.step].Prim)
}
