package p2p_test

import (
	"context"
	"fmt"
	"testing"

	"github.com/ringo-ccl/ringo/internal/mem"
	"github.com/ringo-ccl/ringo/p2p"
	"github.com/ringo-ccl/ringo/rdma"
	"github.com/ringo-ccl/ringo/rdma/rdmatest"
	"github.com/ringo-ccl/ringo/ring"
	"github.com/ringo-ccl/ringo/transport"
	"github.com/ringo-ccl/ringo/transport/wiretest"
)

var netLayout = p2p.Layout{Channels: 2, SimpleBytes: ring.NSteps * 64 << 10, LLBytes: ring.NSteps * 1024}

// TestNetConnsMatchViews: the addresses a GPU's kernel gets for a net
// connection (NetConns) are the words and slots the proxies watch
// (NetViews), when the regions' host and device addresses coincide.
func TestNetConnsMatchViews(t *testing.T) {
	own, mirror := mem.Alloc(int(netLayout.Bytes()), 4096), mem.Alloc(int(netLayout.Bytes()), 4096)
	send, recv, err := netLayout.NetViews(own, mirror)
	if err != nil {
		t.Fatal(err)
	}
	conns := netLayout.NetConns(uint64(mem.Addr(own)), uint64(mem.Addr(mirror)))
	addr := func(b []byte) uint64 { return uint64(mem.Addr(b)) }
	for c, k := range conns {
		s, r := send[c], recv[c]
		checks := []struct {
			what      string
			got, want uint64
		}{
			{"SendTail", k.SendTail, uint64(addrOf(s.Tail()))},
			{"SendHead", k.SendHead, uint64(addrOf(s.Head()))},
			{"SendBuf", k.SendBuf, addr(s.SimpleSlots(0, 1))},
			{"SendLL", k.SendLL, uint64(addrOf(&s.LLSlot(0)[0]))},
			{"SendPosts", k.SendPosts, k.SendTail + 8},
			{"RecvTail", k.RecvTail, uint64(addrOf(r.Tail()))},
			{"RecvHead", k.RecvHead, uint64(addrOf(r.Head()))},
			{"RecvBuf", k.RecvBuf, addr(r.SimpleSlots(0, 1))},
			{"RecvLL", k.RecvLL, uint64(addrOf(&r.LLSlot(0)[0]))},
		}
		for _, x := range checks {
			if x.got != x.want {
				t.Errorf("channel %d: the kernel's %s is %#x, the proxy watches %#x", c, x.what, x.got, x.want)
			}
		}
	}
	if _, _, err := netLayout.NetViews(own[:100], mirror); err == nil {
		t.Error("a short region was accepted")
	}
}

// TestNetViewsCarryPosts: two ranks' views, joined by a net transport's
// proxies, carry wiretest's scripts both ways (the test plays both GPUs
// through the views' own methods) — over sockets, and over RDMA wires (the
// fake fabric) registered on the regions' channel parts, as GPU ranks use
// them.
func TestNetViewsCarryPosts(t *testing.T) {
	sizes := transport.Sizes{Simple: netLayout.SimpleBytes, LL: netLayout.LLBytes}
	t.Run("sockets", func(t *testing.T) {
		viewsRing(t, func(ctx context.Context, ex transport.Exchanger, r int, _, _ []byte) ([]transport.SendWire, []transport.RecvWire, error) {
			se, re := viewEdges(r)
			return transport.ConnectSockets(ctx, ex, se, re, 2)
		})
	})
	t.Run("rdma", func(t *testing.T) {
		fabric := rdmatest.NewFabric()
		viewsRing(t, func(ctx context.Context, ex transport.Exchanger, r int, own, mirror []byte) ([]transport.SendWire, []transport.RecvWire, error) {
			var sm, rm [][]byte
			for c := range netLayout.Channels {
				sm, rm = append(sm, netLayout.ChannelRegion(mirror, c)), append(rm, netLayout.ChannelRegion(own, c))
			}
			se, re := viewEdges(r)
			w, err := rdma.Connect(ctx, ex, fabric, rdma.Port{Device: fmt.Sprint("fake_", r), Port: 1}, se, re, sizes, sm, rm, nil)
			if err != nil {
				return nil, nil, err
			}
			t.Cleanup(func() { w.Close() })
			return w.Sends, w.Recvs, nil
		})
	})
}

// viewsRing connects two ranks' net views with the wires wires makes and
// runs wiretest's scripts over them.
func viewsRing(t *testing.T, wires func(ctx context.Context, ex transport.Exchanger, r int, own, mirror []byte) ([]transport.SendWire, []transport.RecvWire, error)) {
	sizes := transport.Sizes{Simple: netLayout.SimpleBytes, LL: netLayout.LLBytes}
	nets, fails := wiretest.Connect(t, 2, func(ctx context.Context, ex transport.Exchanger, r int, fail func(error)) (*transport.Net, error) {
		own, mirror := mem.Alloc(int(netLayout.Bytes()), 4096), mem.Alloc(int(netLayout.Bytes()), 4096)
		send, recv, err := netLayout.NetViews(own, mirror)
		if err != nil {
			return nil, err
		}
		sw, rw, err := wires(ctx, ex, r, own, mirror)
		if err != nil {
			return nil, err
		}
		se, re := viewEdges(r)
		var ends []transport.NetEnd
		for c := range netLayout.Channels {
			ends = append(ends, transport.NetEnd{Edge: se[c], Conn: send[c], Send: sw[c]}, transport.NetEnd{Edge: re[c], Conn: recv[c], Recv: rw[c]})
		}
		return transport.NewNet(r, ends, fail, nil)
	})
	wiretest.Ring(t, nets, netLayout.Channels, 200, sizes, fails)
}

// viewEdges returns rank r's (of two) edges on every channel of
// netLayout: to the other rank, and from it.
func viewEdges(r int) (sends, recvs []transport.Edge) {
	for c := range netLayout.Channels {
		sends = append(sends, transport.Edge{From: r, To: 1 - r, Ch: c})
		recvs = append(recvs, transport.Edge{From: 1 - r, To: r, Ch: c})
	}
	return sends, recvs
}

func addrOf[T any](p *T) uintptr { return mem.AddrOf(p) }

// TestConnsLL128: with an LL128 FIFO the layout places it between the LL
// and Simple FIFOs of every channel, wires it from the receiver's region
// (recv) and the successor's (send), and keeps every region's channels
// page-aligned; without one, the kernel gets no LL128 FIFO.
func TestConnsLL128(t *testing.T) {
	l := p2p.Layout{Channels: 3, SimpleBytes: ring.NSteps * 4096, LLBytes: ring.NSteps * 1024, LL128Bytes: ring.NSteps * 2048}
	const self, prev, next = 1 << 32, 2 << 32, 3 << 32
	stride := uint64(l.Stride())
	if stride%4096 != 0 || stride < 384+uint64(l.LLBytes+l.LL128Bytes+l.SimpleBytes) {
		t.Fatalf("stride %d", stride)
	}
	for c, k := range l.Conns(self, prev, next) {
		base := uint64(c) * stride
		ll128 := base + 384 + uint64(l.LLBytes)
		simple := ll128 + uint64(l.LL128Bytes)
		if k.RecvLL128 != self+ll128 || k.SendLL128 != next+ll128 || k.RecvBuf != self+simple || k.SendBuf != next+simple {
			t.Errorf("channel %d: LL128 %#x→%#x, Simple %#x→%#x", c, k.RecvLL128, k.SendLL128, k.RecvBuf, k.SendBuf)
		}
		if k.RecvLL != self+base+384 || k.RecvLL+uint64(l.LLBytes) != k.RecvLL128 {
			t.Errorf("channel %d: LL FIFO at %#x overlaps LL128 at %#x", c, k.RecvLL, k.RecvLL128)
		}
	}
	l.LL128Bytes = 0
	for c, k := range l.Conns(self, prev, next) {
		if k.RecvLL128 != 0 || k.SendLL128 != 0 {
			t.Errorf("channel %d: LL128 FIFOs %#x, %#x without LL128", c, k.RecvLL128, k.SendLL128)
		}
	}
}

// TestConnsBidirectional: with the bidirectional variant, odd channels
// receive from the successor's side and send into the predecessor's region.
func TestConnsBidirectional(t *testing.T) {
	l := p2p.Layout{Channels: 4, SimpleBytes: ring.NSteps * 4096, LLBytes: ring.NSteps * 1024, Variant: ring.Bidirectional}
	const self, prev, next = 1 << 32, 2 << 32, 3 << 32
	stride := uint64(l.Stride())
	fwd := p2p.Layout{Channels: 4, SimpleBytes: l.SimpleBytes, LLBytes: l.LLBytes}.Conns(self, prev, next)
	rev := p2p.Layout{Channels: 4, SimpleBytes: l.SimpleBytes, LLBytes: l.LLBytes}.Conns(self, next, prev)
	for c, k := range l.Conns(self, prev, next) {
		want := fwd[c]
		if c%2 == 1 {
			want = rev[c]
		}
		if k != want {
			t.Errorf("channel %d: %+v, want %+v", c, k, want)
		}
		if c%2 == 1 && (k.SendBuf-prev)/stride != uint64(c) {
			t.Errorf("channel %d sends to %#x, not the predecessor's channel %d", c, k.SendBuf, c)
		}
	}
}
