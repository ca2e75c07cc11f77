package bootstrap

import (
	"context"
	"errors"
	"fmt"
	"io"
	"net"
	"net/netip"
	"time"

	"github.com/ringo-ccl/ringo/internal/tcp"
)

// The bootstrap ring: once the root has sent the table of listener
// addresses, every rank dials its successor and its listener (listen.go)
// takes its predecessor, each side proving the secret in a ring hello, so
// that AllGather and Barrier (gather.go) can run around it.

// accepted is the predecessor's connection as the listener took it, with
// the error of writing it the accept.
type accepted struct {
	c   net.Conn
	err error
}

// formRing connects to the successor and waits for the listener to take the
// predecessor.
func (b *Bootstrap) formRing(op context.Context, me netip.AddrPort, table []netip.AddrPort) error {
	if b.nranks == 1 {
		return nil
	}
	next, prev := (b.rank+1)%b.nranks, (b.rank+b.nranks-1)%b.nranks
	nc, err := b.dialSuccessor(op, me, table[next], next)
	if err != nil {
		return err
	}
	what := fmt.Sprintf("waiting for rank %d (predecessor) to connect", prev)
	select {
	case a := <-b.predc:
		if a.err != nil {
			nc.Close()
			a.c.Close()
			return ioFail(op, what, a.err)
		}
		b.next, b.prev = nc, a.c
		return nil
	case <-op.Done():
		nc.Close()
		return fmt.Errorf("%s: %w", what, tcp.Ended(op))
	}
}

// dialSuccessor connects to rank next's listener at addr and presents
// this rank's ring hello.
func (b *Bootstrap) dialSuccessor(ctx context.Context, me, addr netip.AddrPort, next int) (net.Conn, error) {
	return b.dialHello(ctx, frameRingHello, me, addr, next, fmt.Sprintf("connecting to rank %d (successor) at %v", next, addr), tcp.Dial)
}

// dialHello connects to rank peer's listener at addr with dial and
// presents this rank's hello of type t, me being this rank's listener. It
// returns the connection once accepted, without deadlines; a refusal is an
// error naming peer (one that says the connections crossed wraps
// errCrossed).
func (b *Bootstrap) dialHello(ctx context.Context, t frameType, me, addr netip.AddrPort, peer int, what string,
	dial func(context.Context, string) (net.Conn, error)) (net.Conn, error) {
	c, err := dial(ctx, addr.String())
	if err != nil {
		return nil, fmt.Errorf("%s: %w", what, err)
	}
	release := tcp.Bind(ctx, c)
	h := hello{secret: b.id.secret(), rank: uint32(b.rank), nranks: uint32(b.nranks), ring: me}
	err = writeFrame(c, t, appendHello(nil, h))
	var rt frameType
	var p []byte
	if err == nil {
		rt, p, err = readFrameOf(c, frameAccept, frameRefuse)
	}
	release()
	if err == nil && rt == frameAccept {
		c.SetDeadline(time.Time{})
		return c, nil
	}
	c.Close()
	switch {
	case err == nil:
		var code byte
		var reason string
		if code, reason, err = decodeRefuse(p); err == nil {
			err = refused(fmt.Sprintf("rank %d", peer), code, reason)
		}
		if errors.Is(err, errCrossed) {
			return nil, err
		}
	case errors.Is(err, io.EOF):
		err = fmt.Errorf("rank %d closed the connection without answering: %w", peer, err)
	}
	return nil, ioFail(ctx, what, err)
}

// takePredecessor takes c, whose ring hello from rank proved the secret,
// as the ring predecessor's connection, and writes it the accept; or
// returns why not.
func (b *Bootstrap) takePredecessor(c net.Conn, rank int) string {
	prev := (b.rank + b.nranks - 1) % b.nranks
	switch {
	case b.nranks == 1:
		return "a communicator of one rank has no ring"
	case rank != prev:
		return fmt.Sprintf("rank %d is not the ring predecessor of rank %d (rank %d is)", rank, b.rank, prev)
	}
	b.mu.Lock()
	taken := b.prevTaken
	b.prevTaken = true
	b.mu.Unlock()
	if taken {
		return fmt.Sprintf("rank %d is already connected", prev)
	}
	err := writeFrame(c, frameAccept)
	c.SetDeadline(time.Time{})
	b.predc <- accepted{c, err} // buffered, sent once
	return ""
}
