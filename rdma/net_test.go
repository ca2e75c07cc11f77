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
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
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
				return fakeNet(t, ctx, ex, fabric, r, wiretest.RingEdges(n, nch), sizes, fail)
			})
			wiretest.Ring(t, nets, nch, 300, sizes, fails)
		})
	}
}

// fakeNet makes rank r's ends of edges as RDMA wires over the fake fabric
// (rdma.Connect through ex) and starts their proxies.
func fakeNet(t *testing.T, ctx context.Context, ex transport.Exchanger, fabric *rdmatest.Fabric, r int, edges []transport.Edge, sizes transport.Sizes, fail func(error)) (*transport.Net, error) {
	se, re := wiretest.Split(r, edges)
	sm, rm := transport.NetMem(len(se), sizes), transport.NetMem(len(re), sizes)
	port := rdma.Port{Device: fmt.Sprintf("fake_%d", r), Port: 1}
	w, err := rdma.Connect(ctx, ex, fabric, port, se, re, sizes, sm, rm, nil)
	if err != nil {
		return nil, err
	}
	t.Cleanup(func() { w.Close() })
	sc, _ := transport.NetConns(sm, sizes)
	rc, _ := transport.NetConns(rm, sizes)
	var ends []transport.NetEnd
	for i, e := range se {
		ends = append(ends, transport.NetEnd{Edge: e, Conn: sc[i], Send: w.Sends[i]})
	}
	for i, e := range re {
		ends = append(ends, transport.NetEnd{Edge: e, Conn: rc[i], Recv: w.Recvs[i]})
	}
	return transport.NewNet(r, ends, fail, nil)
}

// TestNetOverFakeRDMAAnyEdges: bidirectional rings of two, three and four
// ranks — each rank sending to and receiving from both neighbours, two
// connections each way between ranks of a ring of two — carry wiretest's
// scripts all at once over the fake fabric.
func TestNetOverFakeRDMAAnyEdges(t *testing.T) {
	sizes := transport.Sizes{Simple: ring.NSteps * 32 << 10, LL: ring.NSteps * 512}
	for _, n := range []int{2, 3, 4} {
		t.Run(fmt.Sprint(n, "ranks"), func(t *testing.T) {
			edges := transport.RingEdges(ring.Identity(n), ring.Bidirectional, 4)
			fabric := rdmatest.NewFabric()
			nets, fails := wiretest.Connect(t, n, func(ctx context.Context, ex transport.Exchanger, r int, fail func(error)) (*transport.Net, error) {
				return fakeNet(t, ctx, ex, fabric, r, edges, sizes, fail)
			})
			ts := make([]transport.Transport, n)
			for r, x := range nets {
				ts[r] = x
			}
			wiretest.Edges(t, ts, edges, 100, sizes, fails)
		})
	}
}

// TestConnectMissingEnd: a peer whose blob offers no end of a connection
// this rank expects fails setup naming the connection and the peer.
func TestConnectMissingEnd(t *testing.T) {
	sizes := transport.Sizes{Simple: ring.NSteps * 4096, LL: ring.NSteps * 512}
	fabric := rdmatest.NewFabric()
	ex := badExchanger{blob: []byte{0, 0, 0, 0}} // rank 1 has no ends
	_, err := rdma.Connect(context.Background(), ex, fabric, rdma.Port{Device: "fake_0", Port: 1},
		[]transport.Edge{{From: 0, To: 1, Ch: 3}}, nil, sizes, transport.NetMem(1, sizes), nil, nil)
	require.Error(t, err)
	assert.Contains(t, err.Error(), "rank 1 offers no end of the connection 0→1 on channel 3")
}

// TestConnectChecksEdges: an edge that is not the rank's own, or regions
// that do not match the edges, are refused before any exchange.
func TestConnectChecksEdges(t *testing.T) {
	sizes := transport.Sizes{Simple: ring.NSteps * 4096, LL: ring.NSteps * 512}
	fabric := rdmatest.NewFabric()
	port := rdma.Port{Device: "fake_0", Port: 1}
	mem := transport.NetMem(1, sizes)
	for name, tc := range map[string]struct{ sends, recvs []transport.Edge }{
		"not mine": {sends: []transport.Edge{{From: 1, To: 0}}},
		"self":     {recvs: []transport.Edge{{From: 0, To: 0}}},
		"range":    {sends: []transport.Edge{{From: 0, To: 2}}},
	} {
		sm, rm := mem[:len(tc.sends)], mem[:len(tc.recvs)]
		_, err := rdma.Connect(context.Background(), badExchanger{}, fabric, port, tc.sends, tc.recvs, sizes, sm, rm, nil)
		assert.ErrorContains(t, err, "edge", name)
	}
	_, err := rdma.Connect(context.Background(), badExchanger{}, fabric, port, []transport.Edge{{From: 0, To: 1}}, nil, sizes, nil, nil, nil)
	assert.ErrorContains(t, err, "regions")
}

// TestConnectBadBlob: a peer whose blob does not parse fails setup with an
// error that says so, and nothing is left open.
func TestConnectBadBlob(t *testing.T) {
	sizes := transport.Sizes{Simple: ring.NSteps * 4096, LL: ring.NSteps * 512}
	fabric := rdmatest.NewFabric()
	ex := badExchanger{}
	_, err := rdma.Connect(context.Background(), ex, fabric, rdma.Port{Device: "fake_0", Port: 1},
		[]transport.Edge{{From: 0, To: 1}}, []transport.Edge{{From: 1, To: 0}}, sizes,
		transport.NetMem(1, sizes), transport.NetMem(1, sizes), nil)
	if err == nil || !strings.Contains(err.Error(), "blob") {
		t.Fatalf("got %v, want an error about the peer's blob", err)
	}
}

// badExchanger is rank 0 of 2, and answers every all-gather with blob
// from rank 1 (garbage when nil).
type badExchanger struct{ blob []byte }

func (badExchanger) Rank() int { return 0 }
func (badExchanger) Size() int { return 2 }

func (x badExchanger) AllGather(_ context.Context, blob []byte) ([][]byte, error) {
	if x.blob == nil {
		return [][]byte{blob, {1, 2, 3}}, nil
	}
	return [][]byte{blob, x.blob}, nil
}
func (badExchanger) Barrier(context.Context) error { return nil }
