package ringo

import (
	"context"
	"errors"
	"fmt"
	"slices"
	"strings"
	"sync"
	"sync/atomic"
	"time"

	"github.com/ringo-ccl/ringo/bootstrap"
	"github.com/ringo-ccl/ringo/internal/calls"
	"github.com/ringo-ccl/ringo/internal/config"
	"github.com/ringo-ccl/ringo/internal/env"
	"github.com/ringo-ccl/ringo/internal/errs"
	"github.com/ringo-ccl/ringo/internal/peers"
	"github.com/ringo-ccl/ringo/network"
	"github.com/ringo-ccl/ringo/ring"
	"github.com/ringo-ccl/ringo/shm"
	"github.com/ringo-ccl/ringo/transport"
)

// UniqueID names a communicator whose ranks are separate processes: the
// address of its bootstrap root and a random secret, 128 bytes like NCCL's
// ncclUniqueId. One process makes it with NewUniqueID and hands it to the
// others (String and UniqueIDFromString give a text form).
type UniqueID = bootstrap.UniqueID

// NewUniqueID starts a bootstrap root in this process and returns the ID
// that names it. The root serves until every rank that joined has closed.
func NewUniqueID() (UniqueID, error) { return bootstrap.NewUniqueID() }

// UniqueIDFromString parses the text form of a UniqueID (UniqueID.String),
// checking its length and checksum.
func UniqueIDFromString(s string) (UniqueID, error) { return bootstrap.UniqueIDFromString(s) }

// NewComm makes this process rank rank of the nranks-rank communicator that
// id names. Every rank calls it, each in its own process, with the same id
// and nranks; it returns once all of them have joined and connected their
// ring, or fails when ctx ends first, naming the ranks that never came. The
// ranks must be on one host (they connect through shared memory in
// /dev/shm) and resolve cfg and the environment to the same settings.
func NewComm(ctx context.Context, id UniqueID, nranks, rank int, cfg *Config) (*Comm, error) {
	if nranks < 1 || rank < 0 || rank >= nranks {
		return nil, errs.Invalid("init", rank, "rank %d of a communicator of %d ranks", rank, nranks)
	}
	return newHostComm(ctx, nranks, rank, cfg, func() (*bootstrap.Bootstrap, UniqueID, error) {
		bs, err := bootstrap.Join(ctx, id, nranks, rank)
		return bs, id, err
	})
}

// NewCommFromEnv joins the job a launcher describes in the environment:
// rank and size from RINGO_RANK and RINGO_NRANKS, torchrun (RANK,
// WORLD_SIZE), Open MPI (OMPI_COMM_WORLD_*), MVAPICH2 (MV2_COMM_WORLD_*),
// MPICH or Intel MPI (PMI_RANK, PMI_SIZE) or an srun step (SLURM_PROCID,
// SLURM_NTASKS), in that order; the bootstrap root's address from
// RINGO_COMM_ID or NCCL_COMM_ID (host:port), else MASTER_ADDR and
// MASTER_PORT, else, under srun, the step's first node. Rank 0 starts the
// root there. bootstrap.LaunchFromEnv has the details; the job's secret
// is RINGO_SECRET's, else derived (bootstrap.JoinLaunch says what that
// protects against).
func NewCommFromEnv(ctx context.Context, cfg *Config) (*Comm, error) {
	l, ok, err := bootstrap.LaunchFromEnv()
	if err == nil && !ok {
		err = fmt.Errorf("%w: no launcher variables (RINGO_RANK/RINGO_NRANKS, RANK/WORLD_SIZE, OMPI_COMM_WORLD_RANK/SIZE, MV2_COMM_WORLD_RANK/SIZE, PMI_RANK/PMI_SIZE, or SLURM_PROCID/SLURM_NTASKS in an srun step)", ErrInvalidArgument)
	}
	if err != nil {
		return nil, errs.At("init", -1, err)
	}
	return newHostComm(ctx, l.Size, l.Rank, cfg, func() (*bootstrap.Bootstrap, UniqueID, error) {
		return bootstrap.JoinLaunch(ctx, l)
	})
}

// newHostComm makes rank of an nranks-rank communicator of host
// processes, joining its bootstrap with join (which returns the bootstrap
// and the communicator's id) once cfg has resolved.
func newHostComm(ctx context.Context, nranks, rank int, cfg *Config, join func() (*bootstrap.Bootstrap, UniqueID, error)) (*Comm, error) {
	s, err := resolve(cfg, nranks, config.Host)
	if err != nil {
		return nil, errs.At("init", rank, err)
	}
	bs, id, err := join()
	if err != nil {
		return nil, errs.At("init", rank, err)
	}
	g, err := connectProcs(ctx, bs, id.Tag(), &s)
	if err != nil {
		bs.Close()
		return nil, errs.At("init", rank, err)
	}
	c, err := newComm(rank, nranks, s, g, g.tr)
	if err != nil {
		g.release(rank)
		return nil, err
	}
	err = c.procHier(ctx, cfg, func(p splitPart, cfg *Config) (*Comm, error) {
		return NewComm(ctx, p.id, p.size, p.rank, cfg)
	})
	if err != nil {
		c.Close()
		return nil, errs.At("init", rank, err)
	}
	return c, nil
}

// procGroup is what a rank in its own process shares with the others: the
// bootstrap (which reports lost ranks) and the transports to its neighbours
// (shared memory, sockets).
type procGroup struct {
	bs    *bootstrap.Bootstrap
	tr    transport.Transport // host ranks' connections; nil for GPU ranks
	abort transport.Abort
	done  chan struct{} // closed by release: stops the watcher
	once  sync.Once

	// For a GPU rank: what stops its kernels — set once its executor
	// exists, after proxies that may call fail already run — and what
	// releases its connections (before the bootstrap closes: it may still
	// need it).
	stop    atomic.Pointer[func()]
	cleanup func() error
	sib     *peers.Siblings // the communicator's ranks in this process, for release
	net     bool            // this rank has net connections (and their proxies)

	seq uint64 // the rank's current collective, for leave

	// check (RINGO_CHECK=1): every call's record is all-gathered over the
	// bootstrap and compared, within timeout (0: none).
	check   bool
	timeout time.Duration
}

var _ group = (*procGroup)(nil)

// connectProcs connects host ranks in separate processes: through /dev/shm
// to a neighbour of the same host, through sockets to one of another host
// or when shared memory is off. Without a ring order in the
// configuration, the ring visits each host's ranks in a row, so it
// crosses between hosts as few times as it can.
func connectProcs(ctx context.Context, bs *bootstrap.Bootstrap, tag string, s *config.Settings) (*procGroup, error) {
	ps, err := peers.Exchange(ctx, bs, peers.Local{Settings: s.Fingerprint(), ShmOff: s.SHMOff})
	if err != nil {
		return nil, err
	}
	if !s.RingGiven {
		s.Ring = peers.Ring(ps)
	}
	g := &procGroup{bs: bs, done: make(chan struct{}), check: s.Check, timeout: s.Timeout}
	n, rank := bs.Size(), bs.Rank()
	if n == 1 {
		go g.routineWatch()
		return g, nil
	}
	// Which edges go through shared memory, and whether any goes over the
	// network; every rank computes the same.
	shmLink := func(from, to int) bool { return !ps[from].ShmOff && ps[from].SameHost(ps[to]) }
	edges := transport.RingEdges(s.Ring, ring.Bidirectional, 1) // both ways round: what any variant's channels use
	anyNet := slices.ContainsFunc(edges, func(e transport.Edge) bool { return !shmLink(e.From, e.To) })
	if anyNet && !s.ChannelsGiven {
		// A net connection is bound by its proxies' and the executor's
		// round trips, not by one core: channels run side by side.
		cpus := ps[0].CPUs
		for _, p := range ps {
			cpus = min(cpus, p.CPUs)
		}
		s.Channels = min(max(s.Channels, network.HostChannels(cpus)), s.ChannelsMax)
	}
	sc, err := shm.NewConnector(bs, tag, s.Sizes, shmLink)
	if err != nil {
		return nil, err
	}
	kinds := []transport.Connector{sc}
	if anyNet {
		nc, err := network.NewConnector(ctx, bs, s.Sizes, g.fail, &g.abort)
		if err != nil {
			return nil, err
		}
		kinds = append(kinds, nc)
	}
	mesh := transport.NewMesh(rank, kinds...)
	ringEdges := transport.RingEdges(s.Ring, s.Variant, s.Channels)
	if err := mesh.Connect(ctx, ringEdges); err != nil {
		mesh.Close()
		return nil, err
	}
	for _, e := range ringEdges {
		if e.From != rank && e.To != rank {
			continue
		}
		via := mesh.Via(e)
		g.net = g.net || strings.HasPrefix(via, "NET")
		if e.From == rank {
			env.Info(env.SubInit|env.SubShm|env.SubNet, "Channel %02d : %d -> %d via %s", e.Ch, rank, e.To, via)
		}
	}
	g.tr = mesh
	go g.routineWatch()
	return g, nil
}

// routineWatch turns the loss of a peer into the group's abort, so every
// wait of this rank ends with ErrPeerLost naming it.
func (g *procGroup) routineWatch() {
	select {
	case err, ok := <-g.bs.PeerLost():
		if ok && err != nil {
			g.fail(err)
		}
	case <-g.done:
	}
}

// enter publishes the rank's progress, which the other ranks' stall
// reports read through the bootstrap root.
func (g *procGroup) enter(rank int, rec calls.Record) error {
	g.seq = rec.Seq
	g.bs.SetProgress(rec.Seq, false)
	if g.sib != nil {
		if err := g.sib.Enter(rank, rec); err != nil {
			return err
		}
	}
	if !g.check {
		return nil
	}
	return calls.Compare(g.bs, rank, rec, g.timeout)
}

func (g *procGroup) leave(int) { g.bs.SetProgress(g.seq, true) }

// stalled asks every rank, through the bootstrap root, where it is.
func (g *procGroup) stalled(seq uint64) string {
	ctx, cancel := context.WithTimeout(context.Background(), 3*time.Second)
	defer cancel()
	ps, err := g.bs.Query(ctx)
	if err != nil {
		return fmt.Sprintf("collective #%d: the other ranks could not be asked where they are: %v", seq, err)
	}
	return calls.StallReport(seq, ps)
}

func (g *procGroup) broken() *transport.Abort { return &g.abort }

// connect makes the host ranks' missing connections through the mesh.
func (g *procGroup) connect(ctx context.Context, edges []transport.Edge) error {
	m, ok := g.tr.(*transport.Mesh)
	if !ok {
		return fmt.Errorf("%w: this communicator's ranks have no host connections", ErrNotSupported)
	}
	return m.Connect(ctx, edges)
}
func (g *procGroup) proxied() bool { return g.net }

// fail breaks the group and stops this rank's kernels, if it has any.
func (g *procGroup) fail(cause error) {
	g.abort.Set(cause)
	if stop := g.stop.Load(); stop != nil {
		(*stop)()
	}
}

func (g *procGroup) release(int) error {
	var err error
	g.once.Do(func() {
		close(g.done)
		free := func() error {
			var errs []error
			if g.cleanup != nil {
				errs = append(errs, g.cleanup())
			}
			errs = append(errs, g.bs.Close())
			if g.tr != nil {
				errs = append(errs, g.tr.Close())
			}
			return errors.Join(errs...)
		}
		if g.sib == nil {
			err = free()
		} else {
			err = g.sib.Close(free)
		}
	})
	return err
}
