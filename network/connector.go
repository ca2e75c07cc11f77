package network

import (
	"context"
	"errors"
	"sync"

	"github.com/ringo-ccl/ringo/transport"
)

// Connector is the net transport as a transport.Connector, for host
// ranks: it can carry any edge, making each connection in memory of its
// own. Its wire is chosen once, by NewConnector; each Connect starts the
// proxies of the edges it is given, and Close stops them all. Its methods
// are safe for concurrent use, but Connect is collective.
type Connector struct {
	sizes transport.Sizes
	fail  func(error)
	abort *transport.Abort
	w     wire

	mu   sync.Mutex // guards nets
	nets []*Net     // one per Connect
}

var _ transport.Connector = (*Connector)(nil)

// NewConnector chooses the wire of the communicator's net connections (as
// Start does). Every rank calls it at the same time. Its connections will
// have sizes s, report their failures to fail and end their waits once
// abort (may be nil) is set.
func NewConnector(ctx context.Context, ex transport.Exchanger, s transport.Sizes, fail func(error), abort *transport.Abort) (*Connector, error) {
	w, err := choose(ctx, ex)
	if err != nil {
		return nil, err
	}
	return &Connector{sizes: s, fail: fail, abort: abort, w: w}, nil
}

// Name is "NET/Socket" or "NET/IB/device:port".
func (c *Connector) Name() string { return "NET/" + c.w.name() }

// CanConnect reports true: the network reaches every rank.
func (c *Connector) CanConnect(transport.Edge) bool { return true }

// Connect makes this rank's ends of edges, in memory of its own, and
// starts their proxies; see transport.Connector.
func (c *Connector) Connect(ctx context.Context, ex transport.Exchanger, _ string, edges []transport.Edge) ([]*transport.Conn, error) {
	rank := ex.Rank()
	ends, err := Ends(rank, edges, c.sizes)
	if err != nil {
		return nil, err
	}
	c.mu.Lock()
	defer c.mu.Unlock()
	n, err := c.w.start(ctx, ex, ends, c.sizes, c.fail, c.abort)
	if err != nil {
		return nil, err
	}
	c.nets = append(c.nets, n)
	conns := make([]*transport.Conn, len(edges))
	k := 0
	for i, e := range edges {
		if k < len(ends) && ends[k].Edge == e {
			conns[i] = ends[k].Conn
			k++
		}
	}
	return conns, nil
}

// Close stops every connection's proxies and closes their wires.
func (c *Connector) Close() error {
	c.mu.Lock()
	defer c.mu.Unlock()
	var errs []error
	for _, n := range c.nets {
		errs = append(errs, n.Close())
	}
	c.nets = nil
	return errors.Join(errs...)
}
