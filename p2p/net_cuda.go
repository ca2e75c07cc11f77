//go:build cuda

package p2p

import (
	"context"
	"errors"
	"runtime"

	"github.com/ringo-ccl/ringo/internal/cuda"
	"github.com/ringo-ccl/ringo/internal/mem"
	"github.com/ringo-ccl/ringo/kernels"
	"github.com/ringo-ccl/ringo/network"
	"github.com/ringo-ccl/ringo/transport"
)

// shareNet connects this rank's GPU, whose new entries are entries, to
// their peers through the net transport: two regions of host memory registered with CUDA — its
// own (the receive sides, which the proxies from the senders fill) and a
// mirror of the peers' (which the kernel fills and the proxies to the
// receivers forward) — driven by proxies (network.Start; an RDMA wire
// registers the regions' entry parts: the FIFOs are staged in host memory,
// GPUDirect is not done). The proxies report failures to fail and stop at
// abort. It returns the entries' wiring (Layout.NetConns).
func shareNet(ctx context.Context, ex transport.Exchanger, dev *cuda.Device, l Layout, entries []kernels.Entry, fail func(error), abort *transport.Abort) ([]kernels.Conn, string, func() error, error) {
	me := ex.Rank()
	size := int(l.Bytes(len(entries)))
	own, mir := mem.Alloc(max(size, 4096), 4096)[:size], mem.Alloc(max(size, 4096), 4096)[:size]
	send, recv, err := l.NetViews(entries, own, mir)
	if err != nil {
		return nil, "", nil, err
	}
	var registered [][]byte
	var nt *network.Net
	cleanup := func() error {
		var errs []error
		if nt != nil {
			errs = append(errs, nt.Close())
		}
		for _, m := range registered {
			errs = append(errs, dev.UnregisterHost(m))
		}
		runtime.KeepAlive(own)
		runtime.KeepAlive(mir)
		return errors.Join(errs...)
	}
	var bases [2]uint64
	for i, m := range [][]byte{own, mir} {
		if size == 0 {
			break
		}
		p, err := dev.RegisterHost(m)
		if err != nil {
			cleanup()
			return nil, "", nil, err
		}
		registered, bases[i] = append(registered, m), uint64(p)
	}
	var ends []network.End
	for i, e := range entries {
		if e.Send >= 0 {
			ends = append(ends, network.End{Edge: transport.Edge{From: me, To: e.Send, Ch: e.Ch}, Conn: send[i], Mem: l.EntryRegion(mir, i)})
		}
		if e.Recv >= 0 {
			ends = append(ends, network.End{Edge: transport.Edge{From: e.Recv, To: me, Ch: e.Ch}, Conn: recv[i], Mem: l.EntryRegion(own, i)})
		}
	}
	sizes := transport.Sizes{Simple: l.SimpleBytes, LL: l.LLBytes}
	var kind string
	if nt, kind, err = network.Start(ctx, ex, ends, sizes, fail, abort); err != nil {
		cleanup()
		return nil, "", nil, err
	}
	return l.NetConns(entries, bases[0], bases[1]), kind, cleanup, nil
}
