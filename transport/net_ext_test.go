package transport_test

import (
	"context"
	"fmt"
	"testing"

	"github.com/ringo-ccl/ringo/ring"
	"github.com/ringo-ccl/ringo/transport"
	"github.com/ringo-ccl/ringo/transport/wiretest"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
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
			nets, fails := wiretest.Connect(t, n, socketNet(wiretest.RingEdges(n, nch), 3, sizes))
			wiretest.Ring(t, nets, nch, 400, sizes, fails)
		})
	}
}

// socketNet returns a wiretest.Connect builder making each rank's ends of
// edges over sockets, nsock per connection.
func socketNet(edges []transport.Edge, nsock int, sizes transport.Sizes) func(context.Context, transport.Exchanger, int, func(error)) (*transport.Net, error) {
	return func(ctx context.Context, ex transport.Exchanger, r int, fail func(error)) (*transport.Net, error) {
		se, re := wiretest.Split(r, edges)
		sends, recvs, err := transport.ConnectSockets(ctx, ex, se, re, nsock)
		if err != nil {
			return nil, err
		}
		ends, err := wiretest.Ends(se, re, sends, recvs, sizes)
		if err != nil {
			return nil, err
		}
		return transport.NewNet(r, ends, fail, nil)
	}
}

// TestSocketsAnyEdges: several connections per channel, and two between
// the same ranks (one each way), carry wiretest's scripts all at once over
// sockets: a bidirectional ring of two, three and four ranks (each rank
// sends to both neighbours and receives from both on every channel pair)
// and a full mesh of three ranks on one channel.
func TestSocketsAnyEdges(t *testing.T) {
	sizes := transport.Sizes{Simple: ring.NSteps * 96 << 10, LL: ring.NSteps * 512}
	full := func(n, nch int) []transport.Edge {
		var es []transport.Edge
		for ch := range nch {
			for a := range n {
				for b := range n {
					if a != b {
						es = append(es, transport.Edge{From: a, To: b, Ch: ch})
					}
				}
			}
		}
		return es
	}
	bidi := func(n int) []transport.Edge {
		return transport.RingEdges(ring.Identity(n), ring.Bidirectional, 4)
	}
	for _, tc := range []struct {
		name  string
		n     int
		edges []transport.Edge
	}{
		{"bidirectional 2", 2, bidi(2)},
		{"bidirectional 3", 3, bidi(3)},
		{"bidirectional 4", 4, bidi(4)},
		{"mesh 3", 3, full(3, 1)},
	} {
		t.Run(tc.name, func(t *testing.T) {
			nets, fails := wiretest.Connect(t, tc.n, socketNet(tc.edges, 2, sizes))
			ts := make([]transport.Transport, len(nets))
			for r, x := range nets {
				ts[r] = x
			}
			wiretest.Edges(t, ts, tc.edges, 100, sizes, fails)
		})
	}
}

// TestNewNetChecksEnds: an end that is not the rank's, lacks its Conn or
// the wire of its direction, or comes twice is refused, naming the edge.
func TestNewNetChecksEnds(t *testing.T) {
	sizes := transport.Sizes{Simple: ring.NSteps * 4096, LL: ring.NSteps * 512}
	c, err := transport.NetConns(transport.NetMem(1, sizes), sizes)
	require.NoError(t, err)
	var sw transport.SendWire = nopWire{}
	var rw transport.RecvWire = nopWire{}
	e := transport.Edge{From: 0, To: 1, Ch: 2}
	for name, ends := range map[string][]transport.NetEnd{
		"not mine":   {{Edge: transport.Edge{From: 1, To: 2, Ch: 2}, Conn: c[0], Send: sw}},
		"no conn":    {{Edge: e, Send: sw}},
		"wrong wire": {{Edge: e, Conn: c[0], Recv: rw}},
		"both wires": {{Edge: e, Conn: c[0], Send: sw, Recv: rw}},
		"twice":      {{Edge: e, Conn: c[0], Send: sw}, {Edge: e, Conn: c[0], Send: sw}},
	} {
		_, err := transport.NewNet(0, ends, func(error) {}, nil)
		if assert.Error(t, err, name) {
			assert.Contains(t, err.Error(), "on channel 2", name)
		}
	}
}

// nopWire is a wire that is never used.
type nopWire struct{}

func (nopWire) Send(transport.Post, []byte) error { return nil }
func (nopWire) Credit() (uint64, error)           { return 0, nil }
func (nopWire) Recv(func(transport.Post) ([]byte, error)) (transport.Post, error) {
	return transport.Post{}, nil
}
func (nopWire) SendCredit(uint64) error { return nil }
func (nopWire) Close() error            { return nil }
