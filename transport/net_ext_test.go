package transport_test

import (
	"context"
	"fmt"
	"testing"

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
			nets, fails := wiretest.Connect(t, n, func(ctx context.Context, ex transport.Exchanger, r int, fail func(error)) (*transport.Net, error) {
				prev, next := (r+n-1)%n, (r+1)%n
				sends, recvs, err := transport.ConnectSockets(ctx, ex, prev, next, nch, 3, true, true)
				if err != nil {
					return nil, err
				}
				sc, _ := transport.NetConns(transport.NetMem(nch, sizes), sizes)
				rc, _ := transport.NetConns(transport.NetMem(nch, sizes), sizes)
				return transport.NewNet(r, prev, next, sc, sends, rc, recvs, fail, nil)
			})
			wiretest.Ring(t, nets, nch, 400, sizes, fails)
		})
	}
}
