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

// fakeConnector carries the edges can accepts, recording every call.
type fakeConnector struct {
	name  string
	rank  int
	can   func(Edge) bool
	calls [][]Edge
	fail  error
}

func (f *fakeConnector) Name() string           { return f.name }
func (f *fakeConnector) CanConnect(e Edge) bool { return f.can(e) }
func (f *fakeConnector) Close() error           { return nil }
func (f *fakeConnector) Connect(_ context.Context, edges []Edge) ([]*Conn, error) {
	f.calls = append(f.calls, edges)
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
		m := NewMesh(rank, shm, net)
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
	m := NewMesh(0, none)
	err := m.Connect(context.Background(), []Edge{{0, 1, 0}})
	assert.ErrorContains(t, err, "no transport can carry the connection 0→1 on channel 0")
	assert.Empty(t, none.calls)

	broken := &fakeConnector{name: "NET", can: func(Edge) bool { return true }, fail: errors.New("wire down")}
	err = NewMesh(0, broken).Connect(context.Background(), []Edge{{0, 1, 0}})
	assert.EqualError(t, err, "NET: wire down")
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
