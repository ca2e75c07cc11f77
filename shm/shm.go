// Package shm is ringo's shared-memory transport between processes of one
// host (NCCL's src/transport/shm.cc): every rank places its receive
// connections — head, tail, bells, Simple slots and LL lines, the layout of
// transport.Conn — in a segment in /dev/shm, and each connection's sender
// maps that segment to send into it. Any two ranks of a host may be
// connected, both ways, on any channel, in as many rounds as the
// communicator's plans need (Connector). A communicator whose ranks all
// share the host also gets a Board: every rank's post of two slots, which
// every other rank maps, for collectives small enough to take one
// exchange (host.RunOneShot), and may get an Attach: every peer held by a
// pidfd, its buffers read with process_vm_readv (host.RunDirect).
//
// Lifecycle of a round: a rank creates its segment (mode 0600, named after
// the communicator's tag, its rank and the round), the ranks exchange names
// through the bootstrap, each maps its receivers', and after a barrier
// every rank unlinks its own name, so from then on nothing is left in
// /dev/shm even if a process is killed. When setup fails half-way, every
// surviving rank unlinks all the round's names, its dead peers' included.
// The mappings are released by Close.
package shm

import (
	"context"
	"errors"
	"fmt"

	"github.com/ringo-ccl/ringo/internal/sys"
	"github.com/ringo-ccl/ringo/transport"
)

// Connector is one rank's shared-memory connections (transport.Connector),
// made in rounds: each Connect places this rank's receiving ends of that
// round's edges in one new segment, which each edge's sender maps.
type Connector struct {
	tag   string
	sizes transport.Sizes
	can   func(from, to int) bool
	segs  []*sys.Segment // own and mapped segments of every round, to unmap on Close
}

var _ transport.Connector = (*Connector)(nil)

// SegmentName returns the /dev/shm name of rank's segment in the
// communicator tagged tag.
func SegmentName(tag string, rank int) string {
	return fmt.Sprintf("%s%d", SegmentPrefix(tag), rank)
}

// SegmentPrefix returns the prefix of every segment name of the
// communicator tagged tag.
func SegmentPrefix(tag string) string { return "ringo-" + tag + "-r" }

// roundName is the name of rank's segment of connection round k.
func roundName(tag string, rank int, k string) string {
	return fmt.Sprintf("%s.%s", SegmentName(tag, rank), k)
}

// NewConnector returns the shared-memory connector of rank ex.Rank() of
// the communicator tagged tag, with FIFOs of the given sizes; can reports
// which edges it may carry (sender and receiver on one host, shared memory
// on): every rank's can must answer alike.
func NewConnector(tag string, sizes transport.Sizes, can func(from, to int) bool) (*Connector, error) {
	if err := sizes.Validate(); err != nil {
		return nil, fmt.Errorf("shm: %w", err)
	}
	return &Connector{tag: tag, sizes: sizes, can: can}, nil
}

// Name is the connector's name in NCCL_DEBUG's channel lines.
func (t *Connector) Name() string { return "SHM" }

// CanConnect reports whether shared memory can carry e.
func (t *Connector) CanConnect(e transport.Edge) bool { return t.can(e.From, e.To) }

// Connect makes this rank's ends of edges, round k. Every rank of ex calls
// it at once with the same edges. Each receiver creates one segment (mode
// 0600, named after the communicator's tag, its rank and the round)
// holding its incoming edges' connections in the order of edges; the ranks
// exchange names through ex, each sender maps its receivers' segments, and
// after a barrier every rank unlinks its own name, so nothing is left in
// /dev/shm even if a process is killed. When setup fails half-way, every
// surviving rank unlinks all the round's names, its dead peers' included.
func (t *Connector) Connect(ctx context.Context, ex transport.Exchanger, k string, edges []transport.Edge) (conns []*transport.Conn, err error) {
	nranks, rank := ex.Size(), ex.Rank()
	slot := make([]int, len(edges)) // each edge's place in its receiver's segment
	incoming := make([]int, nranks)
	for i, e := range edges {
		if e.From < 0 || e.From >= nranks || e.To < 0 || e.To >= nranks || e.From == e.To || e.Ch < 0 {
			return nil, fmt.Errorf("shm: no connection %v among %d ranks", e, nranks)
		}
		slot[i] = incoming[e.To]
		incoming[e.To]++
	}
	var made []*sys.Segment
	defer func() {
		if err != nil {
			for r := range nranks {
				sys.Unlink(roundName(t.tag, r, k))
			}
			for _, sg := range made {
				sg.Close()
			}
			conns = nil
		}
	}()
	per := t.sizes.Bytes()
	name := roundName(t.tag, rank, k)
	var own *sys.Segment
	var announce []byte
	if incoming[rank] > 0 {
		if own, err = sys.CreateSegment(name, incoming[rank]*per); err != nil {
			return nil, fmt.Errorf("shm: %w", err)
		}
		made, announce = append(made, own), []byte(name)
	}
	names, err := ex.AllGather(ctx, announce)
	if err != nil {
		return nil, fmt.Errorf("shm: exchanging segment names: %w", err)
	}
	peers := map[int]*sys.Segment{}
	for _, e := range edges {
		if e.From != rank || peers[e.To] != nil {
			continue
		}
		if want := roundName(t.tag, e.To, k); string(names[e.To]) != want {
			return nil, fmt.Errorf("shm: rank %d announced segment %q, expected %q", e.To, names[e.To], want)
		}
		sg, err := sys.OpenSegment(string(names[e.To]), incoming[e.To]*per)
		if err != nil {
			return nil, fmt.Errorf("shm: mapping rank %d's segment: %w", e.To, err)
		}
		made, peers[e.To] = append(made, sg), sg
	}
	if err = ex.Barrier(ctx); err != nil {
		return nil, fmt.Errorf("shm: waiting for every rank to map its peers' segments: %w", err)
	}
	if own != nil {
		if err = sys.Unlink(name); err != nil {
			return nil, err
		}
	}
	conns = make([]*transport.Conn, len(edges))
	for i, e := range edges {
		var sg *sys.Segment
		switch rank {
		case e.To:
			sg = own
		case e.From:
			sg = peers[e.To]
		default:
			continue
		}
		if conns[i], err = transport.NewConn(sg.Mem[slot[i]*per:(slot[i]+1)*per], t.sizes); err != nil {
			return nil, fmt.Errorf("shm: %w", err)
		}
	}
	t.segs = append(t.segs, made...)
	return conns, nil
}

// Close unmaps every segment. Connections must not be used afterwards.
func (t *Connector) Close() error {
	var errs []error
	for _, s := range t.segs {
		errs = append(errs, s.Close())
	}
	t.segs = nil
	return errors.Join(errs...)
}

// Leftovers lists the /dev/shm names of the communicator tagged tag that
// still exist (for tests and diagnostics).
func Leftovers(tag string) ([]string, error) {
	names, err := sys.ListSegments(SegmentPrefix(tag))
	if err != nil {
		return nil, err
	}
	return names, nil
}
