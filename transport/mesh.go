package transport

import (
	"context"
	"errors"
	"fmt"
	"slices"
	"sync"

	"github.com/ringo-ccl/ringo/ring"
)

// Edge names one connection: data from rank From to rank To on channel Ch.
type Edge struct{ From, To, Ch int }

func (e Edge) String() string { return fmt.Sprintf("%d→%d on channel %d", e.From, e.To, e.Ch) }

// Connector is one way of connecting the ranks of a communicator that live
// in separate processes — NCCL's ncclTransport, with its canConnect, setup
// and connect: shared memory (package shm), the network (package network).
// A Mesh tries its connectors in order and gives each edge to the first
// that can carry it.
type Connector interface {
	// Name is the connector's name in NCCL_DEBUG's channel lines (SHM,
	// NET/Socket …).
	Name() string
	// CanConnect reports whether this connector can carry e. Every rank
	// answers alike (from what the ranks told each other at init).
	CanConnect(e Edge) bool
	// Connect makes this rank's ends of edges, a round of connections
	// named round (unique in the communicator; what the connector names
	// after it, shared-memory segments, stays apart from other rounds').
	// Every rank taking part — every rank of the communicator, or two
	// ranks alone — calls it at the same time with the same edges (every
	// edge this connector was chosen for, this rank's or not) over ex, an
	// exchanger of the communicator or a Subset of it, so setup can trade
	// handles. It returns, for each edge, this rank's end of it, or nil
	// when this rank is neither end.
	Connect(ctx context.Context, ex Exchanger, round string, edges []Edge) ([]*Conn, error)
	// Close releases every connection the connector made.
	Close() error
}

// Mesh is one rank's connections to ranks of other processes, made on
// demand by its connectors and kept for the communicator's life: any two
// ranks, both ways, on any channel. Connect is collective, ConnectPair is
// two ranks' alone; Conn only hands out connections already made, so an
// executor can ask for them on the hot path without a round of the
// control plane.
//
// A rank knows which edges are made from the rounds it took part in. Two
// ranks know alike about the edges between them — the only rounds that
// make those are every rank's and theirs — but not about others': once a
// pair has connected alone, Connect (every rank's) must not be used again,
// so a communicator connects every rank at once first (its ring) and pair
// by pair after.
type Mesh struct {
	rank  int
	ex    Exchanger // the communicator's
	kinds []Connector
	round int            // every rank's rounds so far
	pairs map[[2]int]int // two ranks' rounds so far, by pair

	mu    sync.Mutex
	conns map[Edge]*Conn
	via   map[Edge]string // the connector carrying each edge — every rank's, not only this one's
}

var _ Transport = (*Mesh)(nil)

// NewMesh returns the mesh of the rank of ex over kinds, tried in order
// for each edge.
func NewMesh(ex Exchanger, kinds ...Connector) *Mesh {
	return &Mesh{rank: ex.Rank(), ex: ex, kinds: kinds, pairs: map[[2]int]int{}, conns: map[Edge]*Conn{}, via: map[Edge]string{}}
}

// Connect makes every edge of edges not made yet. Every rank of the
// communicator calls it at the same time with the same edges (the union of
// what every rank needs: a plan's, a schedule's), so the ranks agree, edge
// by edge, on which connector carries it and take part in that connector's
// setup together. An edge that no connector can carry is an error naming
// it, before any setup.
func (m *Mesh) Connect(ctx context.Context, edges []Edge) error {
	m.mu.Lock()
	defer m.mu.Unlock()
	m.round++
	return m.connect(ctx, m.ex, fmt.Sprintf("c%d", m.round), edges)
}

// ConnectPair makes every edge of edges, all between this rank and peer,
// not made yet, with peer alone: ex is an exchanger of the two (the
// bootstrap's Pair), and peer calls ConnectPair with the same edges at the
// same time. A rank connecting with several peers does so in the peers'
// order, so no two ranks wait for each other in a cycle.
func (m *Mesh) ConnectPair(ctx context.Context, ex Exchanger, peer int, edges []Edge) error {
	m.mu.Lock()
	defer m.mu.Unlock()
	n := m.ex.Size()
	if peer == m.rank || peer < 0 || peer >= n || ex.Size() != 2 {
		return fmt.Errorf("rank %d connecting with rank %d alone over an exchanger of %d ranks", m.rank, peer, ex.Size())
	}
	for _, e := range edges {
		if !(e.From == m.rank && e.To == peer) && !(e.From == peer && e.To == m.rank) {
			return fmt.Errorf("connection %v is not between ranks %d and %d", e, m.rank, peer)
		}
	}
	lo, hi := min(m.rank, peer), max(m.rank, peer)
	m.pairs[[2]int{lo, hi}]++
	name := fmt.Sprintf("p%d-%d-%d", lo, hi, m.pairs[[2]int{lo, hi}])
	return m.connect(ctx, Subset{Ex: ex, Ranks: []int{lo, hi}, N: n}, name, edges)
}

// connect makes a round named name of the edges not made yet, among the
// ranks of ex.
func (m *Mesh) connect(ctx context.Context, ex Exchanger, name string, edges []Edge) error {
	byKind := make([][]Edge, len(m.kinds))
	seen := map[Edge]bool{}
	for _, e := range edges {
		if _, ok := m.via[e]; ok || seen[e] || e.From == e.To {
			continue
		}
		seen[e] = true
		k := slices.IndexFunc(m.kinds, func(c Connector) bool { return c.CanConnect(e) })
		if k < 0 {
			return fmt.Errorf("no transport can carry the connection %v", e)
		}
		byKind[k] = append(byKind[k], e)
	}
	for k, es := range byKind {
		if len(es) == 0 {
			continue
		}
		conns, err := m.kinds[k].Connect(ctx, ex, fmt.Sprintf("%s.%d", name, k), es)
		if err != nil {
			return fmt.Errorf("%s: %w", m.kinds[k].Name(), err)
		}
		if len(conns) != len(es) {
			return fmt.Errorf("%s: %d connections for %d edges", m.kinds[k].Name(), len(conns), len(es))
		}
		for i, e := range es {
			m.via[e] = m.kinds[k].Name()
			switch {
			case conns[i] != nil:
				m.conns[e] = conns[i]
			case e.From == m.rank || e.To == m.rank:
				return fmt.Errorf("%s: no connection %v for rank %d", m.kinds[k].Name(), e, m.rank)
			}
		}
	}
	return nil
}

// Conn returns the connection of edge from→to on channel ch, made by an
// earlier Connect.
func (m *Mesh) Conn(_ context.Context, from, to, ch int) (*Conn, error) {
	m.mu.Lock()
	defer m.mu.Unlock()
	if c, ok := m.conns[Edge{from, to, ch}]; ok {
		return c, nil
	}
	return nil, fmt.Errorf("rank %d has no connection %v: it was never connected (a plan needing it must be connected by every rank first)", m.rank, Edge{from, to, ch})
}

// Via returns the name of the connector carrying edge e — any rank's —
// or "" when e is not connected.
func (m *Mesh) Via(e Edge) string {
	m.mu.Lock()
	defer m.mu.Unlock()
	return m.via[e]
}

// Close closes every connector.
func (m *Mesh) Close() error {
	m.mu.Lock()
	defer m.mu.Unlock()
	var errs []error
	for _, k := range m.kinds {
		errs = append(errs, k.Close())
	}
	m.conns = nil
	return errors.Join(errs...)
}

// RingEdges returns the connections nch channels of ring r need when run
// by variant v: on each channel, every rank to its successor in the
// channel's direction.
func RingEdges(r ring.Ring, v ring.Variant, nch int) []Edge {
	n := r.Size()
	if n < 2 {
		return nil
	}
	edges := make([]Edge, 0, n*nch)
	for c := range nch {
		for _, rank := range r.Order {
			_, next := ring.Neighbours(r, v, c, rank)
			edges = append(edges, Edge{rank, next, c})
		}
	}
	return edges
}

// PlanEdges returns the connections plans use, each once, in the order
// their steps first name them.
func PlanEdges(plans ...*ring.Plan) []Edge {
	var edges []Edge
	seen := map[Edge]bool{}
	add := func(e Edge) {
		if !seen[e] {
			seen[e] = true
			edges = append(edges, e)
		}
	}
	for _, p := range plans {
		me := p.Spec.Rank
		for c, ch := range p.Channels {
			for _, st := range ch.Steps {
				if st.Prim.Recvs() {
					add(Edge{int(st.RecvPeer), me, c})
				}
				if st.Prim.Sends() {
					add(Edge{me, int(st.SendPeer), c})
				}
			}
		}
	}
	return edges
}
