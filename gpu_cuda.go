//go:build cuda

package ringo

import (
	"errors"
	"fmt"

	"github.com/ringo-ccl/ringo/device"
	"github.com/ringo-ccl/ringo/internal/config"
	"github.com/ringo-ccl/ringo/internal/cuda"
	"github.com/ringo-ccl/ringo/internal/direct"
	"github.com/ringo-ccl/ringo/internal/env"
	"github.com/ringo-ccl/ringo/internal/errs"
	"github.com/ringo-ccl/ringo/internal/group"
	"github.com/ringo-ccl/ringo/internal/hier"
	"github.com/ringo-ccl/ringo/p2p"
	"github.com/ringo-ccl/ringo/transport"
)

// newLocalGPUs is NewLocalGPUs in a build with the cuda tag.
func newLocalGPUs(gpus []int, cfg *Config) ([]*Comm, error) {
	n := len(gpus)
	if n < 1 {
		return nil, errs.At("init", -1, fmt.Errorf("%w: no GPUs given", ErrInvalidArgument))
	}
	fail := func(rank int, err error) ([]*Comm, error) {
		return nil, errs.At("init", rank, err)
	}
	s, err := resolve(cfg, n, config.GPU)
	if err != nil {
		return fail(-1, err)
	}
	devs := make([]*cuda.Device, n)
	for r, g := range gpus {
		if devs[r], err = cuda.Open(g); err != nil {
			return fail(r, err)
		}
	}
	shares, err := config.LocalShares(gpus, device.Resident)
	if err != nil {
		return fail(-1, err)
	}
	if err := s.FitShared(shares); err != nil {
		return fail(-1, err)
	}
	s.SharedP2P(shares)
	if err := s.PlaceLL128(config.LL128Link{Unsafe: p2p.RingLL128Unsafe(devs, s.Ring)}); err != nil {
		return fail(-1, err)
	}
	pr, err := p2p.Connect(devs, p2p.Edges(s.Ring, s.Variant, s.Channels), p2p.Options{Layout: s.Layout(), Disabled: s.P2POff})
	if err != nil {
		return fail(-1, err)
	}
	comms := make([]*Comm, n)
	w := group.NewWorld(n, nil, nil)
	if s.Unordered {
		w.Unordered()
	}
	w.Done = func() error {
		// Kernels may still run on the ranks' streams: let them finish
		// before freeing their memory — within the timeout, after which
		// they are aborted (a rank's kernel waiting for a peer that will
		// never launch would otherwise keep Close waiting forever).
		sync := func() error {
			var errs []error
			for _, d := range devs {
				errs = append(errs, d.Synchronize())
			}
			return errors.Join(errs...)
		}
		stop := func() {
			w.Fail(fmt.Errorf("%w: closing with collectives unfinished after %v", ErrAborted, s.Timeout))
		}
		errs := []error{device.SyncBounded(sync, s.Timeout, stop)}
		for _, c := range comms {
			errs = append(errs, c.gpu.exec.Close())
		}
		errs = append(errs, pr.Close())
		return errors.Join(errs...)
	}
	w.ConnectGPU = func(rank int, edges []transport.Edge) error {
		if err := pr.Add(edges); err != nil {
			return err
		}
		table, t := pr.Table(rank)
		return comms[rank].gpu.exec.SetTable(uintptr(table), t)
	}
	for r := range n {
		exec, err := device.New(gpus[r], s.Channels, !s.OverlapOff)
		if err == nil {
			table, t := pr.Table(r)
			if err = exec.SetTable(uintptr(table), t); err != nil {
				exec.Close()
			}
		}
		if err != nil {
			for _, c := range comms[:r] {
				c.gpu.exec.Close()
			}
			pr.Close()
			return fail(r, err)
		}
		comms[r], _ = newComm(r, n, s, w, nil)
		comms[r].gpu = &gpuRank{dev: gpus[r], exec: exec, check: device.NewChecker(gpus[r]), direct: !s.DirectOff, stripe: s.RankStripe(shares)}
		comms[r].traceKernels()
		w.GPUs = append(w.GPUs, exec)
	}
	if err := readPeers(comms, devs, &s); err != nil {
		for _, c := range comms {
			c.Close()
		}
		return fail(-1, err)
	}
	sub := subConfig(cfg, &s)
	err = newHiers(comms, hier.Local(func(ranks []int) ([]*Comm, error) {
		on := make([]int, len(ranks))
		for i, r := range ranks {
			on[i] = gpus[r]
		}
		return NewLocalGPUs(on, sub)
	}))
	if err != nil {
		for _, c := range comms {
			c.Close()
		}
		return fail(-1, err)
	}
	return comms, nil
}

// readPeers readies ranks of one process for direct all-reduces
// (Settings.Direct, package direct): each gets its sync area and learns
// every other rank's. Where a pair of their GPUs cannot reach each other
// (no peer access, NCCL_P2P_DISABLE), NCCL_P2P_DIRECT_DISABLE or
// RINGO_DIRECT_MAX=0 says not to, or the ranks are more than the kernel
// takes, all-reduces stay on the ring.
func readPeers(comms []*Comm, devs []*cuda.Device, s *config.Settings) error {
	n := len(comms)
	if !s.DirectFor(n) {
		return nil
	}
	for a := range devs {
		for b := a + 1; b < n; b++ {
			if devs[a].Ordinal == devs[b].Ordinal {
				continue
			}
			if s.P2POff {
				return nil
			}
			if err := p2p.EnablePeers(devs[a], devs[b]); err != nil {
				env.Info(env.SubInit, "all-reduces stay on the ring: ranks %d and %d: %v", a, b, err)
				return nil
			}
		}
	}
	gpus := make([]direct.GPU, n)
	for r, c := range comms {
		gpus[r] = direct.NewGPU(devs[r], c.gpu.exec, s.Timeout)
	}
	reads, err := direct.Local(gpus, s.Ring.Order)
	if err != nil {
		return err
	}
	for r, c := range comms {
		c.gpu.reads = reads[r]
	}
	return nil
}

// traceKernels makes the rank's kernels record their steps when the
// communicator traces (RINGO_TRACE); a failure only warns.
func (c *Comm) traceKernels() {
	if c.trace == nil {
		return
	}
	if err := c.gpu.exec.EnableTrace(c.trace, c.rank); err != nil {
		env.Warnf("RINGO_TRACE: rank %d's kernels will not record their steps: %v", c.rank, err)
	}
}
