package rdma_test

import (
	"context"
	"fmt"
	"strings"
	"testing"
	"time"

	"github.com/ringo-ccl/ringo/rdma"
	"github.com/ringo-ccl/ringo/ring"
	"github.com/ringo-ccl/ringo/transport"
	"github.com/ringo-ccl/ringo/transport/wiretest"
)

// TestNetOverFakeRDMA: rings of two and three ranks whose net connections
// are RDMA wires over the fake fabric, set up as a communicator does
// (rdma.Connect through a real bootstrap) and driven by transport.Net's
// proxies, carry wiretest's scripts in every direction at once.
func TestNetOverFakeRDMA(t *testing.T) {
	sizes := transport.Sizes{Simple: ring.NSteps * 32 << 10, LL: ring.NSteps * 512}
	for _, n := range []int{2, 3} {
		t.Run(fmt.Sprint(n, "ranks"), func(t *testing.T) {
			const nch = 2
			fabric := rdma.NewFabric()
			id, err := transport.NewUniqueID()
			if err != nil {
				t.Fatal(err)
			}
			nets := make([]*transport.Net, n)
			wires := make([]*rdma.Wires, n)
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
					sm, rm := transport.NetMem(nch, sizes), transport.NetMem(nch, sizes)
					port := rdma.Port{Device: fmt.Sprintf("fake_%d", r), Port: 1}
					wires[r], err = rdma.Connect(ctx, bs, fabric, port, r, prev, next, sizes, sm, rm, nil)
					if err == nil {
						sc, _ := transport.NetConns(sm, sizes)
						rc, _ := transport.NetConns(rm, sizes)
						nets[r], err = transport.NewNet(r, prev, next, sc, wires[r].Sends, rc, wires[r].Recvs,
							func(err error) { fails <- err }, nil)
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
				for r := range n {
					nets[r].Close()
					wires[r].Close()
				}
			}()
			wiretest.Ring(t, nets, nch, 300, sizes, fails)
		})
	}
}

// TestConnectBadBlob: a peer whose blob does not parse fails setup with an
// error that says so, and nothing is left open.
func TestConnectBadBlob(t *testing.T) {
	sizes := transport.Sizes{Simple: ring.NSteps * 4096, LL: ring.NSteps * 512}
	fabric := rdma.NewFabric()
	ex := badExchanger{}
	_, err := rdma.Connect(context.Background(), ex, fabric, rdma.Port{Device: "fake_0", Port: 1}, 0, 1, 1, sizes,
		transport.NetMem(1, sizes), transport.NetMem(1, sizes), nil)
	if err == nil || !strings.Contains(err.Error(), "blob") {
		t.Fatalf("got %v, want an error about the peer's blob", err)
	}
}

// badExchanger answers every all-gather with garbage from rank 1.
type badExchanger struct{}

func (badExchanger) AllGather(_ context.Context, blob []byte) ([][]byte, error) {
	return [][]byte{blob, {1, 2, 3}}, nil
}
func (badExchanger) Barrier(context.Context) error { return nil }
