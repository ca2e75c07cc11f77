package rdma

import (
	"fmt"

	"github.com/ringo-ccl/ringo/internal/errs"
	"github.com/ringo-ccl/ringo/internal/mem"
	"github.com/ringo-ccl/ringo/ring"
	"github.com/ringo-ccl/ringo/transport"
)

// Sender is the sending end of an RDMA wire: transport.SendWire over one RC
// queue pair. Send is called by one goroutine and Credit by another; Close
// by anyone.
type Sender struct {
	endpoint

	sum bool // checksum every post's data (RINGO_CHECK=1); set by NewSender, then read-only

	// Owned by the Send goroutine.
	wr     [2]Write // the data write and the header write
	posted uint64   // posts made
	done   uint64   // posts whose header write has completed
	scomp  [sendDepth]Completion

	// Owned by the Credit goroutine.
	head   uint64 // the last head reported
	recvID uint64 // the next receive's id
	rcomp  [1]Completion
}

var _ transport.SendWire = (*Sender)(nil)

// NewSender makes the sending end of a connection over conn, the sender's
// connection memory (s.Bytes() bytes, as transport.NewConn lays it out),
// on dev. conn stays registered, so the caller keeps it alive until Close.
// Ship Blob to the peer and Connect with the peer's. With RINGO_CHECK=1
// (read here, once) every post's header carries its data's checksum.
func NewSender(dev Device, conn []byte, s transport.Sizes, cfg Config) (*Sender, error) {
	w := &Sender{recvID: recvDepth, sum: transport.SumData()}
	if err := w.endpoint.init(dev, roleSend, conn, s, cfg); err != nil {
		return nil, err
	}
	return w, nil
}

// reap takes the send completions that are there, or waits for one when
// block is set. Only signaled header writes complete successfully; a
// failed completion (of either write, or a flushed one) is an error.
func (w *Sender) reap(block bool) error {
	if block {
		c, err := w.waitOne(w.scq, w.scomp[:])
		if err != nil {
			return err
		}
		return w.account(c)
	}
	n, err := w.scq.Poll(w.scomp[:])
	if err != nil {
		return fmt.Errorf("%s: poll: %w", w.who, err)
	}
	for _, c := range w.scomp[:n] {
		if err := w.account(c); err != nil {
			return err
		}
	}
	return nil
}

func (w *Sender) account(c Completion) error {
	if c.Status != StatusSuccess {
		part := "data write"
		if c.ID&1 == 1 {
			part = "header write"
		}
		return w.failed(fmt.Sprintf("post %d %s", c.ID>>1, part), c)
	}
	w.done++
	return nil
}

// Send writes data to the same offset in the receiver's connection memory,
// then the post's header, with immediate, into the receiver's header ring.
// RC delivers the two in order, so the data is in place when the
// receiver sees the header's completion. It returns once both are posted.
// A post of no slots, skipping all its slots or taking more than
// 2×ring.NSteps is refused with errs.ErrInvalidArgument.
func (w *Sender) Send(p transport.Post, data []byte) error {
	if err := w.enter(); err != nil {
		return err
	}
	defer w.leave()
	if len(data) != int(p.Bytes) {
		return fmt.Errorf("%s: %w: %v with %d bytes of data", w.who, errs.ErrInvalidArgument, p, len(data))
	}
	if !p.ShapeOK() {
		return fmt.Errorf("%s: %w: %v: a post takes 1 to %d slots and skips fewer than it takes", w.who, errs.ErrInvalidArgument, p, 2*ring.NSteps)
	}
	off := 0
	if len(data) > 0 {
		var ok bool
		if off, ok = mem.Offset(w.conn, data); !ok {
			return fmt.Errorf("%s: %w: %v: the data is not in the connection memory", w.who, errs.ErrInvalidArgument, p)
		}
	}
	if err := w.reap(false); err != nil {
		return err
	}
	for w.posted-w.done >= sendDepth {
		if err := w.reap(true); err != nil {
			return err
		}
	}
	seq := w.posted
	if len(data) > 0 {
		d := &w.wr[0]
		*d = Write{ID: seq << 1, Local: w.connMR, Offset: off, Len: len(data),
			RemoteAddr: w.remote.connAddr + uint64(off), RKey: w.remote.connRKey}
		if err := w.qp.PostWrite(d); err != nil {
			return fmt.Errorf("%s: %v data: %w", w.who, p, err)
		}
	}
	src := hdrSrcOff + int(seq%sendDepth)*headerBytes
	hdr := header{post: p, off: off}
	if w.sum {
		hdr.sum, hdr.summed = transport.DataSum(data), true
	}
	hdr.put(w.ctrl[src:])
	h := &w.wr[1]
	*h = Write{ID: seq<<1 | 1, Local: w.ctrlMR, Offset: src, Len: headerBytes,
		RemoteAddr: w.remote.ctrlAddr + hdrRingOff + (p.Step%ring.NSteps)*headerBytes, RKey: w.remote.ctrlRKey,
		Imm: true, ImmData: uint32(p.Step), Signaled: true}
	if err := w.qp.PostWrite(h); err != nil {
		return fmt.Errorf("%s: %v header: %w", w.who, p, err)
	}
	w.posted++
	return nil
}

// Credit waits for the receiver's next credit write and returns its head.
// The head travels twice: as the 8 bytes written into our credit word and
// as the immediate (its low 32 bits). The immediate is what we read — it
// cannot tear, and the word may already hold a later report — extended to
// 64 bits from the previous head, which it never trails by 2^32 steps.
func (w *Sender) Credit() (uint64, error) {
	if err := w.enter(); err != nil {
		return 0, err
	}
	defer w.leave()
	c, err := w.waitOne(w.rcq, w.rcomp[:])
	if err != nil {
		return 0, err
	}
	if c.Status != StatusSuccess {
		return 0, w.failed("credit receive", c)
	}
	if c.Opcode != OpRecvRDMAWithImm {
		return 0, fmt.Errorf("%s: credit receive completed with opcode %d, not a write with immediate", w.who, c.Opcode)
	}
	if err := w.qp.PostRecv(w.recvID); err != nil {
		return 0, fmt.Errorf("%s: repost receive: %w", w.who, err)
	}
	w.recvID++
	h := w.head&^0xffffffff | uint64(c.Imm)
	if h < w.head {
		h += 1 << 32
	}
	w.head = h
	return h, nil
}

// Close releases the wire; blocked calls return ErrClosed.
func (w *Sender) Close() error { return w.endpoint.Close() }
