package transport_test

import (
	"context"
	"fmt"
	"testing"
	"time"

	"github.com/ringo-ccl/ringo/ring"
	"github.com/ringo-ccl/ringo/transport"
	"github.com/ringo-ccl/ringo/transport/wiretest"
)

// TestSocketsCarryEveryPost runs wiretest's scripts around rings of two
// and three ranks joined by the socket transport, every connection in both
// directions at once, each on three sockets (so two-slot posts of 192 KiB
// are striped).
func TestSocketsCarryEveryPost(t *testing.T) {
	sizes := transport.Sizes{Simple: ring.NSteps * 96 << 10, LL: ring.NSteps * 512}
	for _, n := range []int{2, 3} {
		t.Run(fmt.Sprint(n, "ranks"), func(t *testing.T) {
			const nch = 2
			id, err := transport.NewUniqueID()
			if err != nil {
				t.Fatal(err)
			}
			nets := make([]*transport.Net, n)
			fails := make(chan error, n*nch)
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
					prev, next := (r+n-1)%n, (r+1)%n
					sends, recvs, err := transport.ConnectSockets(ctx, bs, r, prev, next, nch, 3, true, true)
					if err == nil {
						sc, _ := transport.NetConns(transport.NetMem(nch, sizes), sizes)
						rc, _ := transport.NetConns(transport.NetMem(nch, sizes), sizes)
						nets[r], err = transport.NewNet(r, prev, next, sc, sends, rc, recvs, func(err error) { fails <- err }, nil)
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
			wiretest.Ring(t, nets, nch, 400, sizes, fails)
		})
	}
}
