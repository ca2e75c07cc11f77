package rdma

import (
	"errors"
	"fmt"
	"runtime"
	"sync"
	"sync/atomic"
	"time"

	"github.com/ringo-ccl/ringo/internal/errs"
	"github.com/ringo-ccl/ringo/internal/mem"
	"github.com/ringo-ccl/ringo/ring"
	"github.com/ringo-ccl/ringo/transport"
)

// Config names a wire for its errors and says what stops its waits.
type Config struct {
	Peer    int              // the peer's rank
	Channel int              // the connection's channel
	Abort   *transport.Abort // optional: raising it ends every wait
}

// ErrClosed is returned by a wire's calls after Close.
var ErrClosed = errors.New("rdma wire closed")

// Control memory: each end registers one small region besides the
// connection memory, with this layout (the same at both ends).
const (
	sendDepth   = 2 * ring.NSteps // posts a sender may have in flight before it waits for completions
	creditDepth = 2 * ring.NSteps // credit writes in flight
	recvDepth   = 4 * ring.NSteps // receives kept posted, far more than credits allow in flight

	hdrRingOff    = 0                                    // receiver: NSteps headers, written by the sender
	hdrSrcOff     = hdrRingOff + ring.NSteps*headerBytes // sender: sendDepth headers to write from
	creditWordOff = hdrSrcOff + sendDepth*headerBytes    // sender: the head, written by the receiver
	creditSrcOff  = creditWordOff + 64                   // receiver: creditDepth heads to write from
	ctrlBytes     = creditSrcOff + creditDepth*8

	maxSendWR = 2*sendDepth + 2 // a post is two writes; unsignaled ones are reclaimed by the next signaled
	cqDepth   = 2 * (maxSendWR + recvDepth)
)

// endpoint is what both ends of a wire share: memory, registrations, the
// queue pair and its two completion queues (send completions are polled by
// the goroutine that posts, receive completions by the one that waits).
type endpoint struct {
	cfg  Config
	dev  Device
	role uint8
	conn []byte // the connection memory, the caller's
	ctrl []byte // the control memory, ours

	connMR, ctrlMR MR
	scq, rcq       CQ
	qp             QP
	remote         blob
	who            string // "rdma send to rank 3 ch0 (qp 0x12 → 0x34)", for errors

	// mu is held shared by every call for its duration and exclusively by
	// Close, so that Close frees nothing a call is using. closed tells
	// waiting calls to give up.
	mu     sync.RWMutex
	closed atomic.Bool
}

func (e *endpoint) init(dev Device, role uint8, conn []byte, s transport.Sizes, cfg Config) (err error) {
	if err := s.Validate(); err != nil {
		return fmt.Errorf("%w: %w", errs.ErrInvalidArgument, err)
	}
	if len(conn) < s.Bytes() {
		return fmt.Errorf("%w: connection memory is %d bytes, need %d", errs.ErrInvalidArgument, len(conn), s.Bytes())
	}
	e.cfg, e.dev, e.role = cfg, dev, role
	e.conn = conn[:len(conn):len(conn)] // all of it: a GPU's connection region is larger than s.Bytes()
	e.ctrl = mem.Alloc(ctrlBytes, 64)
	dir := "send to"
	if role == roleRecv {
		dir = "receive from"
	}
	e.who = fmt.Sprintf("rdma %s rank %d ch%d on %s:%d", dir, cfg.Peer, cfg.Channel, dev.Name(), dev.Port())
	defer func() {
		if err != nil {
			e.release()
			err = fmt.Errorf("%s: %w", e.who, err)
		}
	}()
	connAccess := LocalWrite
	if role == roleRecv {
		connAccess |= RemoteWrite
	}
	if e.connMR, err = dev.RegHost(e.conn, connAccess); err != nil {
		return fmt.Errorf("register connection memory: %w", err)
	}
	if e.ctrlMR, err = dev.RegHost(e.ctrl, LocalWrite|RemoteWrite); err != nil {
		return fmt.Errorf("register control memory: %w", err)
	}
	if e.scq, err = dev.CreateCQ(cqDepth); err != nil {
		return fmt.Errorf("create send completion queue: %w", err)
	}
	if e.rcq, err = dev.CreateCQ(cqDepth); err != nil {
		return fmt.Errorf("create receive completion queue: %w", err)
	}
	if e.qp, err = dev.CreateQP(e.scq, e.rcq, maxSendWR, recvDepth); err != nil {
		return fmt.Errorf("create queue pair: %w", err)
	}
	// Receives go up before the peer can learn our queue pair, so a write
	// with immediate never finds none.
	for i := 0; i < recvDepth; i++ {
		if err = e.qp.PostRecv(uint64(i)); err != nil {
			return fmt.Errorf("post receive: %w", err)
		}
	}
	return nil
}

// Blob returns what the peer's Connect needs, to ship through the
// bootstrap.
func (e *endpoint) Blob() []byte {
	return blob{
		role: e.role, qpn: e.qp.Num(), psn: e.qp.PSN(), addr: e.dev.Addr(),
		connAddr: e.connMR.Addr(), connLen: uint64(len(e.conn)), connRKey: e.connMR.RKey(),
		ctrlAddr: e.ctrlMR.Addr(), ctrlRKey: e.ctrlMR.RKey(), ctrlLen: ctrlBytes,
	}.encode()
}

// Connect joins this end to the peer whose Blob is peer. Both ends must
// have made their blobs before either connects.
func (e *endpoint) Connect(peer []byte) error {
	b, err := decodeBlob(peer)
	if err != nil {
		return fmt.Errorf("%s: %w", e.who, err)
	}
	bad := func(format string, a ...any) error {
		return fmt.Errorf("%s: %w: %s", e.who, errs.ErrInvalidArgument, fmt.Sprintf(format, a...))
	}
	switch {
	case b.role == e.role:
		return bad("the peer's blob is from the same end of a connection (role %d)", b.role)
	case b.connLen != uint64(len(e.conn)):
		return bad("the peer's connection memory is %d bytes, ours %d: the FIFO sizes differ", b.connLen, len(e.conn))
	case b.ctrlLen != ctrlBytes:
		return bad("the peer's control memory is %d bytes, ours %d", b.ctrlLen, ctrlBytes)
	case b.addr.Global != e.dev.Addr().Global:
		return bad("one end addresses by GID (RoCE) and the other by LID (InfiniBand)")
	}
	r := Remote{QPN: b.qpn, PSN: b.psn, Addr: b.addr}
	r.Addr.MTU = min(b.addr.MTU, e.dev.Addr().MTU)
	if err := e.qp.Connect(r); err != nil {
		return fmt.Errorf("%s: connect to qp %#x: %w", e.who, b.qpn, err)
	}
	e.remote = b
	e.who = fmt.Sprintf("%s (qp %#x → %#x)", e.who, e.qp.Num(), b.qpn)
	return nil
}

// Close releases the wire once calls in progress have returned ErrClosed.
func (e *endpoint) Close() error {
	if e.closed.Swap(true) {
		return nil
	}
	e.mu.Lock()
	defer e.mu.Unlock()
	return e.release()
}

func (e *endpoint) release() error {
	var all []error
	if e.qp != nil {
		all = append(all, e.qp.Close())
		e.qp = nil
	}
	for _, q := range []*CQ{&e.scq, &e.rcq} {
		if *q != nil {
			all = append(all, (*q).Close())
			*q = nil
		}
	}
	for _, m := range []*MR{&e.connMR, &e.ctrlMR} {
		if *m != nil {
			all = append(all, (*m).Close())
			*m = nil
		}
	}
	return errors.Join(all...)
}

// enter starts a call: it fails after Close.
func (e *endpoint) enter() error {
	e.mu.RLock()
	if e.closed.Load() {
		e.mu.RUnlock()
		return ErrClosed
	}
	return nil
}

func (e *endpoint) leave() { e.mu.RUnlock() }

// waitOne polls cq until it yields one completion, the wire closes or the
// abort flag rises. It spins, then yields, then sleeps briefly between
// polls; it does not allocate.
func (e *endpoint) waitOne(cq CQ, buf []Completion) (Completion, error) {
	for n := 0; ; n++ {
		k, err := cq.Poll(buf[:1])
		if err != nil {
			return Completion{}, fmt.Errorf("%s: poll: %w", e.who, err)
		}
		if k == 1 {
			return buf[0], nil
		}
		if e.closed.Load() {
			return Completion{}, ErrClosed
		}
		if a := e.cfg.Abort; a != nil && a.IsSet() {
			return Completion{}, a.Err()
		}
		switch {
		case n < 256:
		case n < 4096:
			runtime.Gosched()
		default:
			time.Sleep(20 * time.Microsecond)
		}
	}
}

// failed describes a completion with an error status.
func (e *endpoint) failed(what string, c Completion) error {
	text := c.Text
	if text == "" {
		text = c.Status.String()
	}
	err := fmt.Errorf("%s: %s completed with status %d (%s)", e.who, what, int(c.Status), text)
	if c.Status == StatusRetryExcErr || c.Status == StatusRNRRetryExcErr {
		err = fmt.Errorf("%w: %w", errs.ErrPeerLost, err)
	}
	return err
}
