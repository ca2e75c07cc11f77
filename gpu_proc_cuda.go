//go:build cuda

package ringo

import (
	"context"

	"github.com/ringo-ccl/ringo/bootstrap"
	"github.com/ringo-ccl/ringo/device"
	"github.com/ringo-ccl/ringo/internal/config"
	"github.com/ringo-ccl/ringo/internal/cuda"
	"github.com/ringo-ccl/ringo/internal/errs"
	"github.com/ringo-ccl/ringo/internal/group"
	"github.com/ringo-ccl/ringo/internal/hier"
	"github.com/ringo-ccl/ringo/internal/peers"
)

// newGPUComm is NewGPUComm in a build with the cuda tag.
func newGPUComm(ctx context.Context, id UniqueID, nranks, rank, gpu int, cfg *Config) (*Comm, error) {
	fail := func(err error) (*Comm, error) {
		return nil, errs.At("init", rank, err)
	}
	if nranks < 1 || rank < 0 || rank >= nranks {
		return nil, errs.Invalid("init", rank, "rank %d of a communicator of %d ranks", rank, nranks)
	}
	s, err := resolve(cfg, nranks, config.GPU)
	if err != nil {
		return fail(err)
	}
	dev, err := cuda.Open(gpu)
	if err != nil {
		return fail(err)
	}
	bs, err := bootstrap.Join(ctx, id, nranks, rank)
	if err != nil {
		return fail(err)
	}
	g, exec, err := group.ConnectGPU(ctx, bs, id.Tag(), &s, dev)
	if err != nil {
		bs.Close()
		return fail(err)
	}
	c, _ := newComm(rank, nranks, s, g, nil)
	c.gpu = &gpuRank{dev: dev.Ordinal, exec: exec, check: device.NewChecker(dev.Ordinal), reads: g.Reads}
	c.traceKernels()
	sub := subConfig(cfg, &c.cfg)
	err = c.procHier(hier.Split(ctx, bs, func(p peers.Part) (*Comm, error) {
		return NewGPUComm(ctx, p.ID, p.Size, p.Rank, gpu, sub)
	}))
	if err != nil {
		c.Close()
		return fail(err)
	}
	return c, nil
}

// split is Split in a build with the cuda tag.
func (c *Comm) split(ctx context.Context, color, key int, cfg *Config) (*Comm, error) {
	g, ok := c.group.(*group.Procs)
	if !ok || c.gpu == nil {
		return nil, errs.Invalid("split", c.rank, "Split needs a communicator made by NewGPUComm")
	}
	part, err := peers.Split(ctx, g.BS, color, key, NewUniqueID)
	if err != nil {
		return nil, errs.At("split", c.rank, err)
	}
	if color < 0 {
		return nil, nil
	}
	return NewGPUComm(ctx, part.ID, part.Size, part.Rank, c.gpu.dev, cfg)
}
