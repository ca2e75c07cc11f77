package transport

import (
	"context"
	"errors"
	"fmt"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/ringo-ccl/ringo/ring"
)

// fakeConnector carries the edges can accepts, recording every call and
// its round's name and exchanger.
type fakeConnector struct {
	name   string
	rank   int
	can    func(Edge) bool
	calls  [][]Edge
	rounds []string
	exs    []Exchanger
	fail   error
}

// rankOf is an exchanger that only knows its rank of n (the fake
// connectors exchange nothing).
type rankOf struct{ rank, n int }

func (r rankOf) Rank() int { return r.rank }
func (r rankOf) Size() int { return r.n }
func (r rankOf) AllGather(context.Context, []byte) ([][]byte, error) {
	return nil, errors.New("rankOf exchanges nothing")
}
func (r rankOf) Barrier(context.Context) error { return nil }

func (f *fakeConnector) Name() string           { return f.name }
func (f *fakeConnector) CanConnect(e Edge) bool { return f.can(e) }
func (f *fakeConnector) Close() error           { return nil }
func (f *fakeConnector) Connect(_ context.Context, ex Exchanger, round string, edges []Edge) ([]*Conn, error) {
	f.calls, f.rounds, f.exs = append(f.calls, edges), append(f.rounds, round), append(f.exs, ex)
	if f.fail != nil {
		return nil, f.fail
	}
	conns := make([]*Conn, len(edges))
	for i, e := range edges {
		if e.From == f.rank || e.To == f.rank {
			conns[i] = &Conn{}
		}
	}
	return conns, nil
}

// TestMeshChoosesInOrder: each edge goes to the first connector that can
// carry it; every connector sees the same edges on every rank (its end or
// not); edges already made are not made again.
func TestMeshChoosesInOrder(t *testing.T) {
	sameHalf := func(e Edge) bool { return e.From/2 == e.To/2 } // ranks 0,1 and 2,3 share memory
	edges := RingEdges(ring.Identity(4), ring.Bidirectional, 2)
	require.Len(t, edges, 8)
	var shmCalls, netCalls [][][]Edge
	for rank := range 4 {
		shm := &fakeConnector{name: "SHM", rank: rank, can: sameHalf}
		net := &fakeConnector{name: "NET", rank: rank, can: func(Edge) bool { return true }}
		m := NewMesh(rankOf{rank, 4}, shm, net)
		require.NoError(t, m.Connect(context.Background(), edges))
		require.NoError(t, m.Connect(context.Background(), edges)) // nothing new
		for _, e := range edges {
			want := "NET"
			if sameHalf(e) {
				want = "SHM"
			}
			assert.Equal(t, want, m.Via(e), "%v", e)
			c, err := m.Conn(context.Background(), e.From, e.To, e.Ch)
			if e.From == rank || e.To == rank {
				assert.NoError(t, err)
				assert.NotNil(t, c)
			} else {
				assert.Error(t, err, "rank %d handed out %v", rank, e)
			}
		}
		_, err := m.Conn(context.Background(), rank, (rank+2)%4, 5)
		assert.ErrorContains(t, err, "never connected")
		shmCalls, netCalls = append(shmCalls, shm.calls), append(netCalls, net.calls)
	}
	for rank := 1; rank < 4; rank++ {
		assert.Equal(t, shmCalls[0], shmCalls[rank])
		assert.Equal(t, netCalls[0], netCalls[rank])
	}
	assert.Len(t, shmCalls[0], 1)
	assert.Len(t, netCalls[0], 1)
}

// TestMeshErrors: an edge no connector carries is named before any setup;
// a connector's failure names the connector.
func TestMeshErrors(t *testing.T) {
	none := &fakeConnector{name: "SHM", can: func(Edge) bool { return false }}
	m := NewMesh(rankOf{0, 2}, none)
	err := m.Connect(context.Background(), []Edge{{0, 1, 0}})
	assert.ErrorContains(t, err, "no transport can carry the connection 0→1 on channel 0")
	assert.Empty(t, none.calls)

	broken := &fakeConnector{name: "NET", can: func(Edge) bool { return true }, fail: errors.New("wire down")}
	err = NewMesh(rankOf{0, 2}, broken).Connect(context.Background(), []Edge{{0, 1, 0}})
	assert.EqualError(t, err, "NET: wire down")
}

// TestMeshConnectPair: two ranks connect alone over their pair's exchanger,
// which the connector sees as the communicator's (ranks by their number in
// it); each pair round has a name of its own, apart from every rank's
// rounds; edges made are not made again, and edges of other ranks or a
// pair exchanger of more than two ranks are refused.
func TestMeshConnectPair(t *testing.T) {
	net := &fakeConnector{name: "NET", rank: 3, can: func(Edge) bool { return true }}
	m := NewMesh(rankOf{3, 4}, net)
	ctx := context.Background()
	require.NoError(t, m.Connect(ctx, RingEdges(ring.Identity(4), ring.RingVariant, 1)))
	pair := rankOf{1, 2} // rank 3 is the higher of ranks 1 and 3
	edges := []Edge{{1, 3, 0}, {3, 1, 0}, {3, 1, 1}}
	require.NoError(t, m.ConnectPair(ctx, pair, 1, edges))
	require.NoError(t, m.ConnectPair(ctx, pair, 1, edges), "nothing new")
	require.NoError(t, m.ConnectPair(ctx, pair, 1, append(edges, Edge{1, 3, 1})))
	require.Len(t, net.calls, 3)
	assert.Equal(t, []string{"c1.0", "p1-3-1.0", "p1-3-3.0"}, net.rounds)
	assert.Equal(t, edges, net.calls[1])
	assert.Equal(t, []Edge{{1, 3, 1}}, net.calls[2])
	assert.Equal(t, 3, net.exs[1].Rank(), "the pair's exchanger, seen as the communicator's")
	assert.Equal(t, 4, net.exs[1].Size())
	c, err := m.Conn(ctx, 3, 1, 1)
	require.NoError(t, err)
	assert.NotNil(t, c)
	assert.ErrorContains(t, m.ConnectPair(ctx, pair, 1, []Edge{{0, 1, 0}}), "not between ranks 3 and 1")
	assert.ErrorContains(t, m.ConnectPair(ctx, rankOf{0, 3}, 1, edges), "over an exchanger of 3 ranks")
	assert.ErrorContains(t, m.ConnectPair(ctx, pair, 3, nil), "rank 3 connecting with rank 3")
}

// TestPlanEdges: a ring plan's edges are its channel's neighbours, once each.
func TestPlanEdges(t *testing.T) {
	var plans []*ring.Plan
	for r := range 3 {
		p, err := ring.New(ring.Spec{Coll: ring.AllReduce, Ring: ring.Identity(3), Rank: r, Count: 300, EltSize: 4,
			Channels: 2, Proto: ring.Simple, BuffSize: 8 * 1024, Variant: ring.Bidirectional})
		require.NoError(t, err)
		plans = append(plans, p)
	}
	got := PlanEdges(plans...)
	want := RingEdges(ring.Identity(3), ring.Bidirectional, 2)
	assert.ElementsMatch(t, want, got, fmt.Sprint(got))
}
