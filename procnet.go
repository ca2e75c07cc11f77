package ringo

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"strings"

	"github.com/ringo-ccl/ringo/bootstrap"
	"github.com/ringo-ccl/ringo/internal/env"
	"github.com/ringo-ccl/ringo/internal/errs"
	"github.com/ringo-ccl/ringo/rdma"
	"github.com/ringo-ccl/ringo/transport"
)

// netChannels is the channels of a GPU ring over the net transport unless
// configured: 64 would be 256 sockets and as many polling proxies, and 4
// already carry 12–14 GB/s over loopback on 2×H200 (BENCHMARKS.md).
const netChannels = 4

// hostNetChannels is the channels of a host ring with net links unless
// configured, for ranks whose hosts have at least cpus cores each: every
// channel's executor and proxies keep a core or two busy, so half the
// cores, from 4 to 16 (measured, 2 ranks over loopback TCP, 64 MiB–1 GiB
// all-reduce: on 2 cores 0.63 GB/s with 1 channel, 1.2–1.5 with 2 and 4; on
// 32 cores 5.7–6.2 with 4, 6.5–8.2 with 8, 8.3–10.1 with 16).
func hostNetChannels(cpus int) int { return min(max(cpus/2, 4), 16) }

// envNet is NCCL_NET: "Socket" or "IB" forces the net transport's wire.
var envNet = env.Var{Name: "NET", NCCL: true}

// netWire returns NCCL_NET in lower case: "socket", "ib", or "" when
// unset. Another name is an error, as in NCCL (no net plugin has it).
func netWire() (string, error) {
	v, name, ok := envNet.Lookup()
	force := strings.ToLower(strings.TrimSpace(v))
	if ok && force != "socket" && force != "ib" {
		return "", env.Invalid(name, v, "names no transport ringo has (want Socket or IB)")
	}
	return force, nil
}

// netOffer is what a rank can put on its net connections.
type netOffer struct {
	IB    bool   `json:"ib"`              // an RDMA port is usable here
	Why   string `json:"why,omitempty"`   // why not
	Force string `json:"force,omitempty"` // NCCL_NET, lower case
}

// chooseWire decides, the same on every rank, what carries the net
// connections: RDMA when every rank has a usable port (and NCCL_NET does
// not say Socket), else sockets. NCCL_NET=IB without RDMA everywhere is an
// error naming a rank that lacks it.
func chooseWire(ctx context.Context, bs *bootstrap.Bootstrap) (ib bool, port rdma.Port, err error) {
	force, err := netWire()
	if err != nil {
		return false, port, err
	}
	me := netOffer{Force: force}
	if force != "socket" {
		if _, err := rdma.Hardware(); err != nil {
			me.Why = err.Error()
		} else if ports, err := rdma.SelectPorts(); err != nil {
			me.Why = err.Error()
			if errors.Is(err, ErrInvalidArgument) && force == "" {
				// As NCCL: no IB device matches, so sockets carry the data.
				env.Warnf("%v; using sockets", err)
			}
		} else {
			me.IB, port = true, ports[bs.Rank()%len(ports)]
		}
	}
	blob, _ := json.Marshal(me)
	blobs, err := bs.AllGather(ctx, blob)
	if err != nil {
		return false, port, fmt.Errorf("exchanging net capabilities: %w", err)
	}
	ib = true
	for r, b := range blobs {
		var o netOffer
		if err := json.Unmarshal(b, &o); err != nil {
			return false, port, fmt.Errorf("rank %d sent malformed net capabilities: %v", r, err)
		}
		if o.Force != force {
			return false, port, fmt.Errorf("%w: rank %d has NCCL_NET=%q, rank %d %q: set it alike everywhere", ErrInvalidArgument, r, o.Force, bs.Rank(), force)
		}
		if !o.IB {
			if force == "ib" {
				return false, port, fmt.Errorf("%w: NCCL_NET=IB, but rank %d has no RDMA: %s", errs.ErrNotSupported, r, o.Why)
			}
			ib = false
		}
	}
	return ib, port, nil
}

// connectNet makes a host rank's net connections — from prev when recv, to
// next when send — in memory of its own, and starts them (startNet). A rank
// with neither side takes part in the exchanges only.
func connectNet(ctx context.Context, g *procGroup, prev, next int, s *settings, recv, send bool) (transport.Transport, string, error) {
	var sm, rm [][]byte
	if send {
		sm = transport.NetMem(s.channels, s.sizes)
	}
	if recv {
		rm = transport.NetMem(s.channels, s.sizes)
	}
	sc, err1 := transport.NetConns(sm, s.sizes)
	rc, err2 := transport.NetConns(rm, s.sizes)
	if err := errors.Join(err1, err2); err != nil {
		return nil, "", err
	}
	return startNet(ctx, g, prev, next, s.channels, s.sizes, sc, sm, rc, rm)
}

// startNet connects nch channels' net connections of g's rank over RDMA
// or sockets (chooseWire) and starts their proxies, which report a broken
// connection to g: send (to next) and recv (from prev), either of which may
// be empty, lying in sendMem and recvMem (one block per channel, which an
// RDMA wire registers). It returns the transport — closing it releases the
// wires and what they share — and the wire's name for NCCL_DEBUG.
func startNet(ctx context.Context, g *procGroup, prev, next, nch int, sizes transport.Sizes, send []*transport.Conn, sendMem [][]byte, recv []*transport.Conn, recvMem [][]byte) (transport.Transport, string, error) {
	bs := g.bs
	ib, port, err := chooseWire(ctx, bs)
	if err != nil {
		return nil, "", err
	}
	var sends []transport.SendWire
	var recvs []transport.RecvWire
	kind, after := "Socket", func() error { return nil }
	if ib {
		p, _ := rdma.Hardware()
		w, err := rdma.Connect(ctx, bs, p, port, prev, next, sizes, sendMem, recvMem, &g.abort)
		if err != nil {
			return nil, "", err
		}
		sends, recvs, after = w.Sends, w.Recvs, w.Close
		kind = fmt.Sprintf("IB/%s:%d", port.Device, port.Port)
	} else {
		nsock, err := transport.SocketsPerConn()
		if err != nil {
			return nil, "", err
		}
		if sends, recvs, err = transport.ConnectSockets(ctx, bs, prev, next, nch, nsock, len(send) > 0, len(recv) > 0); err != nil {
			return nil, "", err
		}
	}
	nt, err := transport.NewNet(bs.Rank(), prev, next, send, sends, recv, recvs, g.fail, &g.abort)
	if err != nil {
		for _, w := range sends {
			w.Close()
		}
		for _, w := range recvs {
			w.Close()
		}
		return nil, "", errors.Join(err, after())
	}
	return &netTransport{nt, after}, kind, nil
}

// netTransport is a Net and what its wires share, released after it.
type netTransport struct {
	*transport.Net
	after func() error
}

func (t *netTransport) Close() error { return errors.Join(t.Net.Close(), t.after()) }

// ringNet carries a ring's net edges over connectNet: on every channel at
// most one edge into this rank, from one predecessor, and one out of it, to
// one successor.
type ringNet struct {
	g    *procGroup
	s    *settings
	nt   transport.Transport
	kind string
}

func (r *ringNet) Name() string                   { return "NET/" + r.kind }
func (r *ringNet) CanConnect(transport.Edge) bool { return true }
func (r *ringNet) Close() error {
	if r.nt == nil {
		return nil
	}
	return r.nt.Close()
}

func (r *ringNet) Connect(ctx context.Context, edges []transport.Edge) ([]*transport.Conn, error) {
	if r.nt != nil {
		return nil, fmt.Errorf("net transport: connected once already")
	}
	rank := r.g.bs.Rank()
	prev, next, recv, send := -1, -1, false, false
	for _, e := range edges {
		switch {
		case e.To == rank && (prev < 0 || prev == e.From):
			prev, recv = e.From, true
		case e.From == rank && (next < 0 || next == e.To):
			next, send = e.To, true
		case e.To == rank || e.From == rank:
			return nil, fmt.Errorf("net transport: rank %d's net connections go to more than one successor or come from more than one predecessor", rank)
		}
	}
	nt, kind, err := connectNet(ctx, r.g, max(prev, 0), max(next, 0), r.s, recv, send)
	if err != nil {
		return nil, err
	}
	r.nt, r.kind = nt, kind
	conns := make([]*transport.Conn, len(edges))
	for i, e := range edges {
		if e.From == rank || e.To == rank {
			if conns[i], err = nt.Conn(ctx, e.From, e.To, e.Ch); err != nil {
				return nil, err
			}
		}
	}
	return conns, nil
}
