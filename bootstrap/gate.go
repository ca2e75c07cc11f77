package bootstrap

import (
	"errors"
	"net"
	"sync"
	"time"

	"github.com/ringo-ccl/ringo/internal/tcp"
)

// A listener of the bootstrap (the root, a rank's listener) holds a
// connection that has not yet proved the secret through a helloGate:
//
//   - at most cap such connections at once, each with its own goroutine and
//     a fixed-size hello buffer (readHello), nothing sized by the peer;
//   - each for at most helloDeadline after its accept (plus refusalLinger
//     to read a refusal);
//   - when every slot is taken, the oldest connection that has been pending
//     for helloGrace is closed to make room, and until one has, new
//     connections wait in the kernel's listen backlog (somaxconn deep; Go
//     listens with it).
//
// A rank writes its hello as soon as it has connected, so its hello is
// normally in the socket before the listener accepts it and is read at once:
// helloGrace is long beside that, while a flood of silent or slow
// connections turns over cap per helloGrace, so it delays a rank by about
// (connections ahead of it) × helloGrace / cap, and costs the listener at
// most cap goroutines and buffers. Without pressure a connection gets the
// whole helloDeadline.
const (
	helloDeadline = 3 * time.Second        // a connection must have said hello within this of its accept
	helloGrace    = 500 * time.Millisecond // under pressure, a connection pending this long makes room
)

type helloGate struct {
	slots chan struct{} // a token per connection accepted (or about to be) and not yet left

	mu      sync.Mutex
	pending []pendingHello // connections that may be evicted, oldest first
}

type pendingHello struct {
	c     net.Conn
	since time.Time
}

func newHelloGate(cap int) *helloGate {
	return &helloGate{slots: make(chan struct{}, cap)}
}

// enter takes a slot for the next connection to accept, evicting the
// oldest pending connection once it has waited helloGrace if none is free.
// It returns false, without a slot, once stop is closed.
func (g *helloGate) enter(stop <-chan struct{}) bool {
	for {
		select {
		case g.slots <- struct{}{}:
			return true
		default:
		}
		t := time.NewTimer(g.evict())
		select {
		case g.slots <- struct{}{}:
			t.Stop()
			return true
		case <-stop:
			t.Stop()
			return false
		case <-t.C:
		}
	}
}

// evict closes the oldest pending connection if it has waited helloGrace
// (its goroutine then leaves, freeing its slot) and returns how long until
// the oldest one left has.
func (g *helloGate) evict() time.Duration {
	g.mu.Lock()
	defer g.mu.Unlock()
	if len(g.pending) > 0 && time.Since(g.pending[0].since) >= helloGrace {
		g.pending[0].c.Close()
		g.pending = g.pending[1:]
	}
	if len(g.pending) == 0 {
		return helloGrace // slots held by connections leaving
	}
	return helloGrace - time.Since(g.pending[0].since)
}

// add registers c, just accepted in the slot enter took.
func (g *helloGate) add(c net.Conn) {
	g.mu.Lock()
	g.pending = append(g.pending, pendingHello{c, time.Now()})
	g.mu.Unlock()
}

// claim makes c, whose hello proved the secret, safe from eviction, and
// reports whether it still could be (false: evict closed it).
func (g *helloGate) claim(c net.Conn) bool {
	g.mu.Lock()
	defer g.mu.Unlock()
	return g.remove(c)
}

// leave gives up c's slot (c nil: a slot enter took for an Accept that
// failed).
func (g *helloGate) leave(c net.Conn) {
	g.mu.Lock()
	g.remove(c)
	g.mu.Unlock()
	<-g.slots
}

// remove drops c from pending and reports whether it was there. g.mu is
// held.
func (g *helloGate) remove(c net.Conn) bool {
	for i, p := range g.pending {
		if p.c == c {
			g.pending = append(g.pending[:i], g.pending[i+1:]...)
			return true
		}
	}
	return false
}

// acceptLoop accepts connections on ln as g lets it, until stop is closed
// or ln is, tuning each (tcp.Tune) and handing it, registered with g, to
// start, which must start its goroutine (that leaves g when done) and
// return true, or return false (its owner is stopping): then acceptLoop
// closes it and gives its slot back.
func (g *helloGate) acceptLoop(ln net.Listener, stop <-chan struct{}, start func(net.Conn) bool) {
	for {
		if !g.enter(stop) {
			return
		}
		c, err := ln.Accept()
		if err != nil {
			g.leave(nil)
			if errors.Is(err, net.ErrClosed) {
				return
			}
			select { // e.g. out of file descriptors: try again shortly
			case <-stop:
				return
			case <-time.After(10 * time.Millisecond):
			}
			continue
		}
		tcp.Tune(c)
		g.add(c)
		if !start(c) {
			g.leave(c)
			c.Close()
		}
	}
}
