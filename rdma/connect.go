package rdma

import (
	"context"
	"encoding/binary"
	"errors"
	"fmt"

	"github.com/ringo-ccl/ringo/transport"
)

// Wires are one rank's RDMA wires, ready for transport.NewNet, and what
// Close must release after them: the device port they share.
type Wires struct {
	Sends []transport.SendWire // one per send edge, in order
	Recvs []transport.RecvWire // one per receive edge
	dev   Device
}

// Close closes the device port; the wires must be closed first
// (transport.Net.Close does).
func (w *Wires) Close() error {
	if w.dev == nil {
		return nil
	}
	return w.dev.Close()
}

// Connect makes the RDMA wires of this rank's net connections over port of
// p: a Sender per edge of sends (each from this rank) over sendMem[i], and
// a Receiver per edge of recvs (each to it) over recvMem[i]. Every rank of
// the communicator calls it at the same time, each with its own edges:
// each connection's two ends are joined by blobs that every rank exchanges
// through ex, each naming its edge, so a rank may have any number of
// connections to and from any peers. A rank with no edges only takes part
// in the exchanges. abort, if not nil, ends the wires' waits.
func Connect(ctx context.Context, ex transport.Exchanger, p Provider, port Port, sends, recvs []transport.Edge, s transport.Sizes, sendMem, recvMem [][]byte, abort *transport.Abort) (w *Wires, err error) {
	rank, n := ex.Rank(), ex.Size()
	if len(sendMem) != len(sends) || len(recvMem) != len(recvs) {
		return nil, fmt.Errorf("rdma: %d send regions for %d edges, %d receive regions for %d edges", len(sendMem), len(sends), len(recvMem), len(recvs))
	}
	for i, es := range [][]transport.Edge{sends, recvs} {
		for _, e := range es {
			mine, peer := e.From, e.To
			if i == 1 {
				mine, peer = e.To, e.From
			}
			if mine != rank || peer == rank || peer < 0 || peer >= n || e.Ch < 0 || uint64(e.Ch) > 1<<31 {
				return nil, fmt.Errorf("rdma: rank %d of %d given the edge %v", rank, n, e)
			}
		}
	}
	w = &Wires{}
	defer func() {
		if err != nil {
			for _, x := range w.Sends {
				x.Close()
			}
			for _, x := range w.Recvs {
				x.Close()
			}
			w.Close()
			w = nil
		}
	}()
	if len(sendMem) > 0 || len(recvMem) > 0 {
		if w.dev, err = p.Open(port.Device, port.Port); err != nil {
			return w, fmt.Errorf("rdma: opening %s:%d: %w", port.Device, port.Port, err)
		}
	}
	// This rank's blob: one entry per end, its edge then its blob.
	var mine []byte
	add := func(e transport.Edge, b []byte) {
		for _, v := range []int{e.From, e.To, e.Ch, len(b)} {
			mine = binary.LittleEndian.AppendUint32(mine, uint32(v))
		}
		mine = append(mine, b...)
	}
	mine = binary.LittleEndian.AppendUint32(mine, uint32(len(sends)+len(recvs)))
	var senders []*Sender
	var receivers []*Receiver
	for i, e := range sends {
		x, err := NewSender(w.dev, sendMem[i], s, Config{Peer: e.To, Channel: e.Ch, Abort: abort})
		if err != nil {
			return w, err
		}
		senders, w.Sends = append(senders, x), append(w.Sends, x)
		add(e, x.Blob())
	}
	for i, e := range recvs {
		x, err := NewReceiver(w.dev, recvMem[i], s, Config{Peer: e.From, Channel: e.Ch, Abort: abort})
		if err != nil {
			return w, err
		}
		receivers, w.Recvs = append(receivers, x), append(w.Recvs, x)
		add(e, x.Blob())
	}
	all, err := ex.AllGather(ctx, mine)
	if err != nil {
		return w, fmt.Errorf("rdma: exchanging connection blobs: %w", err)
	}
	parsed := map[int]map[transport.Edge][]byte{} // the peers' blobs, parsed once
	theirs := func(peer int, e transport.Edge) ([]byte, error) {
		if parsed[peer] == nil {
			m, err := splitBlobs(all[peer])
			if err != nil {
				return nil, fmt.Errorf("rdma: rank %d's blob: %w", peer, err)
			}
			parsed[peer] = m
		}
		b, ok := parsed[peer][e]
		if !ok {
			return nil, fmt.Errorf("rdma: rank %d offers no end of the connection %v", peer, e)
		}
		return b, nil
	}
	join := func(peer int, e transport.Edge, connect func([]byte) error) error {
		b, err := theirs(peer, e)
		if err != nil {
			return err
		}
		return connect(b)
	}
	for i, x := range senders {
		if err := join(sends[i].To, sends[i], x.Connect); err != nil {
			return w, err
		}
	}
	for i, x := range receivers {
		if err := join(recvs[i].From, recvs[i], x.Connect); err != nil {
			return w, err
		}
	}
	// Nobody sends before both ends of every connection are connected.
	if err := ex.Barrier(ctx); err != nil {
		return w, fmt.Errorf("rdma: waiting for every rank to connect: %w", err)
	}
	return w, nil
}

// splitBlobs parses a rank's blob into its ends' blobs, by edge. Every
// length is checked against what is left before it is used.
func splitBlobs(b []byte) (map[transport.Edge][]byte, error) {
	if len(b) < 4 {
		return nil, fmt.Errorf("a blob of %d bytes", len(b))
	}
	n := binary.LittleEndian.Uint32(b)
	b = b[4:]
	if uint64(n) > uint64(len(b))/16 {
		return nil, fmt.Errorf("a blob of %d bytes claims %d entries", len(b)+4, n)
	}
	ends := make(map[transport.Edge][]byte, n)
	for i := range n {
		if len(b) < 16 {
			return nil, fmt.Errorf("truncated blob (entry %d)", i)
		}
		u := func(k int) uint32 { return binary.LittleEndian.Uint32(b[4*k:]) }
		e := transport.Edge{From: int(int32(u(0))), To: int(int32(u(1))), Ch: int(int32(u(2)))}
		size := u(3)
		b = b[16:]
		if uint64(len(b)) < uint64(size) {
			return nil, fmt.Errorf("truncated blob (entry %d)", i)
		}
		if _, dup := ends[e]; dup {
			return nil, fmt.Errorf("blob entry %d: the connection %v twice", i, e)
		}
		ends[e], b = b[:size], b[size:]
	}
	if len(b) != 0 {
		return nil, errors.New("bytes after a blob's entries")
	}
	return ends, nil
}
