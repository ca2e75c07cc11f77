//go:build cuda

package p2p

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"slices"

	"github.com/ringo-ccl/ringo/internal/cuda"
	"github.com/ringo-ccl/ringo/kernels"
	"github.com/ringo-ccl/ringo/transport"
)

// Rank is one GPU rank of a communicator whose ranks are processes, as
// its transports see it.
type Rank struct {
	Ex      transport.Exchanger // the control plane: the communicator's bootstrap
	Dev     *cuda.Device
	Tag     string   // the communicator's tag: names its shared-memory segments
	NextGPU string   // the UUID of the ring successor's GPU
	GPUs    []string // every rank's GPU's UUID
	OneHost bool     // every rank of the communicator is on this rank's host

	P2PDisabled bool // NCCL_P2P_DISABLE=1: GPUs do not reach each other's memory
	SHMDisabled bool // NCCL_SHM_DISABLE=1: ranks of one host do not share memory
}

// linkInfo is what GPU ranks tell each other about the link to their ring
// successor.
type linkInfo struct {
	P2P   bool   // whether this rank's GPU and its successor's reach each other
	All   bool   // whether it reaches every rank's GPU
	LL128 string // why LL128 is not safe on that link ("" where it is)
}

// Select probes the link from r's GPU to its ring successor's, tells every
// rank, and chooses the transport of the communicator (choose): every rank
// calls it at once and gets the same Choice.
func (r Rank) Select(ctx context.Context) (Choice, error) {
	n := r.Ex.Size()
	// Can this rank's GPU and its successor's reach each other?
	p2pOK := !r.P2PDisabled
	ll128 := "" // a ring of one has no link
	if ord := cuda.ByUUID(r.NextGPU); ord < 0 {
		p2pOK = false // the successor's GPU is not visible here
	} else if n > 1 {
		nd, err := cuda.Open(ord)
		switch {
		case err != nil:
			p2pOK, ll128 = false, err.Error()
		case p2pOK:
			p2pOK = EnablePeers(r.Dev, nd) == nil
			ll128 = LL128Unsafe(r.Dev, nd)
		}
	}
	// And every other rank's, for connections off the ring?
	all := !r.P2PDisabled
	for _, uuid := range r.GPUs {
		ord := cuda.ByUUID(uuid)
		if !all || ord == r.Dev.Ordinal {
			continue
		}
		if ord < 0 {
			all = false
			continue
		}
		d, err := cuda.Open(ord)
		all = err == nil && EnablePeers(r.Dev, d) == nil
	}
	blob, _ := json.Marshal(linkInfo{P2P: p2pOK, All: all, LL128: ll128})
	blobs, err := r.Ex.AllGather(ctx, blob)
	if err != nil {
		return Choice{}, fmt.Errorf("exchanging peer access: %w", err)
	}
	allP2P, anyPeer, unsafe := true, true, ""
	for q, b := range blobs {
		var p linkInfo
		if err := json.Unmarshal(b, &p); err != nil {
			return Choice{}, fmt.Errorf("malformed peer access: %v", err)
		}
		allP2P, anyPeer = allP2P && p.P2P, anyPeer && p.All
		if unsafe == "" && p.LL128 != "" {
			unsafe = fmt.Sprintf("rank %d: %s", q, p.LL128)
		}
	}
	c := choose(n, allP2P, r.OneHost, r.SHMDisabled)
	c.LL128Unsafe, c.AnyPeer = unsafe, anyPeer
	return c, nil
}

// Conns are a GPU rank's connections, made in rounds (Tables): the
// kernels' connection table in its GPU's memory and what carries it.
type Conns struct {
	Via string // the transport's name for NCCL_DEBUG lines: "P2P/IPC", "NET/Socket" …

	r        Rank
	t        Transport
	l        Layout
	anyPeer  bool
	fail     func(error)
	abort    *transport.Abort
	tables   *Tables
	conns    []kernels.Conn // every entry's wiring, every round's
	uploaded []cuda.Ptr     // the tables uploaded, the last the current one
	closers  []func() error // each round's transport resources
	pairs    map[[2]int]int // rounds of two ranks alone so far, by pair
}

// Connect makes rank r's connections of edges (Edges gives a ring's)
// through transport t, laid out by l, and uploads its table. A net
// transport's proxies report failures to fail and stop at abort. Every
// rank calls it at once with the same transport, layout and edges.
func (r Rank) Connect(ctx context.Context, ch Choice, l Layout, edges []transport.Edge, fail func(error), abort *transport.Abort) (*Conns, error) {
	c := &Conns{Via: ch.Transport.String(), r: r, t: ch.Transport, l: l, anyPeer: ch.AnyPeer, fail: fail, abort: abort,
		tables: NewTables(r.Ex.Size()), pairs: map[[2]int]int{}}
	if err := c.add(ctx, r.Ex, nil, edges, "c"); err != nil {
		c.Close()
		return nil, err
	}
	return c, nil
}

// AddPair makes the connections of edges, all between this rank and peer,
// that no earlier call made, with peer alone (a new round, and the rank's
// grown table uploaded): ex is an exchanger of the two (bootstrap's Pair),
// and peer calls AddPair with the same edges at the same time — or not at
// all, when both have them already (they know alike: nothing else makes
// connections between them). The other ranks take no part. A rank making
// several pairs' connections makes them in the pairs' order (lower rank,
// then higher), so no two ranks wait for each other in a cycle.
func (c *Conns) AddPair(ctx context.Context, ex transport.Exchanger, peer int, edges []transport.Edge) error {
	me := c.r.Ex.Rank()
	lo, hi := min(me, peer), max(me, peer)
	if peer == me || peer < 0 || peer >= c.r.Ex.Size() || ex.Size() != 2 {
		return fmt.Errorf("p2p: rank %d connecting with rank %d alone over an exchanger of %d ranks", me, peer, ex.Size())
	}
	k := c.pairs[[2]int{lo, hi}] + 1
	c.pairs[[2]int{lo, hi}] = k
	sub := transport.Subset{Ex: ex, Ranks: []int{lo, hi}, N: c.r.Ex.Size()}
	return c.add(ctx, sub, []int{lo, hi}, edges, fmt.Sprintf("p%d-%d-%d", lo, hi, k))
}

// add makes a round of the connections of edges among ranks (nil: all),
// over ex; name tells the round's shared-memory segments apart. Every
// rank of the round must know alike whether any has new connections: the
// communicator's first round, or two ranks' own.
func (c *Conns) add(ctx context.Context, ex transport.Exchanger, ranks []int, edges []transport.Edge, name string) error {
	if c.t == IPC && !c.anyPeer && len(c.uploaded) > 0 {
		return fmt.Errorf("%w: connections off the ring need every rank's GPU to reach every other's, and some do not (NCCL_P2P_DISABLE=1 connects them through shared memory)", ErrNoPeerAccess)
	}
	rd, err := c.tables.Add(edges, ranks)
	if err != nil || rd == nil {
		return err
	}
	me := ex.Rank()
	entries := rd.Entries[me]
	var peers []int // the other ranks this rank's new entries talk to
	for _, e := range entries {
		for _, q := range []int{e.Recv, e.Send} {
			if q >= 0 && q != me && !slices.Contains(peers, q) {
				peers = append(peers, q)
			}
		}
	}
	if c.t == IPC || c.t == SHM {
		// Where each peer put the other ends: its entries of the round.
		blob, _ := json.Marshal(entries)
		blobs, err := ex.AllGather(ctx, blob)
		if err != nil {
			return fmt.Errorf("exchanging connection entries: %w", err)
		}
		for _, q := range peers {
			var es []kernels.Entry
			if err := json.Unmarshal(blobs[q], &es); err != nil {
				return fmt.Errorf("rank %d sent malformed connection entries: %v", q, err)
			}
			if err := rd.Learn(me, q, es); err != nil {
				return err
			}
		}
	}
	size := c.l.Bytes(len(entries))
	var conns []kernels.Conn
	var at Place
	var cleanup func() error
	switch c.t {
	case None:
		var own cuda.Ptr
		own, cleanup, err = alone(c.r.Dev, size)
		at = func(int) uint64 { return uint64(own) }
	case IPC:
		at, cleanup, err = shareIPC(ctx, ex, c.r.Dev, size, peers)
	case SHM:
		at, cleanup, err = shareShm(ctx, ex, c.r.Tag+"g"+name, c.r.Dev, size, peers)
	case Net:
		var kind string
		conns, kind, cleanup, err = shareNet(ctx, ex, c.r.Dev, c.l, entries, c.fail, c.abort)
		c.Via = Net.String() + "/" + kind
	default:
		return fmt.Errorf("p2p: transport %d", c.t)
	}
	if err != nil {
		return err
	}
	c.closers = append(c.closers, cleanup)
	if len(entries) == 0 {
		return nil
	}
	if at != nil {
		conns = c.l.Conns(rd, me, at)
	}
	c.conns = append(c.conns, conns...)
	table, err := Upload(c.r.Dev, c.conns)
	if err != nil {
		return err
	}
	c.uploaded = append(c.uploaded, table)
	return nil
}

// Table returns the device address of the rank's current connection table
// and a copy of what it holds.
func (c *Conns) Table() (cuda.Ptr, *kernels.Table) {
	return c.uploaded[len(c.uploaded)-1], c.tables.Table(c.r.Ex.Rank()).Clone()
}

// Close frees the tables and the transports' resources. No kernel may be
// using them, and every other rank must be done with this rank's memory.
func (c *Conns) Close() error {
	var errs []error
	for _, t := range c.uploaded {
		errs = append(errs, c.r.Dev.Free(t))
	}
	for _, f := range c.closers {
		errs = append(errs, f())
	}
	c.uploaded, c.closers = nil, nil
	return errors.Join(errs...)
}

// alone places a region of size bytes in dev's memory, for a ring of one.
func alone(dev *cuda.Device, size int64) (cuda.Ptr, func() error, error) {
	p, err := dev.AllocZeroed(size, size)
	if err != nil {
		return 0, nil, err
	}
	return p, func() error { return dev.Free(p) }, nil
}
