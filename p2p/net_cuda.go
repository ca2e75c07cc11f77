//go:build cuda

package p2p

import (
	"context"
	"errors"
	"runtime"

	"github.com/ringo-ccl/ringo/internal/cuda"
	"github.com/ringo-ccl/ringo/internal/mem"
	"github.com/ringo-ccl/ringo/network"
	"github.com/ringo-ccl/ringo/ring"
	"github.com/ringo-ccl/ringo/transport"
)

// shareNet connects this rank's GPU to its neighbours through the net
// transport: two regions of host memory registered with CUDA — its own
// (the receive side, which the proxy from each channel's predecessor
// fills) and a mirror of the neighbours' (which the kernel fills and the
// proxy to each channel's successor forwards) — driven by proxies
// (network.Start; an RDMA wire registers the regions' channel parts: the
// FIFOs are staged in host memory, GPUDirect is not done). Each channel's
// neighbours are those l.Variant gives it on ring r; the proxies report
// failures to fail and stop at abort. It returns the regions' device
// addresses for Layout.NetConns.
func shareNet(ctx context.Context, ex transport.Exchanger, dev *cuda.Device, l Layout, r ring.Ring, fail func(error), abort *transport.Abort) (self, mirror uint64, kind string, cleanup func() error, err error) {
	own, mir := mem.Alloc(int(l.Bytes()), 4096), mem.Alloc(int(l.Bytes()), 4096)
	send, recv, err := l.NetViews(own, mir)
	if err != nil {
		return 0, 0, "", nil, err
	}
	var registered [][]byte
	var nt *network.Net
	cleanup = func() error {
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
		p, err := dev.RegisterHost(m)
		if err != nil {
			cleanup()
			return 0, 0, "", nil, err
		}
		registered, bases[i] = append(registered, m), uint64(p)
	}
	me := ex.Rank()
	var ends []network.End
	for c := range l.Channels {
		prev, next := ring.Neighbours(r, l.Variant, c, me)
		ends = append(ends,
			network.End{Edge: transport.Edge{From: me, To: next, Ch: c}, Conn: send[c], Mem: l.ChannelRegion(mir, c)},
			network.End{Edge: transport.Edge{From: prev, To: me, Ch: c}, Conn: recv[c], Mem: l.ChannelRegion(own, c)})
	}
	sizes := transport.Sizes{Simple: l.SimpleBytes, LL: l.LLBytes}
	if nt, kind, err = network.Start(ctx, ex, ends, sizes, fail, abort); err != nil {
		cleanup()
		return 0, 0, "", nil, err
	}
	return bases[0], bases[1], kind, cleanup, nil
}
