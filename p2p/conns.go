//go:build cuda

package p2p

import (
	"errors"
	"fmt"

	"github.com/ringo-ccl/ringo/internal/cuda"
	"github.com/ringo-ccl/ringo/kernels"
	"github.com/ringo-ccl/ringo/ring"
)

// Ring is the connections of every rank of an in-process ring.
type Ring struct {
	devs    []*cuda.Device
	regions []cuda.Ptr // per rank, on its GPU
	tables  []cuda.Ptr // per rank: its RingoConn table, one per channel
}

// Options shape the connections of an in-process ring.
type Options struct {
	Layout
	Disabled bool // NCCL_P2P_DISABLE: no access between different GPUs
}

// Upload copies a connection table to device memory of dev.
func Upload(dev *cuda.Device, conns []kernels.Conn) (cuda.Ptr, error) {
	buf := kernels.EncodeConns(nil, conns)
	t, err := dev.Alloc(int64(len(buf)))
	if err != nil {
		return 0, err
	}
	if err := dev.CopyHtoD(t, buf); err != nil {
		dev.Free(t)
		return 0, err
	}
	return t, nil
}

// EnablePeers checks, and enables, access in both directions between GPUs
// a and b (nothing when they are the same GPU).
func EnablePeers(a, b *cuda.Device) error {
	if a.Ordinal == b.Ordinal {
		return nil
	}
	for _, pair := range [][2]*cuda.Device{{a, b}, {b, a}} {
		if err := Probe(pair[0].Ordinal, pair[1].Ordinal); err != nil {
			return err
		}
		if err := pair[0].EnablePeerAccess(pair[1]); err != nil {
			return err
		}
	}
	return nil
}

// Connect lays out and wires the connections of a ring whose rank r runs on
// devs[r], in the given order (a permutation of the ranks), and enables the
// peer access it needs. Peer access that the driver refuses, or that
// opts.Disabled forbids, between ring neighbours on different GPUs is an
// error naming both.
func Connect(devs []*cuda.Device, order []int, opts Options) (*Ring, error) {
	n := len(devs)
	if n < 1 || len(order) != n || opts.Channels < 1 || opts.Channels > kernels.MaxChannels {
		return nil, fmt.Errorf("p2p: %d GPUs, ring of %d, %d channels", n, len(order), opts.Channels)
	}
	pos := make([]int, n)
	for i, r := range order {
		pos[r] = i
	}
	next := func(r int) int { return order[(pos[r]+1)%n] }
	prev := func(r int) int { return order[(pos[r]+n-1)%n] }
	for r := range n {
		a, b := devs[r], devs[next(r)]
		if a.Ordinal == b.Ordinal {
			continue
		}
		if opts.Disabled {
			return nil, fmt.Errorf("%w: NCCL_P2P_DISABLE=1 between rank %d (GPU %d) and rank %d (GPU %d), and ringo has no other GPU transport in one process",
				ErrNoPeerAccess, r, a.Ordinal, next(r), b.Ordinal)
		}
		if err := EnablePeers(a, b); err != nil {
			return nil, fmt.Errorf("p2p: ranks %d and %d: %w", r, next(r), err)
		}
	}
	g := &Ring{devs: devs}
	fail := func(err error) (*Ring, error) {
		g.Close()
		return nil, err
	}
	size := opts.Bytes()
	for r := range n {
		p, err := devs[r].Alloc(size)
		if err != nil {
			return fail(err)
		}
		g.regions = append(g.regions, p)
		if err := devs[r].Memset(p, 0, size); err != nil {
			return fail(err)
		}
	}
	for r := range n {
		base := func(q int) uint64 { return uint64(g.regions[q]) }
		t, err := Upload(devs[r], opts.Conns(base(r), base(prev(r)), base(next(r))))
		if err != nil {
			return fail(err)
		}
		g.tables = append(g.tables, t)
	}
	return g, nil
}

// RingLL128Unsafe says why LL128 may not run on some link of an in-process
// ring rg whose rank r runs on devs[r] (LL128Unsafe's
// reason for the first such link), or "" where it may on every link.
func RingLL128Unsafe(devs []*cuda.Device, rg ring.Ring) string {
	n, unsafe := len(devs), ""
	for i := 0; n > 1 && i < n && unsafe == ""; i++ { // a ring of one has no link
		unsafe = LL128Unsafe(devs[rg.At(i, 0)], devs[rg.At(i, 1)])
	}
	return unsafe
}

// Table returns the device address of rank r's connection table.
func (g *Ring) Table(r int) cuda.Ptr { return g.tables[r] }

// Close frees the connections' memory. No kernel may be using them.
func (g *Ring) Close() error {
	var errs []error
	for r, p := range g.regions {
		errs = append(errs, g.devs[r].Free(p))
	}
	for r, p := range g.tables {
		errs = append(errs, g.devs[r].Free(p))
	}
	g.regions, g.tables = nil, nil
	return errors.Join(errs...)
}
