package network

import (
	"context"
	"errors"
	"fmt"
	"sync"
	"testing"
	"time"

	"github.com/ringo-ccl/ringo/bootstrap"
	"github.com/ringo-ccl/ringo/internal/errs"
	"github.com/ringo-ccl/ringo/rdma"
	"github.com/ringo-ccl/ringo/rdma/rdmatest"
	"github.com/ringo-ccl/ringo/ring"
	"github.com/ringo-ccl/ringo/transport"
	"github.com/ringo-ccl/ringo/transport/wiretest"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

var sizes = transport.Sizes{Simple: ring.NSteps * 32 << 10, LL: ring.NSteps * 512}

// ranks runs do for each of n ranks of a fresh communicator at once, each
// with its own bootstrap (closed when the test ends), and fails the test
// unless every rank succeeds.
func ranks(t *testing.T, n int, do func(ctx context.Context, ex transport.Exchanger, r int) error) {
	t.Helper()
	id, err := bootstrap.NewUniqueID()
	require.NoError(t, err)
	errc := make([]error, n)
	var wg sync.WaitGroup
	for r := range n {
		wg.Go(func() {
			ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
			defer cancel()
			bs, err := bootstrap.Join(ctx, id, n, r)
			if err != nil {
				errc[r] = err
				return
			}
			t.Cleanup(func() { bs.Close() })
			errc[r] = do(ctx, bs, r)
		})
	}
	wg.Wait()
	for r, err := range errc {
		require.NoError(t, err, "rank %d", r)
	}
}

// fakeRDMA makes the fake fabric the RDMA hardware, each rank using port 1
// of its own device, until the test ends.
func fakeRDMA(t *testing.T) {
	fabric := rdmatest.NewFabric()
	hw, sel := hardware, selectPorts
	hardware = func() (rdma.Provider, error) { return fabric, nil }
	selectPorts = func() ([]rdma.Port, error) {
		return []rdma.Port{{Device: "fake_0", Port: 1}, {Device: "fake_1", Port: 1}, {Device: "fake_2", Port: 1}}, nil
	}
	t.Cleanup(func() { hardware, selectPorts = hw, sel })
}

// noRDMA makes this machine's RDMA hardware absent until the test ends.
func noRDMA(t *testing.T) {
	hw := hardware
	hardware = func() (rdma.Provider, error) { return nil, fmt.Errorf("%w: no RDMA here", errs.ErrNotSupported) }
	t.Cleanup(func() { hardware = hw })
}

// wires are the wires the tests run over: sockets (no RDMA here) and the
// fake RDMA fabric, and the start of each one's name.
var wires = []struct {
	wire, kind string
	setup      func(*testing.T)
}{
	{"sockets", "Socket", noRDMA},
	{"rdma", "IB/fake_", fakeRDMA},
}

// TestStartAnyEdges: three ranks start their ends of a bidirectional ring
// (each sends to and receives from both neighbours on every channel) with
// Start, over sockets and over the fake RDMA fabric, and every connection
// carries wiretest's scripts at once; the wire is named as NCCL_DEBUG
// shows it.
func TestStartAnyEdges(t *testing.T) {
	for _, tc := range wires {
		t.Run(tc.wire, func(t *testing.T) {
			tc.setup(t)
			const n = 3
			edges := transport.RingEdges(ring.Identity(n), ring.Bidirectional, 4)
			nets := make([]transport.Transport, n)
			fails := make(chan error, 64)
			ranks(t, n, func(ctx context.Context, ex transport.Exchanger, r int) error {
				ends, err := Ends(r, edges, sizes)
				if err != nil {
					return err
				}
				assert.Len(t, ends, 4*2)
				nt, kind, err := Start(ctx, ex, ends, sizes, func(err error) { fails <- err }, nil)
				if err != nil {
					return err
				}
				t.Cleanup(func() { nt.Close() })
				assert.Contains(t, kind, tc.kind)
				nets[r] = nt
				return nil
			})
			wiretest.Edges(t, nets, edges, 100, sizes, fails)
		})
	}
}

// TestStartPair: of three ranks, 0 and 2 start their connections to each
// other alone — over an exchanger of the two (the bootstrap's Pair)
// presented as the communicator's (transport.Subset) — while rank 1 takes
// no part; the connections carry wiretest's scripts, over sockets and the
// fake RDMA fabric.
func TestStartPair(t *testing.T) {
	for _, tc := range wires {
		t.Run(tc.wire, func(t *testing.T) {
			tc.setup(t)
			const n = 3
			edges := []transport.Edge{{From: 0, To: 2, Ch: 0}, {From: 2, To: 0, Ch: 0}, {From: 0, To: 2, Ch: 1}}
			nets := make([]transport.Transport, n)
			fails := make(chan error, 64)
			ranks(t, n, func(ctx context.Context, ex transport.Exchanger, r int) error {
				if r == 1 {
					return nil
				}
				pair := transport.Subset{Ex: ex.(*bootstrap.Bootstrap).Pair(2 - r), Ranks: []int{0, 2}, N: n}
				require.Equal(t, r, pair.Rank())
				ends, err := Ends(r, edges, sizes)
				if err != nil {
					return err
				}
				nt, _, err := Start(ctx, pair, ends, sizes, func(err error) { fails <- err }, nil)
				if err != nil {
					return err
				}
				t.Cleanup(func() { nt.Close() })
				nets[r] = nt
				return nil
			})
			wiretest.Edges(t, nets, edges, 100, sizes, fails)
		})
	}
}

// TestConnectorGrows: a mesh over the network connector, connected twice —
// a ring forwards, then bidirectional (the first's edges kept, the new
// ones made) — carries scripts on every edge; Close stops every
// connection, those of both calls.
func TestConnectorGrows(t *testing.T) {
	for _, tc := range wires {
		t.Run(tc.wire, func(t *testing.T) {
			tc.setup(t)
			const n = 3
			r3 := ring.Identity(n)
			first := transport.RingEdges(r3, ring.RingVariant, 2)
			both := transport.RingEdges(r3, ring.Bidirectional, 2)
			meshes := make([]*transport.Mesh, n)
			fails := make(chan error, 64)
			ranks(t, n, func(ctx context.Context, ex transport.Exchanger, r int) error {
				c, err := NewConnector(ctx, ex, sizes, func(err error) { fails <- err }, nil)
				if err != nil {
					return err
				}
				assert.Contains(t, c.Name(), "NET/"+tc.kind)
				assert.True(t, c.CanConnect(transport.Edge{From: 0, To: 2}))
				m := transport.NewMesh(ex, c)
				meshes[r] = m
				if err := m.Connect(ctx, first); err != nil {
					return err
				}
				return m.Connect(ctx, both)
			})
			nets := make([]transport.Transport, n)
			for r, m := range meshes {
				nets[r] = m
			}
			wiretest.Edges(t, nets, both, 100, sizes, fails)
			for r, m := range meshes {
				assert.NoError(t, m.Close(), "rank %d", r)
			}
			select {
			case err := <-fails:
				assert.NoError(t, err)
			default:
			}
		})
	}
}

// TestConnectorReturnsOwnEnds: Connect returns, edge by edge, this rank's
// end or nil for an edge that is not its own.
func TestConnectorReturnsOwnEnds(t *testing.T) {
	noRDMA(t)
	edges := []transport.Edge{{From: 0, To: 1}, {From: 1, To: 2}, {From: 2, To: 0}, {From: 1, To: 0}}
	ranks(t, 3, func(ctx context.Context, ex transport.Exchanger, r int) error {
		c, err := NewConnector(ctx, ex, sizes, func(error) {}, nil)
		if err != nil {
			return err
		}
		defer c.Close()
		conns, err := c.Connect(ctx, ex, "c1", edges)
		if err != nil {
			return err
		}
		if !assert.Len(t, conns, len(edges)) {
			return nil
		}
		for i, e := range edges {
			assert.Equal(t, e.From == r || e.To == r, conns[i] != nil, "rank %d, %v", r, e)
		}
		return nil
	})
}

// TestStartRefusesForeignEnds: an end that is neither from nor to the
// rank, or without its Conn, is an error naming it, before any exchange.
func TestStartRefusesForeignEnds(t *testing.T) {
	ends, err := Ends(1, []transport.Edge{{From: 1, To: 2, Ch: 5}}, sizes)
	require.NoError(t, err)
	for name, es := range map[string][]End{
		"foreign": ends,
		"no conn": {{Edge: transport.Edge{From: 0, To: 1, Ch: 5}}},
	} {
		_, err := wire{}.start(context.Background(), lonely{}, es, sizes, func(error) {}, nil)
		assert.ErrorContains(t, err, "on channel 5", name)
	}
}

// lonely is rank 0 of 3 and fails every exchange.
type lonely struct{}

func (lonely) Rank() int { return 0 }
func (lonely) Size() int { return 3 }
func (lonely) AllGather(context.Context, []byte) ([][]byte, error) {
	return nil, errors.New("no exchange expected")
}
func (lonely) Barrier(context.Context) error { return errors.New("no exchange expected") }

// TestWireChoice: NCCL_NET=Socket takes sockets even where RDMA is
// usable; NCCL_NET=IB where no rank has RDMA is ErrNotSupported naming a
// rank; a name no transport has is ErrInvalidArgument naming the variable.
func TestWireChoice(t *testing.T) {
	t.Run("socket", func(t *testing.T) {
		fakeRDMA(t)
		t.Setenv("NCCL_NET", "Socket")
		ranks(t, 2, func(ctx context.Context, ex transport.Exchanger, r int) error {
			w, err := choose(ctx, ex)
			assert.False(t, w.ib)
			return err
		})
	})
	t.Run("rdma", func(t *testing.T) {
		fakeRDMA(t)
		ranks(t, 2, func(ctx context.Context, ex transport.Exchanger, r int) error {
			w, err := choose(ctx, ex)
			assert.True(t, w.ib)
			assert.Equal(t, fmt.Sprintf("IB/fake_%d:1", r), w.name())
			return err
		})
	})
	t.Run("ib without rdma", func(t *testing.T) {
		noRDMA(t)
		t.Setenv("NCCL_NET", "IB")
		ranks(t, 2, func(ctx context.Context, ex transport.Exchanger, r int) error {
			_, err := choose(ctx, ex)
			assert.ErrorIs(t, err, errs.ErrNotSupported)
			assert.ErrorContains(t, err, "has no RDMA")
			return nil
		})
	})
	t.Run("unknown", func(t *testing.T) {
		t.Setenv("NCCL_NET", "carrier-pigeon")
		_, err := Wire()
		assert.ErrorIs(t, err, errs.ErrInvalidArgument)
		assert.ErrorContains(t, err, "NCCL_NET")
	})
}
