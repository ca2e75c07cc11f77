package ringo

import (
	"context"
	"fmt"
	"github.com/ringo-ccl/ringo/host"

	"github.com/ringo-ccl/ringo/bootstrap"
	"github.com/ringo-ccl/ringo/internal/config"
	"github.com/ringo-ccl/ringo/internal/direct"
	"github.com/ringo-ccl/ringo/internal/errs"
	"github.com/ringo-ccl/ringo/internal/group"
	"github.com/ringo-ccl/ringo/internal/hier"
	"github.com/ringo-ccl/ringo/internal/peers"
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
	g, err := group.ConnectHosts(ctx, bs, id.Tag(), &s)
	if err != nil {
		bs.Close()
		return nil, errs.At("init", rank, err)
	}
	c, err := newComm(rank, nranks, s, g, g.Transport())
	if err != nil {
		g.Release(rank)
		return nil, err
	}
	c.board, c.crowd, c.boardCrowded = g.Board, g.Crowded, g.BoardCrowded
	if c.board != nil {
		c.wins = direct.NewHost(rank, nranks)
		c.win.Windows = c.wins
	}
	if c.attach = g.Attach; c.attach != nil {
		c.direct = host.Direct{Scratch: make([]byte, host.DirectChunk), Addrs: make([]uintptr, 2*nranks)}
	}
	c.made = configOf(cfg)
	sub := subConfig(cfg, &s)
	err = c.procHier(hier.Split(ctx, bs, func(p peers.Part) (*Comm, error) {
		return NewComm(ctx, p.ID, p.Size, p.Rank, sub)
	}))
	if err != nil {
		c.Close()
		return nil, errs.At("init", rank, err)
	}
	return c, nil
}
