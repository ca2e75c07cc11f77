// Package shm is ringo's shared-memory transport between processes of one
// host: every rank places its receive connections — head, tail, bells,
// Simple slots and LL lines, the layout of transport.Conn — in a segment in
// /dev/shm, and its ring predecessor maps that segment to send into it.
//
// Lifecycle: a rank creates its segment (mode 0600, named after the
// communicator's tag and its rank), the ranks exchange names through the
// bootstrap, each maps its successor's, and after a barrier every rank
// unlinks its own name, so from then on nothing is left in /dev/shm even if
// a process is killed. When setup fails half-way, every surviving rank
// unlinks all the communicator's names, its dead peers' included. The
// mappings are released by Close.
package shm

import (
	"context"
	"errors"
	"fmt"

	"github.com/ringo-ccl/ringo/internal/sys"
	"github.com/ringo-ccl/ringo/transport"
)

// Transport is one rank's shared-memory connections: from its ring
// predecessor on every channel (in its own segment) and to its successor
// (in the successor's segment).
type Transport struct {
	rank, prev, next int
	own, peer        *sys.Segment
	recv, send       []*transport.Conn // by channel
}

var _ transport.Transport = (*Transport)(nil)

// SegmentName returns the /dev/shm name of rank's segment in the
// communicator tagged tag.
func SegmentName(tag string, rank int) string {
	return fmt.Sprintf("%s%d", SegmentPrefix(tag), rank)
}

// SegmentPrefix returns the prefix of every segment name of the
// communicator tagged tag.
func SegmentPrefix(tag string) string { return "ringo-" + tag + "-r" }

// Connect sets up this rank's (ex.Rank()) connections for nch channels of
// a ring in which it receives from prev (when recv) and sends to next (when
// send); the others go through another transport. Every rank of the
// communicator calls it at the same time with the same tag, nch and sizes.
func Connect(ctx context.Context, ex transport.Exchanger, tag string, prev, next, nch int, sizes transport.Sizes, recv, send bool) (t *Transport, err error) {
	nranks, rank := ex.Size(), ex.Rank()
	if err := sizes.Validate(); err != nil {
		return nil, err
	}
	if nch < 1 || rank < 0 || rank >= nranks || prev < 0 || prev >= nranks || next < 0 || next >= nranks {
		return nil, fmt.Errorf("shm: bad ring: rank %d of %d, prev %d, next %d, %d channels", rank, nranks, prev, next, nch)
	}
	t = &Transport{rank: rank, prev: prev, next: next}
	size := nch * sizes.Bytes()
	name := SegmentName(tag, rank)
	defer func() {
		if err != nil {
			// Leave nothing behind: our own name, and those of peers that
			// may have died before unlinking theirs.
			for r := range nranks {
				sys.Unlink(SegmentName(tag, r))
			}
			t.Close()
			t = nil
		}
	}()
	var announce []byte
	if recv {
		if t.own, err = sys.CreateSegment(name, size); err != nil {
			return t, fmt.Errorf("shm: %w", err)
		}
		announce = []byte(name)
	}
	names, err := ex.AllGather(ctx, announce)
	if err != nil {
		return t, fmt.Errorf("shm: exchanging segment names: %w", err)
	}
	if send {
		if want := SegmentName(tag, next); string(names[next]) != want {
			return t, fmt.Errorf("shm: rank %d announced segment %q, expected %q", next, names[next], want)
		}
		if t.peer, err = sys.OpenSegment(string(names[next]), size); err != nil {
			return t, fmt.Errorf("shm: mapping rank %d's segment: %w", next, err)
		}
	}
	if err = ex.Barrier(ctx); err != nil {
		return t, fmt.Errorf("shm: waiting for every rank to map its successor's segment: %w", err)
	}
	per := sizes.Bytes()
	if recv {
		if err = sys.Unlink(name); err != nil {
			return t, err
		}
		for c := range nch {
			r, err := transport.NewConn(t.own.Mem[c*per:(c+1)*per], sizes)
			if err != nil {
				return t, fmt.Errorf("shm: %w", err)
			}
			t.recv = append(t.recv, r)
		}
	}
	if send {
		for c := range nch {
			s, err := transport.NewConn(t.peer.Mem[c*per:(c+1)*per], sizes)
			if err != nil {
				return t, fmt.Errorf("shm: %w", err)
			}
			t.send = append(t.send, s)
		}
	}
	return t, nil
}

// Conn returns the connection of channel ch from rank from to rank to:
// this rank's receive connection (from its predecessor) or send connection
// (to its successor).
func (t *Transport) Conn(_ context.Context, from, to, ch int) (*transport.Conn, error) {
	switch {
	case from == t.prev && to == t.rank && ch >= 0 && ch < len(t.recv):
		return t.recv[ch], nil
	case from == t.rank && to == t.next && ch >= 0 && ch < len(t.send):
		return t.send[ch], nil
	}
	return nil, fmt.Errorf("shm: rank %d has no connection %d→%d on channel %d", t.rank, from, to, ch)
}

// Close unmaps both segments. Connections must not be used afterwards.
func (t *Transport) Close() error {
	if t == nil {
		return nil
	}
	var errs []error
	for _, s := range []*sys.Segment{t.own, t.peer} {
		if s != nil {
			errs = append(errs, s.Close())
		}
	}
	t.recv, t.send = nil, nil
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
