//go:build cuda

package p2p

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"

	"github.com/ringo-ccl/ringo/internal/cuda"
	"github.com/ringo-ccl/ringo/ring"
	"github.com/ringo-ccl/ringo/transport"
)

// Rank is one GPU rank of a communicator whose ranks are processes, as
// its transports see it.
type Rank struct {
	Ex      transport.Exchanger // the control plane: the communicator's bootstrap
	Dev     *cuda.Device
	Tag     string // the communicator's tag: names its shared-memory segments
	NextGPU string // the UUID of the ring successor's GPU
	OneHost bool   // every rank of the communicator is on this rank's host

	P2PDisabled bool // NCCL_P2P_DISABLE=1: GPUs do not reach each other's memory
	SHMDisabled bool // NCCL_SHM_DISABLE=1: ranks of one host do not share memory
}

// linkInfo is what GPU ranks tell each other about the link to their ring
// successor.
type linkInfo struct {
	P2P   bool   // whether this rank's GPU and its successor's reach each other
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
	blob, _ := json.Marshal(linkInfo{P2P: p2pOK, LL128: ll128})
	blobs, err := r.Ex.AllGather(ctx, blob)
	if err != nil {
		return Choice{}, fmt.Errorf("exchanging peer access: %w", err)
	}
	allP2P, unsafe := true, ""
	for q, b := range blobs {
		var p linkInfo
		if err := json.Unmarshal(b, &p); err != nil {
			return Choice{}, fmt.Errorf("malformed peer access: %v", err)
		}
		allP2P = allP2P && p.P2P
		if unsafe == "" && p.LL128 != "" {
			unsafe = fmt.Sprintf("rank %d: %s", q, p.LL128)
		}
	}
	c := choose(n, allP2P, r.OneHost, r.SHMDisabled)
	c.LL128Unsafe = unsafe
	return c, nil
}

// Conns are a GPU rank's connections: the kernels' connection table in its
// GPU's memory and what carries it.
type Conns struct {
	Table cuda.Ptr // the RingoConn table, one per channel (device.New's)
	Via   string   // the transport's name for NCCL_DEBUG lines: "P2P/IPC", "NET/Socket" …
	close func() error
}

// Close frees the table and the transport's resources. No kernel may be
// using them, and every other rank must be done with this rank's memory.
func (c *Conns) Close() error { return c.close() }

// Connect makes rank r's connections through transport t, laid out by l,
// to its neighbours on ring rg (each channel's, as l.Variant gives them).
// A net transport's proxies report failures to fail and stop at abort.
// Every rank calls it at once with the same transport, layout and ring.
func (r Rank) Connect(ctx context.Context, t Transport, l Layout, rg ring.Ring, fail func(error), abort *transport.Abort) (*Conns, error) {
	rank := r.Ex.Rank()
	me := rg.Index(rank)
	prev, next := rg.At(me, -1), rg.At(me, 1)
	var self, prevBase, nextBase uint64
	var cleanup func() error
	var err error
	via := t.String()
	switch t {
	case None:
		self, cleanup, err = alone(r.Dev, l)
		prevBase, nextBase = self, self
	case IPC:
		self, prevBase, nextBase, cleanup, err = shareIPC(ctx, r.Ex, r.Dev, l, prev, next)
	case SHM:
		self, prevBase, nextBase, cleanup, err = shareShm(ctx, r.Ex, r.Tag, r.Dev, l, prev, next)
	case Net:
		var kind string
		self, nextBase, kind, cleanup, err = shareNet(ctx, r.Ex, r.Dev, l, rg, fail, abort)
		via += "/" + kind
	default:
		return nil, fmt.Errorf("p2p: transport %d", t)
	}
	if err != nil {
		return nil, err
	}
	conns := l.Conns(self, prevBase, nextBase)
	if t == Net {
		conns = l.NetConns(self, nextBase)
	}
	table, err := Upload(r.Dev, conns)
	if err != nil {
		cleanup()
		return nil, err
	}
	return &Conns{Table: table, Via: via, close: func() error {
		return errors.Join(r.Dev.Free(table), cleanup())
	}}, nil
}

// alone places the connections of a ring of one in its GPU's memory.
func alone(dev *cuda.Device, l Layout) (uint64, func() error, error) {
	p, err := dev.Alloc(l.Bytes())
	if err != nil {
		return 0, nil, err
	}
	if err := dev.Memset(p, 0, l.Bytes()); err != nil {
		return 0, nil, err
	}
	return uint64(p), func() error { return dev.Free(p) }, nil
}
