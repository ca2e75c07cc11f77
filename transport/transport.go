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
//
// # Bootstrap and launchers
//
// Ranks in separate processes meet through a bootstrap root (root.go) named
// by a UniqueID, and then form a TCP ring (Bootstrap) for AllGather and
// Barrier; a listener admits only connections that prove the ID's secret,
// and holds at most a few others, briefly (gate.go). A job started by a
// launcher finds its rank, size and root in the environment
// (LaunchFromEnv), in this order of precedence: RINGO_RANK/RINGO_NRANKS,
// torchrun, Open MPI, MVAPICH2, MPICH/Intel MPI, and Slurm's srun — explicit
// settings first, then the innermost launcher, whose variables are the ones
// that count when one launcher runs under another (torchrun or mpirun in a
// Slurm job). JoinLaunch derives such a job's secret: from RINGO_SECRET, or
// from the root's address and the size, which keeps apart jobs that reuse an
// address by accident but keeps out no one who can reach the port.
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
