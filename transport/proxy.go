package transport

import (
	"context"
	"errors"
	"fmt"
	"sync"
	"sync/atomic"
	"time"

	"github.com/ringo-ccl/ringo/internal/mem"
	"github.com/ringo-ccl/ringo/ring"
)

// Net is one rank's net connections — any edges, to and from any peers,
// on any channels — each a Conn in this process's memory that the local
// executor uses as it would any other, driven by proxy goroutines over a
// wire (wire.go). Each end has its own:
//
//   - send: waits for the executor's posts (tail, and the post entry that
//     says what the steps carry) and hands each to the wire;
//   - send credit: turns the receiver's credit reports into head;
//   - receive: takes each post off the wire into the slots it names, then
//     posts tail (Simple) or stores the LL words (LL);
//   - receive credit: reports head to the sender whenever the executor
//     consumes.
//
// Nothing is allocated per post. A wire error ends the connection's
// goroutines and calls fail with an error naming the peer and channel; the
// communicator aborts, so every wait on the connection ends.
type Net struct {
	rank  int
	sends []*netSend
	recvs []*netRecv
	conns map[Edge]*Conn // every end's, for Conn
	fail  func(error)
	stop  *Abort

	ctx     context.Context
	cancel  context.CancelFunc
	closing atomic.Bool
	broken  atomic.Bool // a connection failed
	wg      sync.WaitGroup
}

var _ Transport = (*Net)(nil)

// NetEnd is this rank's end of one net connection, for NewNet: the edge,
// the Conn the executor uses, and the wire carrying it — Send when the
// rank is the edge's sender, Recv when it is its receiver.
type NetEnd struct {
	Edge Edge
	Conn *Conn
	Send SendWire
	Recv RecvWire
}

// netSend is a sending end and how far it has got: the steps handed to
// the wire (whose Send has returned) and the receiver's last credit.
type netSend struct {
	Edge
	c                   *Conn
	w                   SendWire
	forwarded, credited atomic.Uint64
}

// netRecv is a receiving end.
type netRecv struct {
	Edge
	c *Conn
	w RecvWire
}

// NetMem allocates the memory of nch net connections of sizes s: one
// zeroed, 128-byte aligned block per channel, for NetConns and for the
// wires made over them.
func NetMem(nch int, s Sizes) [][]byte {
	m := make([][]byte, nch)
	for c := range m {
		m[c] = mem.Alloc(s.Bytes(), 128)
	}
	return m
}

// NetConns lays a connection of sizes s over each block of m.
func NetConns(m [][]byte, s Sizes) ([]*Conn, error) {
	cs := make([]*Conn, len(m))
	for i, b := range m {
		c, err := NewConn(b, s)
		if err != nil {
			return nil, fmt.Errorf("net: %w", err)
		}
		cs[i] = c
	}
	return cs, nil
}

// NewNet starts the proxies of rank's net connections, one set per end
// of ends. The connections are this process's (NetConns: their bells then
// park) or views of a GPU's (NewConnView: polled). fail is called at most
// once per broken connection, never after Close; once stop (the
// communicator's abort, may be nil) is set, Close no longer waits for
// posts to leave. An end that is not rank's, lacks its Conn or its wire,
// or comes twice is an error naming it; no proxy starts then.
func NewNet(rank int, ends []NetEnd, fail func(error), stop *Abort) (*Net, error) {
	if stop == nil {
		stop = new(Abort)
	}
	n := &Net{rank: rank, conns: make(map[Edge]*Conn, len(ends)), fail: fail, stop: stop}
	for _, e := range ends {
		switch {
		case e.Conn == nil:
			return nil, fmt.Errorf("net: rank %d: the connection %v has no Conn", rank, e.Edge)
		case n.conns[e.Edge] != nil:
			return nil, fmt.Errorf("net: rank %d: the connection %v given twice", rank, e.Edge)
		case e.Edge.From == rank && e.Edge.To != rank && e.Send != nil && e.Recv == nil:
			n.sends = append(n.sends, &netSend{Edge: e.Edge, c: e.Conn, w: e.Send})
		case e.Edge.To == rank && e.Edge.From != rank && e.Recv != nil && e.Send == nil:
			n.recvs = append(n.recvs, &netRecv{Edge: e.Edge, c: e.Conn, w: e.Recv})
		default:
			return nil, fmt.Errorf("net: rank %d: the connection %v needs its sender's wire (from this rank) or its receiver's (to it), one of them", rank, e.Edge)
		}
		n.conns[e.Edge] = e.Conn
	}
	for _, c := range n.conns {
		if c.data.seq != nil {
			c.parkingBells()
		}
	}
	n.ctx, n.cancel = context.WithCancel(context.Background())
	for _, s := range n.sends {
		n.wg.Add(2)
		go n.routineSend(s)
		go n.routineSendCredit(s)
	}
	for _, r := range n.recvs {
		n.wg.Add(2)
		go n.routineRecv(r)
		go n.routineRecvCredit(r)
	}
	return n, nil
}

// Conn returns this rank's end of the connection from→to on channel ch.
func (n *Net) Conn(_ context.Context, from, to, ch int) (*Conn, error) {
	if c, ok := n.conns[Edge{from, to, ch}]; ok {
		return c, nil
	}
	return nil, fmt.Errorf("net: rank %d has no net connection %v", n.rank, Edge{from, to, ch})
}

// Close lets the send proxies forward what the executor has posted — a
// sender's collective ends once its data is in the local FIFO — for at
// most drainWait, then stops the proxies and closes the wires (which say
// goodbye, so the peers' proxies end quietly).
func (n *Net) Close() error {
	if n.closing.Swap(true) {
		return nil
	}
	deadline := time.Now().Add(drainWait)
	for _, s := range n.sends {
		for s.forwarded.Load() < s.c.tail.Load() && !n.broken.Load() && !n.stop.IsSet() && time.Now().Before(deadline) {
			time.Sleep(100 * time.Microsecond)
		}
	}
	n.cancel()
	// All at once: a wire's Close may wait a moment for its peer's.
	var ws []interface{ Close() error }
	for _, s := range n.sends {
		ws = append(ws, s.w)
	}
	for _, r := range n.recvs {
		ws = append(ws, r.w)
	}
	errc := make(chan error, len(ws))
	for _, w := range ws {
		go func() { errc <- w.Close() }()
	}
	var errs []error
	for range ws {
		errs = append(errs, <-errc)
	}
	n.wg.Wait()
	return errors.Join(errs...)
}

// drainWait bounds how long Close waits for posts to leave.
const drainWait = 10 * time.Second

// broke reports a connection's failure, unless Close caused it or the peer
// closed its end.
func (n *Net) broke(dir string, peer, ch int, err error) {
	if errors.Is(err, ErrWireClosed) {
		return
	}
	n.broken.Store(true)
	if n.closing.Load() {
		return
	}
	n.fail(fmt.Errorf("net connection %s rank %d, channel %d: %w", dir, peer, ch, err))
}

// waiter returns a proxy goroutine's waiter: no deadline, ends with Close,
// parks without yielding.
func (n *Net) waiter() *Waiter {
	w := new(Waiter)
	w.Reset(n.ctx, 0)
	w.SleepSoon()
	return w
}

// routineSend forwards s's posts, in order, to the wire.
func (n *Net) routineSend(s *netSend) {
	defer n.wg.Done()
	c, w := s.c, s.w
	wt := n.waiter()
	var sent uint64 // steps handed to the wire
	for {
		if err := wt.WaitAtLeast(c.tail, sent+1, c.data); err != nil {
			n.broke("to", s.To, s.Ch, err)
			return
		}
		p, data, err := c.pending(sent)
		if err == nil {
			err = w.Send(p, data)
		}
		if err != nil {
			n.broke("to", s.To, s.Ch, err)
			return
		}
		sent += uint64(p.Slots)
		s.forwarded.Store(sent)
		n.release(s)
	}
}

// release posts as head the receiver's credit, but never past the steps
// whose Send has returned: a wire may still read a post's data until then
// (sockets' striped pieces go out from other goroutines), and the executor
// overwrites what head releases. The receiver may credit steps the sender
// has not posted — those it skipped when aligning its counter — which the
// sender gets with its next post. Both proxy goroutines call it; head only
// grows.
func (n *Net) release(s *netSend) {
	c := s.c
	h := min(s.credited.Load(), s.forwarded.Load())
	for {
		cur := c.head.Load()
		if h <= cur {
			return
		}
		if c.head.CompareAndSwap(cur, h) {
			c.credit.Ring()
			return
		}
	}
}

// pending returns the post the sender recorded at step sent and its data.
func (c *Conn) pending(sent uint64) (Post, []byte, error) {
	skip, slots, nbytes, proto := unpackPost(c.posts[sent%ring.NSteps].Load())
	p := Post{Step: sent, Skip: uint32(skip), Slots: uint32(slots), Bytes: uint32(nbytes), Proto: uint8(proto)}
	if err := c.checkPost(p); err != nil {
		return p, nil, fmt.Errorf("the executor recorded a bad %v: %w", p, err)
	}
	start := sent + skip
	switch proto {
	case ring.Simple:
		return p, c.SimpleSlots(start, int(slots-skip))[:nbytes], nil
	default: // LL: the raw words, the whole slot when it is due a refresh
		words := LLWords(nbytes)
		if LLCleanDue(start) {
			words = c.llSlot
		}
		p.Bytes = uint32(8 * words)
		return p, mem.Bytes(c.LLSlot(start)[:words]), nil
	}
}

// checkPost checks that post p fits this connection's FIFO.
func (c *Conn) checkPost(p Post) error {
	data := uint64(p.Slots) - uint64(p.Skip)
	switch {
	case p.Slots == 0 || p.Skip >= p.Slots || p.Slots > 2*ring.NSteps:
		return fmt.Errorf("%d slots, %d skipped", p.Slots, p.Skip)
	case ring.Protocol(p.Proto) == ring.Simple:
		if (p.Step+uint64(p.Skip))%ring.NSteps+data > ring.NSteps {
			return fmt.Errorf("%d slots from step %d wrap the FIFO", data, p.Step+uint64(p.Skip))
		}
		if uint64(p.Bytes) > data*uint64(c.simpleSlot) {
			return fmt.Errorf("%d bytes in %d slots of %d", p.Bytes, data, c.simpleSlot)
		}
	case ring.Protocol(p.Proto) == ring.LL:
		if data != 1 || int(p.Bytes) > 8*c.llSlot {
			return fmt.Errorf("LL post of %d slots and %d bytes (slot: %d bytes)", data, p.Bytes, 8*c.llSlot)
		}
	default:
		return fmt.Errorf("protocol %d", p.Proto)
	}
	return nil
}

// routineSendCredit posts the receiver's credit reports as head.
func (n *Net) routineSendCredit(s *netSend) {
	defer n.wg.Done()
	for {
		head, err := s.w.Credit()
		if err != nil {
			n.broke("to", s.To, s.Ch, err)
			return
		}
		s.credited.Store(head)
		n.release(s)
	}
}

// routineRecv lands r's posts in its FIFO.
func (n *Net) routineRecv(r *netRecv) {
	defer n.wg.Done()
	c, w := r.c, r.w
	staging := mem.Alloc(8*c.llSlot, 8) // an LL post's words, stored one by one after
	var want uint64                     // the step the next post starts at
	place := func(p Post) ([]byte, error) {
		if p.Step != want {
			return nil, fmt.Errorf("%v does not follow step %d", p, want)
		}
		if err := c.checkPost(p); err != nil {
			return nil, fmt.Errorf("bad %v: %w", p, err)
		}
		start := p.Step + uint64(p.Skip)
		if ring.Protocol(p.Proto) == ring.LL {
			if p.Bytes%8 != 0 {
				return nil, fmt.Errorf("bad %v: LL words are 8 bytes", p)
			}
			return staging[:p.Bytes], nil
		}
		return c.SimpleSlots(start, int(p.Slots-p.Skip))[:p.Bytes], nil
	}
	for {
		p, err := w.Recv(place)
		if err != nil {
			n.broke("from", r.From, r.Ch, err)
			return
		}
		if ring.Protocol(p.Proto) == ring.LL {
			// Whole words, each with its flag, so the reader never sees
			// a flag without its data.
			slot := c.LLSlot(p.Step + uint64(p.Skip))
			for i, v := range mem.Slice[uint64](staging[:p.Bytes]) {
				slot[i].Store(v)
			}
		}
		want = p.Step + uint64(p.Slots)
		c.tail.Store(want)
		c.data.Ring()
		c.credit.Ring() // routineRecvCredit may wait for this tail
	}
}

// routineRecvCredit reports every advance of head to the sender — but
// never past tail, the steps routineRecv has taken off the wire: a wire
// that lands data in place (RDMA) lets the executor consume an LL step
// before its post is processed, and the sender must not get that far
// ahead of the proxy. A failed report ends it quietly: credit shares its
// connection with the posts, and routineRecv tells a peer that said
// goodbye (whose unread data may still be on the way) from a lost one.
func (n *Net) routineRecvCredit(r *netRecv) {
	defer n.wg.Done()
	c, w := r.c, r.w
	wt := n.waiter()
	var reported uint64
	for {
		err := wt.WaitAtLeast(c.head, reported+1, c.credit)
		if err == nil {
			err = wt.WaitAtLeast(c.tail, reported+1, c.credit)
		}
		if err != nil {
			n.broke("from", r.From, r.Ch, err)
			return
		}
		reported = min(c.head.Load(), c.tail.Load())
		if err := w.SendCredit(reported); err != nil {
			return
		}
	}
}
