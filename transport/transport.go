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
// memory shared by ranks in one process; later transports place the same
// layout in shared memory, GPU memory or host memory moved by a proxy.
package transport

import "context"

// Transport connects the ranks of one communicator.
type Transport interface {
	// Conn returns the connection carrying channel ch from rank from to
	// rank to, ready for both ends to use. Repeated calls return the same
	// connection.
	Conn(ctx context.Context, from, to, ch int) (*Conn, error)
	// Close releases every connection. Using a Conn afterwards is a bug.
	Close() error
}
