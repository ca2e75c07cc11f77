// Package transport is ringo's connection model and the transports that
// carry it.
//
// A connection (Conn) is a one-way FIFO between ring neighbours on one
// channel: NSteps slots in the receiver's memory that the sender fills, with
// two 64-bit counters for flow control. The sender waits for credit
// (head + NSteps ≥ its step + slots), writes, then publishes tail; the
// receiver waits for tail, consumes, then publishes head (Simple). For LL the
// data carries its own flags and tail is unused (see ll.go). Counters only
// grow and persist across collectives, as NCCL's conn->step does.
//
// Transports differ in where a Conn's memory lives: Loopback uses ordinary Go
// memory shared by ranks in one process; shm places the same layout in
// shared memory; Net (proxy.go) keeps a Conn at each end, in each process's
// memory, and moves posts and credits between them over a wire (sockets,
// socket.go, or RDMA, package rdma).
package transport

import (
	"context"
	"errors"
	"fmt"
)

// Transport connects the ranks of one communicator.
type Transport interface {
	// Conn returns the connection carrying channel ch from rank from to
	// rank to, ready for both ends to use. Repeated calls return the same
	// connection.
	Conn(ctx context.Context, from, to, ch int) (*Conn, error)
	// Close releases every connection. Using a Conn afterwards is a bug.
	Close() error
}

// Pair joins two transports of one rank: recv carries the connections into
// rank, send those out of it (the ring's two neighbours may be reached
// differently, e.g. one through shared memory and one over the network).
// Either may be nil when that side has none.
type Pair struct {
	Rank       int
	Recv, Send Transport
}

var _ Transport = Pair{}

// Conn returns the connection from the transport of its direction.
func (p Pair) Conn(ctx context.Context, from, to, ch int) (*Conn, error) {
	t := p.Send
	if to == p.Rank && from != p.Rank {
		t = p.Recv
	}
	if t == nil {
		return nil, fmt.Errorf("rank %d has no transport for connection %d→%d", p.Rank, from, to)
	}
	return t.Conn(ctx, from, to, ch)
}

// Close closes both transports (once when they are the same).
func (p Pair) Close() error {
	var errs []error
	if p.Recv != nil {
		errs = append(errs, p.Recv.Close())
	}
	if p.Send != nil && p.Send != p.Recv {
		errs = append(errs, p.Send.Close())
	}
	return errors.Join(errs...)
}
