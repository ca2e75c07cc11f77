package p2p_test

import (
	"context"
	"testing"
	"time"

	"github.com/ringo-ccl/ringo/internal/mem"
	"github.com/ringo-ccl/ringo/p2p"
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

// TestNetViewsCarryPosts: two ranks' views, joined by the socket transport
// and its proxies, carry wiretest's scripts both ways (the test plays both
// GPUs through the views' own methods).
func TestNetViewsCarryPosts(t *testing.T) {
	sizes := transport.Sizes{Simple: netLayout.SimpleBytes, LL: netLayout.LLBytes}
	id, err := transport.NewUniqueID()
	if err != nil {
		t.Fatal(err)
	}
	const n = 2
	nets := make([]*transport.Net, n)
	fails := make(chan error, 8)
	errc := make(chan error, n)
	for r := range n {
		go func() {
			ctx, cancel := context.WithTimeout(context.Background(), 20*time.Second)
			defer cancel()
			bs, err := transport.Join(ctx, id, n, r)
			if err != nil {
				errc <- err
				return
			}
			t.Cleanup(func() { bs.Close() })
			own, mirror := mem.Alloc(int(netLayout.Bytes()), 4096), mem.Alloc(int(netLayout.Bytes()), 4096)
			send, recv, err := netLayout.NetViews(own, mirror)
			if err == nil {
				var sw []transport.SendWire
				var rw []transport.RecvWire
				sw, rw, err = transport.ConnectSockets(ctx, bs, r, 1-r, 1-r, netLayout.Channels, 2, true, true)
				if err == nil {
					nets[r], err = transport.NewNet(r, 1-r, 1-r, send, sw, recv, rw, func(err error) { fails <- err }, nil)
				}
			}
			errc <- err
		}()
	}
	for range n {
		if err := <-errc; err != nil {
			t.Fatal(err)
		}
	}
	defer func() {
		for _, x := range nets {
			x.Close()
		}
	}()
	wiretest.Ring(t, nets, netLayout.Channels, 200, sizes, fails)
}

func addrOf[T any](p *T) uintptr { return mem.AddrOf(p) }
