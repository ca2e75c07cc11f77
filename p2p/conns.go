//go:build cuda

package p2p

import (
	"errors"
	"fmt"
	"sync"

	"github.com/ringo-ccl/ringo/internal/cuda"
	"github.com/ringo-ccl/ringo/kernels"
	"github.com/ringo-ccl/ringo/ring"
	"github.com/ringo-ccl/ringo/transport"
)

// Local is the connections of every rank of an in-process communicator,
// made in rounds (Tables): each rank's region of a round in its GPU's
// memory, seen directly by the others.
type Local struct {
	devs     []*cuda.Device
	opts     Options
	mu       sync.Mutex // guards what follows: ranks add rounds from their goroutines
	tables   *Tables
	regions  [][]cuda.Ptr     // per round, per rank (0: no entries that round)
	conns    [][]kernels.Conn // per rank: its entries' wiring, every round's
	uploaded [][]cuda.Ptr     // per rank: its tables, the last the current one
}

// Options shape the connections of an in-process communicator.
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

// Connect makes the connections of edges between ranks whose rank r runs
// on devs[r] (Edges gives a ring's), and enables the peer access they
// need. Peer access that the driver refuses, or that opts.Disabled
// forbids, between ranks on different GPUs is an error naming both.
func Connect(devs []*cuda.Device, edges []transport.Edge, opts Options) (*Local, error) {
	n := len(devs)
	if n < 1 {
		return nil, fmt.Errorf("p2p: no GPUs")
	}
	g := &Local{devs: devs, opts: opts, tables: NewTables(n), conns: make([][]kernels.Conn, n), uploaded: make([][]cuda.Ptr, n)}
	if err := g.Add(edges); err != nil {
		g.Close()
		return nil, err
	}
	return g, nil
}

// Add makes the connections of edges that no earlier call made (a new
// round), and uploads every rank's grown table. Any rank's goroutine may
// call it; ranks pick their new table up with Table.
func (g *Local) Add(edges []transport.Edge) error {
	g.mu.Lock()
	defer g.mu.Unlock()
	for _, e := range edges {
		if e.From < 0 || e.From >= len(g.devs) || e.To < 0 || e.To >= len(g.devs) {
			continue // Tables.Add names it
		}
		a, b := g.devs[e.From], g.devs[e.To]
		if a.Ordinal == b.Ordinal {
			continue
		}
		if g.opts.Disabled {
			return fmt.Errorf("%w: NCCL_P2P_DISABLE=1 between rank %d (GPU %d) and rank %d (GPU %d), and ringo has no other GPU transport in one process",
				ErrNoPeerAccess, e.From, a.Ordinal, e.To, b.Ordinal)
		}
		if err := EnablePeers(a, b); err != nil {
			return fmt.Errorf("p2p: ranks %d and %d: %w", e.From, e.To, err)
		}
	}
	rd, err := g.tables.Add(edges, nil)
	if err != nil || rd == nil {
		return err
	}
	regions := make([]cuda.Ptr, len(g.devs))
	g.regions = append(g.regions, regions)
	for r, entries := range rd.Entries {
		if len(entries) == 0 {
			continue
		}
		size := g.opts.Bytes(len(entries))
		p, err := g.devs[r].AllocZeroed(size, size)
		if err != nil {
			return err
		}
		regions[r] = p
	}
	at := func(q int) uint64 { return uint64(regions[q]) }
	for r, entries := range rd.Entries {
		if len(entries) == 0 {
			continue
		}
		g.conns[r] = append(g.conns[r], g.opts.Conns(rd, r, at)...)
		t, err := Upload(g.devs[r], g.conns[r])
		if err != nil {
			return err
		}
		g.uploaded[r] = append(g.uploaded[r], t)
	}
	return nil
}

// Table returns the device address of rank r's current connection table
// and a copy of what it holds.
func (g *Local) Table(r int) (cuda.Ptr, *kernels.Table) {
	g.mu.Lock()
	defer g.mu.Unlock()
	return g.uploaded[r][len(g.uploaded[r])-1], g.tables.Table(r).Clone()
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

// Close frees the connections' memory. No kernel may be using them.
func (g *Local) Close() error {
	var errs []error
	for _, regions := range g.regions {
		for r, p := range regions {
			if p != 0 {
				errs = append(errs, g.devs[r].Free(p))
			}
		}
	}
	for r, tables := range g.uploaded {
		for _, p := range tables {
			errs = append(errs, g.devs[r].Free(p))
		}
	}
	g.regions, g.uploaded = nil, nil
	return errors.Join(errs...)
}
