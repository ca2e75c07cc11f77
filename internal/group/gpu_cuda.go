//go:build cuda

package group

import (
	"context"
	"errors"
	"fmt"
	"time"

	"github.com/ringo-ccl/ringo/bootstrap"
	"github.com/ringo-ccl/ringo/device"
	"github.com/ringo-ccl/ringo/internal/config"
	"github.com/ringo-ccl/ringo/internal/cuda"
	"github.com/ringo-ccl/ringo/internal/direct"
	"github.com/ringo-ccl/ringo/internal/env"
	"github.com/ringo-ccl/ringo/internal/peers"
	"github.com/ringo-ccl/ringo/network"
	"github.com/ringo-ccl/ringo/p2p"
	"github.com/ringo-ccl/ringo/transport"
)

// ConnectGPU connects a GPU rank in its own process, on dev, to its ring
// neighbours: it fits the rank's settings s to the communicator's GPUs
// (ranks sharing a GPU, LL128's placement, the channels of net
// connections), has package p2p choose the transport and connect it, and
// starts the rank's device executor, which Release's cleanup closes after
// the kernels. It returns the rank's Procs, its liveness watcher started,
// and the executor. Without a ring order in the configuration, the ring
// visits each host's ranks in a row.
func ConnectGPU(ctx context.Context, bs *bootstrap.Bootstrap, tag string, s *config.Settings, dev *cuda.Device) (_ *Procs, _ *device.Rank, err error) {
	g := NewProcs(bs, s.Check, s.Timeout)
	g.StopGrace = s.StopGrace
	rank := bs.Rank()
	resident, err := device.Resident(dev.Ordinal)
	if err != nil {
		return nil, nil, err
	}
	ps, err := peers.Exchange(ctx, bs, peers.Local{Settings: s.Fingerprint(), ShmOff: s.SHMOff, GPU: dev.UUID(), Resident: resident})
	if err != nil {
		return nil, nil, err
	}
	// Ranks on one GPU may run their kernels at once (ranks of this
	// process, or of several under MPS): fit them all.
	if err := s.FitShared(config.PeerShares(ps, rank)); err != nil {
		return nil, nil, err
	}
	if !s.RingGiven {
		s.Ring = peers.Ring(ps) // each host's ranks in a row
	}
	local := make([]bool, len(ps))
	for q, p := range ps {
		local[q] = p.Pid == ps[rank].Pid
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
	gpus := make([]string, len(ps))
	for q, p := range ps {
		gpus[q] = p.GPU
	}
	me := p2p.Rank{Ex: bs, Dev: dev, Tag: tag, NextGPU: ps[s.Ring.At(s.Ring.Index(rank), 1)].GPU, GPUs: gpus, OneHost: oneHost,
		P2PDisabled: s.P2POff, SHMDisabled: s.SHMOff}
	choice, err := me.Select(ctx)
	if err != nil {
		return nil, nil, err
	}
	if err := s.PlaceLL128(config.LL128Link{HostMemory: choice.HostMemory, Unsafe: choice.LL128Unsafe}); err != nil {
		return nil, nil, err
	}
	if choice.Transport == p2p.Net && !s.ChannelsGiven {
		// As for host ranks: a few channels keep the socket connections
		// busy; 64 would be 256 sockets and as many polling proxies.
		s.Channels = min(s.Channels, network.GPUChannels)
		s.MinChannels = min(s.MinChannels, s.Channels)
	}
	conns, err := me.Connect(ctx, choice, s.Layout(), p2p.Edges(s.Ring, s.Variant, s.Channels), g.Fail, g.Broken())
	if err != nil {
		return nil, nil, err
	}
	g.Net = choice.Transport == p2p.Net
	exec, err := device.New(dev.Ordinal, s.Channels, !s.OverlapOff)
	if err == nil {
		table, t := conns.Table()
		err = exec.SetTable(uintptr(table), t)
	}
	if err != nil {
		if exec != nil {
			exec.Close()
		}
		conns.Close()
		return nil, nil, err
	}
	if directPossible(s, choice, len(ps)) {
		gpu := direct.NewGPU(dev, exec, s.Timeout)
		reads, why, err := direct.Join(ctx, bs, gpu, rank, local, s.Ring.Order, s.DirectStage(), reachLocal(dev, ps, local, rank))
		if err != nil {
			exec.Close()
			conns.Close()
			return nil, nil, err
		}
		if why != nil {
			env.Info(env.SubInit, "rank %d: all-reduces stay on the ring: %v", rank, why)
		}
		g.Reads = reads
	}
	g.connectGPU = func(ctx context.Context, edges []transport.Edge) error {
		if err := byPeer(bs, edges, func(q int, es []transport.Edge) error {
			return conns.AddPair(ctx, bs.Pair(q), q, es)
		}); err != nil {
			return err
		}
		table, t := conns.Table()
		return exec.SetTable(uintptr(table), t)
	}
	next := s.Ring.At(s.Ring.Index(rank), 1)
	for c := range s.Channels {
		env.Info(env.SubInit|env.SubP2P, "Channel %02d : %d[%d] -> %d[%s] via %s", c, rank, dev.Ordinal, next, ps[next].GPU, conns.Via)
	}
	g.SetStop(exec.Abort)
	timeout := s.Timeout
	g.Cleanup = func() error {
		// Let the kernels end — or stop them past the timeout — before
		// the memory they use goes away; then make sure the ranks of other
		// processes are done with this rank's memory too (this process's
		// are: see peers.Siblings).
		// Each phase's time goes to NCCL_DEBUG=INFO (INIT): on one H200 a
		// PyTorch job's teardown of a communicator that had lost a rank
		// took 4–7 s, and where was not known (issue 21).
		var took [4]time.Duration
		phase := func(i int, f func() error) error {
			t := time.Now()
			err := f()
			took[i] = time.Since(t)
			return err
		}
		errs := []error{phase(0, func() error { return device.SyncBounded(dev.Synchronize, timeout, exec.Abort) })}
		bctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
		defer cancel()
		errs = append(errs, phase(1, func() error { return bs.Barrier(bctx) }))
		if g.Reads != nil {
			errs = append(errs, g.Reads.Close()) // the others' memory, before this rank's goes
		}
		errs = append(errs, phase(2, exec.Close), phase(3, conns.Close))
		env.Info(env.SubInit, "rank %d cleanup: GPU sync %v, barrier %v, executor %v, connections %v", rank, took[0], took[1], took[2], took[3])
		return errors.Join(errs...)
	}
	g.Watch()
	return g, exec, nil
}

// directPossible reports whether a communicator's ranks — all alike —
// try direct all-reduces (package direct): the settings allow it for n
// ranks, all on one host with GPUs that reach each other.
func directPossible(s *config.Settings, choice p2p.Choice, n int) bool {
	return s.DirectFor(n) && choice.Transport == p2p.IPC && choice.AnyPeer
}

// reachLocal enables this rank's access to the GPUs of the ranks of its
// process (local) on other GPUs, whose memory it reads where it is; the
// error says why it cannot.
func reachLocal(dev *cuda.Device, ps []peers.Info, local []bool, rank int) error {
	for q, p := range ps {
		if !local[q] || p.GPU == ps[rank].GPU {
			continue
		}
		other, err := cuda.Open(cuda.ByUUID(p.GPU))
		if err == nil {
			err = p2p.EnablePeers(dev, other)
		}
		if err != nil {
			return fmt.Errorf("rank %d cannot reach rank %d's GPU %s: %w", rank, q, p.GPU, err)
		}
	}
	return nil
}
