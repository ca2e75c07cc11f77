//go:build cuda

package ringo

import (
	"context"
	"errors"
	"time"

	"github.com/ringo-ccl/ringo/bootstrap"
	"github.com/ringo-ccl/ringo/device"
	"github.com/ringo-ccl/ringo/internal/config"
	"github.com/ringo-ccl/ringo/internal/cuda"
	"github.com/ringo-ccl/ringo/internal/env"
	"github.com/ringo-ccl/ringo/internal/errs"
	"github.com/ringo-ccl/ringo/internal/group"
	"github.com/ringo-ccl/ringo/internal/hier"
	"github.com/ringo-ccl/ringo/internal/peers"
	"github.com/ringo-ccl/ringo/network"
	"github.com/ringo-ccl/ringo/p2p"
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
	g := group.NewProcs(bs, s.Check, s.Timeout)
	c, err := connectGPUs(ctx, g, id.Tag(), s, dev)
	if err != nil {
		bs.Close()
		return fail(err)
	}
	g.Watch()
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

// connectGPUs fits this rank's settings to the communicator's GPUs, has
// package p2p choose its transport and connect it to its ring neighbours,
// and starts its device executor.
func connectGPUs(ctx context.Context, g *group.Procs, tag string, s config.Settings, dev *cuda.Device) (_ *Comm, err error) {
	bs := g.BS
	n, rank := bs.Size(), bs.Rank()
	resident, err := device.Resident(dev.Ordinal)
	if err != nil {
		return nil, err
	}
	ps, err := peers.Exchange(ctx, bs, peers.Local{Settings: s.Fingerprint(), ShmOff: s.SHMOff, GPU: dev.UUID(), Resident: resident})
	if err != nil {
		return nil, err
	}
	// Ranks on one GPU may run their kernels at once (ranks of this
	// process, or of several under MPS): fit them all.
	if err := s.FitShared(config.PeerShares(ps, rank)); err != nil {
		return nil, err
	}
	if !s.RingGiven {
		s.Ring = peers.Ring(ps) // each host's ranks in a row
	}
	local := 0
	for _, p := range ps {
		if p.Pid == ps[rank].Pid {
			local++
		}
	}
	sib := peers.JoinSiblings(tag, local)
	defer func() {
		if err != nil {
			sib.Close(func() error { return nil }) // a rank that never was
		} else {
			g.Sib = sib
		}
	}()
	oneHost := true
	for _, p := range ps {
		oneHost = oneHost && p.SameHost(ps[0])
	}
	me := p2p.Rank{Ex: bs, Dev: dev, Tag: tag, NextGPU: ps[s.Ring.At(s.Ring.Index(rank), 1)].GPU, OneHost: oneHost,
		P2PDisabled: s.P2POff, SHMDisabled: s.SHMOff}
	choice, err := me.Select(ctx)
	if err != nil {
		return nil, err
	}
	if err := s.PlaceLL128(config.LL128Link{HostMemory: choice.HostMemory, Unsafe: choice.LL128Unsafe}); err != nil {
		return nil, err
	}
	if choice.Transport == p2p.Net && !s.ChannelsGiven {
		// As for host ranks: a few channels keep the socket connections
		// busy; 64 would be 256 sockets and as many polling proxies.
		s.Channels = min(s.Channels, network.GPUChannels)
		s.MinChannels = min(s.MinChannels, s.Channels)
	}
	conns, err := me.Connect(ctx, choice.Transport, s.Layout(), s.Ring, g.Fail, g.Broken())
	if err != nil {
		return nil, err
	}
	g.Net = choice.Transport == p2p.Net
	exec, err := device.New(dev.Ordinal, uintptr(conns.Table), s.Channels)
	if err != nil {
		conns.Close()
		return nil, err
	}
	next := s.Ring.At(s.Ring.Index(rank), 1)
	for c := range s.Channels {
		env.Info(env.SubInit|env.SubP2P, "Channel %02d : %d[%d] -> %d[%s] via %s", c, rank, dev.Ordinal, next, ps[next].GPU, conns.Via)
	}
	g.SetStop(exec.Abort)
	g.Cleanup = func() error {
		// Let the kernels end — or stop them past the timeout — before
		// the memory they use goes away; then make sure the ranks of other
		// processes are done with this rank's memory too (this process's
		// are: see peers.Siblings).
		errs := []error{device.SyncBounded(dev.Synchronize, s.Timeout, exec.Abort)}
		bctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
		defer cancel()
		errs = append(errs, bs.Barrier(bctx))
		errs = append(errs, exec.Close(), conns.Close())
		return errors.Join(errs...)
	}
	c, _ := newComm(rank, n, s, g, nil)
	c.gpu = &gpuRank{dev: dev.Ordinal, exec: exec, check: device.NewChecker(dev.Ordinal)}
	c.traceKernels()
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
