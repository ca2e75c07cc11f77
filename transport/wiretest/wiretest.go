// Package wiretest checks net connections end to end, whatever their wire
// (sockets in transport, RDMA in rdma): a sender and a receiver play the
// same random script of posts — Simple ones of every size, striped or
// inline, empty, after skipped slots, and LL ones — through a pair of
// transport.Conns joined by a transport.Net, and every byte that arrives is
// checked. It is imported by tests only.
package wiretest

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"math/rand/v2"
	"sync"
	"testing"
	"time"

	"github.com/ringo-ccl/ringo/bootstrap"
	"github.com/ringo-ccl/ringo/ring"
	"github.com/ringo-ccl/ringo/transport"
)

// Op is one post of a script.
type Op struct {
	Proto ring.Protocol
	Align uint64 // Simple: round the step up to a multiple of this first
	Slots int
	Bytes int
}

// Script returns n random posts for connections of sizes s, the same for
// the same seed.
func Script(seed uint64, n int, s transport.Sizes) []Op {
	rng := rand.New(rand.NewPCG(seed, 7))
	ops := make([]Op, n)
	slot := s.Simple / ring.NSteps
	for i := range ops {
		switch rng.IntN(4) {
		case 0:
			ops[i] = Op{Proto: ring.LL, Slots: 1, Bytes: rng.IntN(s.LL/ring.NSteps/2 + 1)}
		case 1:
			ops[i] = Op{Proto: ring.Simple, Align: 2, Slots: 2, Bytes: 2*slot - rng.IntN(3)}
		default:
			k := 1 + rng.IntN(2)
			ops[i] = Op{Proto: ring.Simple, Align: uint64(1 + rng.IntN(4)), Slots: k, Bytes: rng.IntN(k*slot + 1)}
		}
	}
	return ops
}

func fill(b []byte, seed uint64) {
	for i := range b {
		b[i] = byte(seed*31 + uint64(i)*7 + uint64(i>>8))
	}
}

// start returns the step a Simple op starts at after the previous ended at
// step: aligned, and moved to the next lap if its slots would wrap.
func start(step uint64, op Op) uint64 {
	step = (step + op.Align - 1) / op.Align * op.Align
	if step%ring.NSteps+uint64(op.Slots) > ring.NSteps {
		step = (step + ring.NSteps - 1) / ring.NSteps * ring.NSteps
	}
	return step
}

// Run has send play ops as a sender (as host.Executor posts) and recv as
// the receiver, and returns the first difference or failure. Both ends'
// waits park (transport.Waiter.SleepSoon), as an executor's do beside
// proxies.
func Run(send, recv *transport.Conn, s transport.Sizes, ops []Op, timeout time.Duration) error {
	ctx, cancel := context.WithTimeout(context.Background(), timeout)
	defer cancel()
	errc := make(chan error, 2)
	go func() {
		var w transport.Waiter
		w.Reset(ctx, 0)
		w.SleepSoon()
		var step uint64
		buf := make([]byte, s.Simple)
		for i, op := range ops {
			data := buf[:op.Bytes]
			fill(data, uint64(i))
			if op.Proto == ring.LL {
				if err := send.WaitCredit(step, 1, &w); err != nil {
					errc <- fmt.Errorf("op %d: %w", i, err)
					return
				}
				send.WriteLL(step, data)
				step++
				continue
			}
			step = start(step, op)
			if err := send.WaitCredit(step, op.Slots, &w); err != nil {
				errc <- fmt.Errorf("op %d: %w", i, err)
				return
			}
			copy(send.SimpleSlots(step, op.Slots), data)
			send.PostSimple(step, step+uint64(op.Slots), op.Bytes)
			step += uint64(op.Slots)
		}
		errc <- nil
	}()
	go func() {
		var w transport.Waiter
		w.Reset(ctx, 0)
		w.SleepSoon()
		var step uint64
		want := make([]byte, s.Simple)
		got := make([]byte, s.Simple)
		for i, op := range ops {
			fill(want[:op.Bytes], uint64(i))
			if op.Proto == ring.LL {
				if err := recv.ReadLL(step, got[:op.Bytes], &w); err != nil {
					errc <- fmt.Errorf("op %d: %w", i, err)
					return
				}
				step++
				recv.PostHead(step)
				if !bytes.Equal(got[:op.Bytes], want[:op.Bytes]) {
					errc <- fmt.Errorf("op %d (LL, %d bytes): wrong data", i, op.Bytes)
					return
				}
				continue
			}
			step = start(step, op)
			if err := recv.WaitData(step+uint64(op.Slots), &w); err != nil {
				errc <- fmt.Errorf("op %d: %w", i, err)
				return
			}
			if !bytes.Equal(recv.SimpleSlots(step, op.Slots)[:op.Bytes], want[:op.Bytes]) {
				errc <- fmt.Errorf("op %d (Simple, step %d, %d slots, %d bytes): wrong data", i, step, op.Slots, op.Bytes)
				return
			}
			step += uint64(op.Slots)
			recv.PostHead(step)
		}
		errc <- nil
	}()
	return errors.Join(<-errc, <-errc)
}

// Ring runs a script of posts on every connection of a ring of nets (nets[r]
// is rank r's, sending to rank r+1), all at once, nch channels each, and
// reports each failure through t; fails carries the nets' own failures.
func Ring(t testing.TB, nets []*transport.Net, nch, posts int, s transport.Sizes, fails <-chan error) {
	t.Helper()
	ts := make([]transport.Transport, len(nets))
	for r, x := range nets {
		ts[r] = x
	}
	Edges(t, ts, RingEdges(len(nets), nch), posts, s, fails)
}

// RingEdges returns the edges of a ring of n ranks, rank r to r+1, on nch
// channels.
func RingEdges(n, nch int) []transport.Edge {
	var edges []transport.Edge
	for ch := range nch {
		for r := range n {
			edges = append(edges, transport.Edge{From: r, To: (r + 1) % n, Ch: ch})
		}
	}
	return edges
}

// Edges runs a script of posts on every connection of edges (nets[r] is
// rank r's Net), all at once, and reports each failure through t; fails
// carries the nets' own failures.
func Edges(t testing.TB, nets []transport.Transport, edges []transport.Edge, posts int, s transport.Sizes, fails <-chan error) {
	t.Helper()
	var wg sync.WaitGroup
	for i, e := range edges {
		send, err1 := nets[e.From].Conn(context.Background(), e.From, e.To, e.Ch)
		recv, err2 := nets[e.To].Conn(context.Background(), e.From, e.To, e.Ch)
		if err := errors.Join(err1, err2); err != nil {
			t.Fatal(err)
		}
		wg.Add(1)
		go func() {
			defer wg.Done()
			if err := Run(send, recv, s, Script(uint64(e.From*10+e.Ch+1000*i), posts, s), 60*time.Second); err != nil {
				t.Errorf("%v: %v", e, err)
			}
		}()
	}
	wg.Wait()
	select {
	case err := <-fails:
		t.Errorf("a connection failed: %v", err)
	default:
	}
}

// Ends returns rank's ends of sends (from it) and recvs (to it) over the
// wires sw and rw (one per edge, in order), each with a Conn of sizes s in
// memory of its own.
func Ends(sends, recvs []transport.Edge, sw []transport.SendWire, rw []transport.RecvWire, s transport.Sizes) ([]transport.NetEnd, error) {
	if len(sw) != len(sends) || len(rw) != len(recvs) {
		return nil, fmt.Errorf("wiretest: %d send wires for %d edges, %d receive wires for %d", len(sw), len(sends), len(rw), len(recvs))
	}
	conns, err := transport.NetConns(transport.NetMem(len(sends)+len(recvs), s), s)
	if err != nil {
		return nil, err
	}
	var ends []transport.NetEnd
	for i, e := range sends {
		ends = append(ends, transport.NetEnd{Edge: e, Conn: conns[i], Send: sw[i]})
	}
	for i, e := range recvs {
		ends = append(ends, transport.NetEnd{Edge: e, Conn: conns[len(sends)+i], Recv: rw[i]})
	}
	return ends, nil
}

// Split returns rank's part of edges: those it sends and those it
// receives.
func Split(rank int, edges []transport.Edge) (sends, recvs []transport.Edge) {
	for _, e := range edges {
		switch rank {
		case e.From:
			sends = append(sends, e)
		case e.To:
			recvs = append(recvs, e)
		}
	}
	return sends, recvs
}

// Connect makes the n ranks of a ring in this process, each with its own
// bootstrap of one fresh communicator, and has build make each rank's Net
// (build's fail reports the Net's failures on the returned channel). It
// fails the test unless every rank succeeds; the nets are closed when the
// test ends, before whatever build registered with t.Cleanup.
func Connect(t testing.TB, n int, build func(ctx context.Context, ex transport.Exchanger, r int, fail func(error)) (*transport.Net, error)) ([]*transport.Net, <-chan error) {
	t.Helper()
	id, err := bootstrap.NewUniqueID()
	if err != nil {
		t.Fatal(err)
	}
	nets := make([]*transport.Net, n)
	fails := make(chan error, 64*n)
	fail := func(err error) {
		select {
		case fails <- err:
		default:
		}
	}
	errc := make(chan error, n)
	for r := range n {
		go func() {
			ctx, cancel := context.WithTimeout(context.Background(), 20*time.Second)
			defer cancel()
			bs, err := bootstrap.Join(ctx, id, n, r)
			if err != nil {
				errc <- err
				return
			}
			t.Cleanup(func() { bs.Close() })
			nets[r], err = build(ctx, bs, r, fail)
			errc <- err
		}()
	}
	var errs []error
	for range n {
		errs = append(errs, <-errc)
	}
	t.Cleanup(func() {
		for _, x := range nets {
			if x != nil {
				x.Close()
			}
		}
	})
	if err := errors.Join(errs...); err != nil {
		t.Fatal(err)
	}
	return nets, fails
}
