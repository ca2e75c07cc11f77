// Package transport is ringo's connection model and the transports that
// carry it.
//
// A connection (Conn) is a one-way FIFO from one rank to another on one
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
//
// # The control plane
//
// Ranks in separate processes meet through package bootstrap (unique ID,
// root, the bootstrap ring, launchers); this package knows nothing of it
// but an Exchanger, through which connection setup trades addresses and
// handles. The TCP helpers both use are package internal/tcp's.
package transport

import (
	"context"
)

// Exchanger is what setting up connections needs of the control plane:
// this rank and the communicator's size, an all-gather of one blob per
// rank (at most 1 MiB each) and a barrier. Every rank of the communicator
// makes the same calls in the same order; a failed call leaves the
// exchanger unusable. *bootstrap.Bootstrap implements it.
type Exchanger interface {
	Rank() int
	Size() int
	// AllGather returns every rank's blob, indexed by rank.
	AllGather(ctx context.Context, blob []byte) ([][]byte, error)
	// Barrier returns once every rank has entered it.
	Barrier(ctx context.Context) error
}

// Subset is an exchanger among some ranks of a communicator — two ranks
// connecting on their own, say — that presents them as the communicator
// does: Ex is an exchanger of just those ranks, ranked as in Ranks (Ranks[i]
// is the communicator's rank of Ex's rank i), and Subset's Rank and Size
// are the communicator's, AllGather's result has the communicator's length,
// nil for the ranks not taking part. Code written for the whole
// communicator runs among a few, as long as it reads only the blobs of
// ranks taking part.
type Subset struct {
	Ex    Exchanger
	Ranks []int
	N     int // the communicator's size
}

func (s Subset) Rank() int { return s.Ranks[s.Ex.Rank()] }

func (s Subset) Size() int { return s.N }

func (s Subset) AllGather(ctx context.Context, blob []byte) ([][]byte, error) {
	got, err := s.Ex.AllGather(ctx, blob)
	if err != nil {
		return nil, err
	}
	out := make([][]byte, s.N)
	for i, b := range got {
		out[s.Ranks[i]] = b
	}
	return out, nil
}

func (s Subset) Barrier(ctx context.Context) error { return s.Ex.Barrier(ctx) }

// Transport connects the ranks of one communicator.
type Transport interface {
	// Conn returns the connection carrying channel ch from rank from to
	// rank to, ready for both ends to use. Repeated calls return the same
	// connection.
	Conn(ctx context.Context, from, to, ch int) (*Conn, error)
	// Close releases every connection. Using a Conn afterwards is a bug.
	Close() error
}
