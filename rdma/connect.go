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
	Sends []transport.SendWire // to next, one per channel (none when the rank does not send over RDMA)
	Recvs []transport.RecvWire // from prev
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

// Connect makes the RDMA wires of this rank's net connections over port of p:
// a Sender per channel over sendMem (to next) and a Receiver per channel
// over recvMem (from prev), each connection's two ends joined by blobs
// that every rank exchanges through ex at the same time. Either memory may
// be empty (that side is not RDMA). abort, if not nil, ends the wires'
// waits.
func Connect(ctx context.Context, ex transport.Exchanger, p Provider, port Port, prev, next int, s transport.Sizes, sendMem, recvMem [][]byte, abort *transport.Abort) (w *Wires, err error) {
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
	// This rank's blob: its senders' blobs, then its receivers', each
	// behind its length.
	var mine []byte
	add := func(b []byte) { mine = append(binary.LittleEndian.AppendUint32(mine, uint32(len(b))), b...) }
	mine = binary.LittleEndian.AppendUint32(mine, uint32(len(sendMem)))
	mine = binary.LittleEndian.AppendUint32(mine, uint32(len(recvMem)))
	var senders []*Sender
	var receivers []*Receiver
	for ch, m := range sendMem {
		x, err := NewSender(w.dev, m, s, Config{Peer: next, Channel: ch, Abort: abort})
		if err != nil {
			return w, err
		}
		senders, w.Sends = append(senders, x), append(w.Sends, x)
		add(x.Blob())
	}
	for ch, m := range recvMem {
		x, err := NewReceiver(w.dev, m, s, Config{Peer: prev, Channel: ch, Abort: abort})
		if err != nil {
			return w, err
		}
		receivers, w.Recvs = append(receivers, x), append(w.Recvs, x)
		add(x.Blob())
	}
	all, err := ex.AllGather(ctx, mine)
	if err != nil {
		return w, fmt.Errorf("rdma: exchanging connection blobs: %w", err)
	}
	if len(senders) > 0 {
		_, theirRecvs, err := splitBlobs(all[next])
		if err != nil || len(theirRecvs) != len(senders) {
			return w, errors.Join(fmt.Errorf("rdma: rank %d offers %d receiving ends for our %d channels", next, len(theirRecvs), len(senders)), err)
		}
		for ch, x := range senders {
			if err := x.Connect(theirRecvs[ch]); err != nil {
				return w, err
			}
		}
	}
	if len(receivers) > 0 {
		theirSends, _, err := splitBlobs(all[prev])
		if err != nil || len(theirSends) != len(receivers) {
			return w, errors.Join(fmt.Errorf("rdma: rank %d offers %d sending ends for our %d channels", prev, len(theirSends), len(receivers)), err)
		}
		for ch, x := range receivers {
			if err := x.Connect(theirSends[ch]); err != nil {
				return w, err
			}
		}
	}
	// Nobody sends before both ends of every connection are connected.
	if err := ex.Barrier(ctx); err != nil {
		return w, fmt.Errorf("rdma: waiting for every rank to connect: %w", err)
	}
	return w, nil
}

// splitBlobs parses a rank's blob into its senders' and receivers' blobs.
func splitBlobs(b []byte) (sends, recvs [][]byte, err error) {
	if len(b) < 8 {
		return nil, nil, fmt.Errorf("rdma: a blob of %d bytes", len(b))
	}
	ns, nr := binary.LittleEndian.Uint32(b), binary.LittleEndian.Uint32(b[4:])
	b = b[8:]
	for i := range ns + nr {
		if len(b) < 4 || uint64(len(b)-4) < uint64(binary.LittleEndian.Uint32(b)) {
			return nil, nil, fmt.Errorf("rdma: truncated blob (entry %d)", i)
		}
		n := binary.LittleEndian.Uint32(b)
		x := b[4 : 4+n]
		b = b[4+n:]
		if i < ns {
			sends = append(sends, x)
		} else {
			recvs = append(recvs, x)
		}
	}
	if len(b) != 0 {
		return nil, nil, fmt.Errorf("rdma: %d bytes after a blob's entries", len(b))
	}
	return sends, recvs, nil
}
