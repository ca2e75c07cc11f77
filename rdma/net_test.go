package rdma_test

import (
	"context"
	"fmt"
	"strings"
	"testing"

	"github.com/ringo-ccl/ringo/rdma"
	"github.com/ringo-ccl/ringo/rdma/rdmatest"
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
			fabric := rdmatest.NewFabric()
			nets, fails := wiretest.Connect(t, n, func(ctx context.Context, ex transport.Exchanger, r int, fail func(error)) (*transport.Net, error) {
				prev, next := (r+n-1)%n, (r+1)%n
				sm, rm := transport.NetMem(nch, sizes), transport.NetMem(nch, sizes)
				port := rdma.Port{Device: fmt.Sprintf("fake_%d", r), Port: 1}
				w, err := rdma.Connect(ctx, ex, fabric, port, prev, next, sizes, sm, rm, nil)
				if err != nil {
					return nil, err
				}
				t.Cleanup(func() { w.Close() })
				sc, _ := transport.NetConns(sm, sizes)
				rc, _ := transport.NetConns(rm, sizes)
				return transport.NewNet(r, prev, next, sc, w.Sends, rc, w.Recvs, fail, nil)
			})
			wiretest.Ring(t, nets, nch, 300, sizes, fails)
		})
	}
}

// TestConnectBadBlob: a peer whose blob does not parse fails setup with an
// error that says so, and nothing is left open.
func TestConnectBadBlob(t *testing.T) {
	sizes := transport.Sizes{Simple: ring.NSteps * 4096, LL: ring.NSteps * 512}
	fabric := rdmatest.NewFabric()
	ex := badExchanger{}
	_, err := rdma.Connect(context.Background(), ex, fabric, rdma.Port{Device: "fake_0", Port: 1}, 1, 1, sizes,
		transport.NetMem(1, sizes), transport.NetMem(1, sizes), nil)
	if err == nil || !strings.Contains(err.Error(), "blob") {
		t.Fatalf("got %v, want an error about the peer's blob", err)
	}
}

// badExchanger is rank 0 of 2, and answers every all-gather with garbage
// from rank 1.
type badExchanger struct{}

func (badExchanger) Rank() int { return 0 }
func (badExchanger) Size() int { return 2 }

func (badExchanger) AllGather(_ context.Context, blob []byte) ([][]byte, error) {
	return [][]byte{blob, {1, 2, 3}}, nil
}
func (badExchanger) Barrier(context.Context) error { return nil }
