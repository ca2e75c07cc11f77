package bootstrap

import (
	"context"
	"errors"
	"fmt"
	"net"
	"net/netip"
	"sync"
	"time"

	"github.com/ringo-ccl/ringo/internal/tcp"
)

// The bootstrap ring: once the root has sent the table of ring listener
// addresses, every rank dials its successor and accepts its predecessor,
// each side proving the secret in a ring hello, so that AllGather and
// Barrier (gather.go) can run around it.

// formRing connects to the successor and accepts the predecessor.
func (b *Bootstrap) formRing(op context.Context, ln *net.TCPListener, me netip.AddrPort, table []netip.AddrPort) error {
	if b.nranks == 1 {
		return nil
	}
	next, prev := (b.rank+1)%b.nranks, (b.rank+b.nranks-1)%b.nranks
	ring, cancel := context.WithCancelCause(op)
	defer cancel(nil)
	type accepted struct {
		c   net.Conn
		err error
	}
	ac := make(chan accepted, 1)
	go func() {
		c, err := b.acceptPredecessor(ring, ln, prev)
		ac <- accepted{c, err}
	}()
	nc, err := b.dialSuccessor(ring, me, table[next], next)
	if err != nil {
		cancel(err)
	}
	a := <-ac
	if err == nil {
		err = a.err
	}
	if err != nil {
		for _, c := range []net.Conn{nc, a.c} {
			if c != nil {
				c.Close()
			}
		}
		return err
	}
	b.next, b.prev = nc, a.c
	return nil
}

// dialSuccessor connects to rank next's ring listener at addr and presents
// this rank's ring hello.
func (b *Bootstrap) dialSuccessor(ctx context.Context, me, addr netip.AddrPort, next int) (net.Conn, error) {
	what := fmt.Sprintf("connecting to rank %d (successor) at %v", next, addr)
	c, err := tcp.Dial(ctx, addr.String())
	if err != nil {
		return nil, fmt.Errorf("%s: %w", what, err)
	}
	release := tcp.Bind(ctx, c)
	defer release()
	h := hello{secret: b.id.secret(), rank: uint32(b.rank), nranks: uint32(b.nranks), ring: me}
	err = writeFrame(c, frameRingHello, appendHello(nil, h))
	var t frameType
	var p []byte
	if err == nil {
		t, p, err = readFrame(c)
	}
	if err == nil {
		switch t {
		case frameAccept:
			return c, nil
		case frameRefuse:
			var code byte
			var reason string
			if code, reason, err = decodeRefuse(p); err == nil {
				err = refused(fmt.Sprintf("rank %d", next), code, reason)
			}
		default:
			err = fmt.Errorf("%w: got a %v frame", errFrame, t)
		}
	}
	c.Close()
	return nil, ioFail(ctx, what, err)
}

// maxPendingRingHellos bounds the connections a ring listener vets at once
// (a helloGate, as the root's).
const maxPendingRingHellos = 16

// acceptPredecessor accepts connections on ln until one presents the secret
// and rank prev, refusing the others, each vetted on its own goroutine so
// that a silent one holds up nothing: at most maxPendingRingHellos at once,
// each for at most helloDeadline (helloGate). It closes ln and returns once
// one is accepted or ctx ends, with every goroutine it started ended.
func (b *Bootstrap) acceptPredecessor(ctx context.Context, ln *net.TCPListener, prev int) (net.Conn, error) {
	release := tcp.Bind(ctx, ln)
	defer release()
	var (
		wg      sync.WaitGroup
		gate    = newHelloGate(maxPendingRingHellos)
		quit    = make(chan struct{}) // closed when accepting ends
		mu      sync.Mutex            // guards the fields below
		pending = map[net.Conn]bool{} // being vetted or refused
		shut    bool                  // no more vetting: close what Accept returns
		won     net.Conn
		wonErr  error
		done    = make(chan struct{}) // closed when won is set
	)
	vet := func(c net.Conn) {
		defer wg.Done()
		defer gate.leave(c)
		reason := b.vetPredecessor(ctx, c, prev)
		if reason == "" && !gate.claim(c) {
			reason = "closed to make room" // by the gate, as the hello came in
		}
		mu.Lock()
		if reason == "" && won != nil {
			reason = fmt.Sprintf("rank %d is already connected", prev)
		}
		if reason == "" {
			won = c
			delete(pending, c)
			close(done)
		}
		mu.Unlock()
		if reason != "" {
			refuse(c, refuseInvalid, reason)
			mu.Lock()
			delete(pending, c)
			mu.Unlock()
			return
		}
		err := writeFrame(c, frameAccept)
		mu.Lock()
		wonErr = err
		mu.Unlock()
	}
	wg.Add(1)
	go func() {
		defer wg.Done()
		for {
			if !gate.enter(quit) {
				return
			}
			c, err := ln.Accept()
			if err != nil {
				gate.leave(nil)
				return // ln closed, or ctx ended (deadline)
			}
			tcp.Tune(c)
			mu.Lock()
			if shut {
				mu.Unlock()
				gate.leave(nil)
				c.Close()
				continue
			}
			gate.add(c)
			pending[c] = true
			wg.Add(1)
			mu.Unlock()
			go vet(c)
		}
	}()
	select {
	case <-done:
	case <-ctx.Done():
	}
	close(quit)
	ln.Close()
	mu.Lock()
	shut = true
	for c := range pending {
		c.Close()
	}
	mu.Unlock()
	wg.Wait()
	what := fmt.Sprintf("waiting for rank %d (predecessor) to connect", prev)
	switch {
	case won == nil:
		return nil, fmt.Errorf("%s: %w", what, tcp.Ended(ctx))
	case wonErr != nil:
		won.Close()
		return nil, ioFail(ctx, what, wonErr)
	}
	return won, nil
}

// vetPredecessor reads c's ring hello (readHello, within helloDeadline) and
// returns why it is refused, or "" if it comes from rank prev of this
// communicator.
func (b *Bootstrap) vetPredecessor(ctx context.Context, c net.Conn, prev int) string {
	dl := time.Now().Add(helloDeadline)
	if d, ok := ctx.Deadline(); ok && d.Before(dl) {
		dl = d
	}
	c.SetDeadline(dl)
	secret := b.id.secret()
	h, err := readHello(c, frameRingHello, &secret)
	switch {
	case errors.Is(err, errWrongSecret):
		return "wrong secret"
	case err != nil:
		return fmt.Sprintf("no valid ring hello: %v", err)
	case int(h.nranks) != b.nranks:
		return fmt.Sprintf("nranks %d differs from this communicator's %d", h.nranks, b.nranks)
	case int(h.rank) != prev:
		return fmt.Sprintf("rank %d is not the ring predecessor of rank %d (rank %d is)", h.rank, b.rank, prev)
	}
	return ""
}
