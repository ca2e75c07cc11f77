package rdma

import (
	"encoding/binary"
	"fmt"

	"github.com/ringo-ccl/ringo/internal/errs"
	"github.com/ringo-ccl/ringo/internal/mem"
	"github.com/ringo-ccl/ringo/ring"
	"github.com/ringo-ccl/ringo/transport"
)

// Receiver is the receiving end of an RDMA wire: transport.RecvWire over
// one RC queue pair. Recv is called by one goroutine and SendCredit by
// another; Close by anyone.
type Receiver struct {
	endpoint

	// Owned by the Recv goroutine.
	next   uint64 // the step the next post must start at
	recvID uint64 // the next receive's id
	hdr    [headerBytes]byte
	rcomp  [1]Completion

	// Owned by the SendCredit goroutine.
	reported uint64 // the last head written
	cposted  uint64 // credit writes posted
	cdone    uint64 // credit writes completed
	cwr      Write
	scomp    [creditDepth]Completion
}

var _ transport.RecvWire = (*Receiver)(nil)

// NewReceiver makes the receiving end of a connection over conn, the
// receiver's connection memory (s.Bytes() bytes), on dev. The sender
// writes posts into conn at the offsets they have in its own, so conn
// stays registered and alive until Close. The first post must start at
// step 0.
func NewReceiver(dev Device, conn []byte, s transport.Sizes, cfg Config) (*Receiver, error) {
	w := &Receiver{recvID: recvDepth}
	if err := w.endpoint.init(dev, roleRecv, conn, s, cfg); err != nil {
		return nil, err
	}
	return w, nil
}

// Recv waits for the next header's completion, checks the header (checksum,
// shape, that its step is the immediate's and follows the previous post,
// that its data lies inside the connection memory) and, when the sender
// checksummed the data (RINGO_CHECK=1 there), the data, then hands it to
// place. The data already sits at the offset the header names; when place
// returns exactly that region nothing moves, otherwise it is copied there.
// A bad header is an error wrapping errHeader, data that does not match
// its checksum one wrapping errData; in both cases place is not called.
func (w *Receiver) Recv(place func(p transport.Post) ([]byte, error)) (transport.Post, error) {
	if err := w.enter(); err != nil {
		return transport.Post{}, err
	}
	defer w.leave()
	c, err := w.waitOne(w.rcq, w.rcomp[:])
	if err != nil {
		return transport.Post{}, err
	}
	if c.Status != StatusSuccess {
		return transport.Post{}, w.failed(fmt.Sprintf("receive for the post at step %d", w.next), c)
	}
	if c.Opcode != OpRecvRDMAWithImm {
		return transport.Post{}, fmt.Errorf("%s: receive completed with opcode %d, not a write with immediate", w.who, c.Opcode)
	}
	if err := w.qp.PostRecv(w.recvID); err != nil {
		return transport.Post{}, fmt.Errorf("%s: repost receive: %w", w.who, err)
	}
	w.recvID++
	// Take the header out of the ring and clear its entry, so a stale one
	// can never pass for the next post at that index.
	entry := w.ctrl[hdrRingOff+int(c.Imm%ring.NSteps)*headerBytes:][:headerBytes]
	copy(w.hdr[:], entry)
	clear(entry)
	h, err := decodeHeader(w.hdr[:])
	p, off := h.post, h.off
	if err != nil {
		return p, fmt.Errorf("%s: expecting step %d: %w", w.who, w.next, err)
	}
	switch {
	case uint32(p.Step) != c.Imm:
		return p, fmt.Errorf("%s: %w: %v arrived with immediate %d", w.who, errHeader, p, c.Imm)
	case p.Step != w.next:
		return p, fmt.Errorf("%s: %w: %v does not follow step %d", w.who, errHeader, p, w.next)
	case off < 0 || off > len(w.conn) || int(p.Bytes) > len(w.conn)-off:
		return p, fmt.Errorf("%s: %w: %v at offset %d overruns the %d-byte connection memory", w.who, errHeader, p, off, len(w.conn))
	}
	src := w.conn[off : off+int(p.Bytes)]
	if h.summed {
		if got := transport.DataSum(src); got != h.sum {
			return p, fmt.Errorf("%s: %w: %v: data checksum %#08x, expected %#08x: corrupted on the wire", w.who, errData, p, got, h.sum)
		}
	}
	dst, err := place(p)
	if err != nil {
		return p, err
	}
	if len(dst) != int(p.Bytes) {
		return p, fmt.Errorf("%s: %w: %v placed in %d bytes", w.who, errs.ErrInvalidArgument, p, len(dst))
	}
	if len(src) > 0 && !mem.Same(dst, src) {
		copy(dst, src)
	}
	w.next = p.Step + uint64(p.Slots)
	return p, nil
}

// SendCredit writes head, with immediate, into the sender's credit word. A
// head not above the last one reported is not sent: the sender already has
// it, and the receives it keeps posted are bounded by distinct heads.
func (w *Receiver) SendCredit(head uint64) error {
	if err := w.enter(); err != nil {
		return err
	}
	defer w.leave()
	if head <= w.reported {
		return nil
	}
	if err := w.reapCredits(false); err != nil {
		return err
	}
	for w.cposted-w.cdone >= creditDepth {
		if err := w.reapCredits(true); err != nil {
			return err
		}
	}
	src := creditSrcOff + int(w.cposted%creditDepth)*8
	binary.LittleEndian.PutUint64(w.ctrl[src:], head)
	w.cwr = Write{ID: w.cposted, Local: w.ctrlMR, Offset: src, Len: 8,
		RemoteAddr: w.remote.ctrlAddr + creditWordOff, RKey: w.remote.ctrlRKey,
		Imm: true, ImmData: uint32(head), Signaled: true}
	if err := w.qp.PostWrite(&w.cwr); err != nil {
		return fmt.Errorf("%s: credit %d: %w", w.who, head, err)
	}
	w.cposted++
	w.reported = head
	return nil
}

func (w *Receiver) reapCredits(block bool) error {
	n := 0
	if block {
		c, err := w.waitOne(w.scq, w.scomp[:])
		if err != nil {
			return err
		}
		w.scomp[0], n = c, 1
	} else {
		var err error
		if n, err = w.scq.Poll(w.scomp[:]); err != nil {
			return fmt.Errorf("%s: poll: %w", w.who, err)
		}
	}
	for _, c := range w.scomp[:n] {
		if c.Status != StatusSuccess {
			return w.failed(fmt.Sprintf("credit write %d", c.ID), c)
		}
		w.cdone++
	}
	return nil
}

// Close releases the wire; blocked calls return ErrClosed.
func (w *Receiver) Close() error { return w.endpoint.Close() }
