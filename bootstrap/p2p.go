package bootstrap

import (
	"context"
	"errors"
	"fmt"
	"io"
	"net"
	"sync"
	"time"

	"github.com/ringo-ccl/ringo/internal/errs"
	"github.com/ringo-ccl/ringo/internal/tcp"
)

// Point-to-point messages (NCCL's bootstrapSend and bootstrapRecv): two
// ranks talk over one TCP connection of their own, which the others take no
// part in. It is made when first needed: the first Send to a peer dials the
// peer's listener (the address the root's table gave) in the background
// (routineDial) and presents a p2p hello, which the peer's listener vets as
// it vets ring hellos (listen.go) and answers with an accept. Recv never
// dials: it waits for the peer's messages, on whichever connection comes.
//
// When both ranks of a pair dial at once, the connection dialed by the
// lower rank is kept: a rank whose own dial is under way refuses a higher
// rank's hello with refuseCrossed, and accepts a lower rank's; a rank
// refused so waits for the connection its listener takes. A rank refuses
// any hello once it has a connection with that peer, so a pair never has
// two.
//
// Each connection has one reader (routineRead), which queues the messages
// that no Recv has taken yet, per tag and in order, up to maxQueuedMsgs
// messages and maxQueuedBytes bytes a peer: a peer sending beyond that
// fails the connection (with errs.ErrInvalidArgument) rather than growing
// this process. A frame's length is checked against the largest message,
// and the queue's room, before its payload is allocated.
//
// A pair fails, for good, when its connection does (the peer closed it, or
// died), when the root reports the peer lost, on a malformed frame or an
// overfull queue, and when a Send is cut off mid-message; its pending and
// later calls fail with that error (after Recv has taken the messages that
// arrived before). Close fails every pair with errs.ErrAborted.

const (
	// MaxTag is the largest tag of Send and Recv: tags above it are
	// reserved (Pair's).
	MaxTag = 1<<31 - 1
	// MaxMessage is the largest blob Send moves (1 MiB).
	MaxMessage = maxMsgBytes

	maxQueuedMsgs  = 1024             // a peer's messages not yet taken by Recv
	maxQueuedBytes = 4 << 20          // the bytes of their blobs
	connectTimeout = 30 * time.Second // a point-to-point connection's making, from dial to accept
)

// errCrossed is a p2p hello refused because the refuser is connecting to
// the connector itself.
var errCrossed = errors.New("connections crossed")

// peers is a Bootstrap's point-to-point connections, by peer.
type peers struct {
	mu     sync.Mutex // guards the fields below and every pair's, unless a pair's say otherwise
	pairs  map[int]*pair
	closed bool           // Close began: every pair failed, no new one
	wg     sync.WaitGroup // every routineDial and routineRead
}

// pair is this rank's side of its point-to-point connection with peer.
type pair struct {
	peer       int
	conn       net.Conn // set once, when connected
	connecting bool     // a routineDial runs
	err        error    // why the pair failed, for good; nil while it works
	cancel     context.CancelFunc
	ctx        context.Context     // of routineDial; cancelled when the pair fails
	changed    chan struct{}       // closed, and replaced, when any field above or the queue changes
	inbox      map[uint32][][]byte // messages no Recv has taken, by tag, oldest first
	queued     int                 // messages in inbox
	queuedLen  int                 // bytes of their blobs

	wsem chan struct{} // holds a token while a Send (or the accept) writes on conn

	opSem  chan struct{} // holds a token while a call of Pair runs; guards the fields below
	seq    uint64        // Pair's calls made
	broken error         // why Pair's calls are out of step
}

// Send sends blob (at most MaxMessage bytes) to rank peer, tagged tag (at
// most MaxTag), to be taken by peer's Recv of this rank and tag; messages of
// one peer and tag arrive in the order sent. It returns once the message is
// written to the connection, not when peer takes it. The first Send to a
// peer connects to it (see the package doc); ctx bounds the wait, while the
// connection's making goes on, to serve later calls. Safe for concurrent
// use: concurrent Sends to one peer and tag go in some order.
//
// Errors (all *errs.Error naming peer): peer out of range or this rank, tag
// above MaxTag, blob too large: errs.ErrInvalidArgument; ctx's end:
// errs.ErrTimeout (deadline) or ctx's error, the connection left as it was
// (or, cut off mid-message, discarded: later calls fail); the peer lost or
// its connection failed: errs.ErrPeerLost; after Close: errs.ErrAborted.
func (b *Bootstrap) Send(ctx context.Context, peer int, tag uint32, blob []byte) error {
	if err := b.checkPeer("send", peer, tag); err != nil {
		return err
	}
	if len(blob) > maxMsgBytes {
		return errs.Invalid("bootstrap send", b.rank, "blob of %d bytes to rank %d exceeds %d", len(blob), peer, maxMsgBytes)
	}
	if err := b.send(ctx, peer, tag, blob); err != nil {
		return b.wrapPeer("send", peer, err)
	}
	return nil
}

// Recv returns the next message from rank peer tagged tag, waiting for it
// until ctx ends; a message that came before its Recv was kept for it.
// Safe for concurrent use: concurrent Recvs of one peer and tag take its
// messages in some order. Errors (all *errs.Error naming peer): peer out of
// range or this rank, tag above MaxTag: errs.ErrInvalidArgument; ctx's end:
// errs.ErrTimeout (deadline) or ctx's error, with nothing taken; the pair
// failed (see the package doc), once the messages that came before are
// taken: its error, errs.ErrPeerLost for a peer lost or a connection
// closed; after Close: errs.ErrAborted.
func (b *Bootstrap) Recv(ctx context.Context, peer int, tag uint32) ([]byte, error) {
	if err := b.checkPeer("recv", peer, tag); err != nil {
		return nil, err
	}
	blob, err := b.recv(ctx, peer, tag)
	if err != nil {
		return nil, b.wrapPeer("recv", peer, err)
	}
	return blob, nil
}

// checkPeer checks the peer and tag of a call of op.
func (b *Bootstrap) checkPeer(op string, peer int, tag uint32) error {
	switch {
	case peer < 0 || peer >= b.nranks:
		return errs.Invalid("bootstrap "+op, b.rank, "peer %d out of range [0, %d)", peer, b.nranks)
	case peer == b.rank:
		return errs.Invalid("bootstrap "+op, b.rank, "peer %d is this rank", peer)
	case tag > MaxTag:
		return errs.Invalid("bootstrap "+op, b.rank, "tag %#x above MaxTag (%#x): larger tags are reserved", tag, MaxTag)
	}
	return nil
}

// send writes one message to peer, made of parts.
func (b *Bootstrap) send(ctx context.Context, peer int, tag uint32, parts ...[]byte) error {
	p, c, err := b.writer(ctx, peer)
	if err != nil {
		return err
	}
	defer func() { <-p.wsem }()
	release := tcp.Bind(ctx, writeSide{c})
	n, err := writeFrameN(c, frameMsg, append([][]byte{msgHeader(tag)}, parts...)...)
	release()
	if err == nil {
		return nil
	}
	ended := tcp.EndedBy(ctx, err)
	b.peers.mu.Lock()
	defer b.peers.mu.Unlock()
	switch {
	case p.err != nil: // Close, a loss, the reader: the reason, rather than the write's error
		return p.err
	case ended != nil && n == 0: // nothing written: the connection is as it was
		return ended
	case ended != nil:
		b.failLocked(p, fmt.Errorf("a Send to rank %d was cut off mid-message by its context, and the connection discarded: %w", peer, errs.ErrAborted))
		return fmt.Errorf("cut off after %d bytes, and the connection to rank %d discarded: %w", n, peer, ended)
	}
	err = fmt.Errorf("sending to rank %d: %v: %w", peer, err, errs.ErrPeerLost)
	b.failLocked(p, err)
	return err
}

// writeSide makes tcp.Bind set only a connection's write deadline: its
// read side is its routineRead's.
type writeSide struct{ net.Conn }

func (w writeSide) SetDeadline(t time.Time) error { return w.SetWriteDeadline(t) }

// writer returns peer's pair and its connection, holding the pair's wsem
// token, once it is connected, starting a routineDial if none has.
func (b *Bootstrap) writer(ctx context.Context, peer int) (*pair, net.Conn, error) {
	for {
		b.peers.mu.Lock()
		p, err := b.pairLocked(peer)
		if err == nil && p.err != nil {
			err = p.err
		}
		if err != nil {
			b.peers.mu.Unlock()
			return nil, nil, err
		}
		if p.conn == nil && !p.connecting {
			p.connecting = true
			b.peers.wg.Add(1)
			go b.routineDial(p)
		}
		c, changed := p.conn, p.changed
		b.peers.mu.Unlock()
		var wsem chan struct{} // nil, which blocks, until connected
		if c != nil {
			wsem = p.wsem
		}
		select {
		case wsem <- struct{}{}:
			b.peers.mu.Lock()
			err := p.err
			b.peers.mu.Unlock()
			if err == nil {
				err = tcp.Ended(ctx) // select picks at random among the ready
			}
			if err != nil {
				<-p.wsem
				return nil, nil, err
			}
			return p, c, nil
		case <-changed:
		case <-ctx.Done():
			return nil, nil, tcp.Ended(ctx)
		}
	}
}

// recv takes the next message from peer tagged tag, waiting for it.
func (b *Bootstrap) recv(ctx context.Context, peer int, tag uint32) ([]byte, error) {
	for {
		b.peers.mu.Lock()
		p, err := b.pairLocked(peer)
		if err != nil {
			b.peers.mu.Unlock()
			return nil, err
		}
		if q := p.inbox[tag]; len(q) > 0 {
			m := q[0]
			if q[0] = nil; len(q) == 1 {
				delete(p.inbox, tag)
			} else {
				p.inbox[tag] = q[1:]
			}
			p.queued--
			p.queuedLen -= len(m)
			b.peers.mu.Unlock()
			return m, nil
		}
		err, changed := p.err, p.changed
		b.peers.mu.Unlock()
		if err != nil {
			return nil, err
		}
		select {
		case <-changed:
		case <-ctx.Done():
			return nil, tcp.Ended(ctx)
		}
	}
}

// pairLocked returns peer's pair, made if new, or errClosed after Close
// began. b.peers.mu is held.
func (b *Bootstrap) pairLocked(peer int) (*pair, error) {
	if b.peers.closed {
		return nil, errClosed
	}
	p := b.peers.pairs[peer]
	if p == nil {
		ctx, cancel := context.WithCancel(context.Background())
		p = &pair{peer: peer, ctx: ctx, cancel: cancel, changed: make(chan struct{}), inbox: map[uint32][][]byte{},
			wsem: make(chan struct{}, 1), opSem: make(chan struct{}, 1)}
		b.peers.pairs[peer] = p
	}
	return p, nil
}

// changedLocked wakes whoever waits on p. b.peers.mu is held.
func (p *pair) changedLocked() {
	close(p.changed)
	p.changed = make(chan struct{})
}

// failLocked fails p for good with err, unless it has failed already: it
// closes p's connection (ending its routineRead and any write) and stops
// its routineDial. b.peers.mu is held.
func (b *Bootstrap) failLocked(p *pair, err error) {
	if p.err != nil {
		return
	}
	p.err = err
	p.cancel()
	if p.conn != nil {
		p.conn.Close()
	}
	p.changedLocked()
}

// installLocked makes c p's connection and starts its reader. p has not
// failed. b.peers.mu is held.
func (b *Bootstrap) installLocked(p *pair, c net.Conn) {
	p.conn = c
	b.peers.wg.Add(1)
	go b.routineRead(p, c)
	p.changedLocked()
}

// routineDial makes p's connection: it dials the peer's listener, or, told
// that the peer is connecting to this rank itself, waits for the listener
// to take that connection (takePeer). It fails p if neither comes within
// connectTimeout. It ends with the attempt, or when p fails.
func (b *Bootstrap) routineDial(p *pair) {
	defer b.peers.wg.Done()
	ctx, cancel := context.WithTimeout(p.ctx, connectTimeout)
	defer cancel()
	addr := b.table[p.peer]
	c, err := b.dialHello(ctx, frameP2PHello, b.me, addr, p.peer, fmt.Sprintf("connecting to rank %d at %v", p.peer, addr), tcp.DialUp)
	switch {
	case errors.Is(err, errCrossed):
		err = b.awaitCrossed(ctx, p)
	case errors.Is(err, tcp.ErrRefused):
		err = b.refusedLost(p.peer, addr)
	}
	b.peers.mu.Lock()
	defer b.peers.mu.Unlock()
	p.connecting = false
	switch {
	case p.err != nil: // failed meanwhile: Close, a loss
		if c != nil {
			c.Close()
		}
	case err != nil:
		b.failLocked(p, err)
		if !errors.Is(err, tcp.ErrRefused) && !errors.Is(err, errs.ErrPeerLost) && !b.peers.closed {
			b.peers.wg.Add(1)
			go b.routineProbe(p.peer) // a connection that failed: is its listener still there?
		}
	case c == nil: // crossed: the listener took the peer's connection
	case p.conn != nil: // the listener took one too, against the protocol
		c.Close()
		b.failLocked(p, fmt.Errorf("rank %d accepted this rank's connection while connecting to it: %w", p.peer, errFrame))
	default:
		b.installLocked(p, c)
	}
	p.changedLocked()
}

// awaitCrossed waits until p is connected (or has failed), the peer having
// refused this rank's connection because it connects to this rank itself.
func (b *Bootstrap) awaitCrossed(ctx context.Context, p *pair) error {
	for {
		b.peers.mu.Lock()
		done, changed := p.conn != nil || p.err != nil, p.changed
		b.peers.mu.Unlock()
		if done {
			return nil
		}
		select {
		case <-changed:
		case <-ctx.Done():
			return fmt.Errorf("rank %d said it was connecting to this rank, and its connection never came: %w", p.peer, tcp.Ended(ctx))
		}
	}
}

// takePeer takes c, whose p2p hello from rank peer proved the secret, as
// the pair's connection and writes it the accept; or returns why not, and
// the refusal's code. See the package doc for who keeps whose connection.
func (b *Bootstrap) takePeer(c net.Conn, peer int) (code byte, reason string) {
	if peer == b.rank {
		return refuseInvalid, fmt.Sprintf("rank %d is this rank", peer)
	}
	b.peers.mu.Lock()
	p, err := b.pairLocked(peer)
	switch {
	case err != nil:
		reason = "this rank is closing"
	case p.err != nil:
		code, reason = refusePeerLost, fmt.Sprintf("its connection with rank %d failed: %v", peer, p.err)
	case p.conn != nil:
		code, reason = refuseCrossed, fmt.Sprintf("rank %d is connected to rank %d already", b.rank, peer)
	case p.connecting && b.rank < peer:
		code, reason = refuseCrossed, fmt.Sprintf("rank %d is connecting to rank %d itself", b.rank, peer)
	}
	if reason != "" {
		b.peers.mu.Unlock()
		if code == 0 {
			code = refuseInvalid
		}
		return code, reason
	}
	p.wsem <- struct{}{} // free: nothing writes before the connection is installed
	c.SetReadDeadline(time.Time{})
	b.installLocked(p, c)
	b.peers.mu.Unlock()
	err = writeFrame(c, frameAccept)
	c.SetWriteDeadline(time.Time{})
	<-p.wsem
	if err != nil {
		b.peers.mu.Lock()
		b.failLocked(p, fmt.Errorf("accepting rank %d's connection: %v: %w", peer, err, errs.ErrPeerLost))
		b.peers.mu.Unlock()
	}
	return 0, ""
}

// routineRead reads p's connection c, queueing its messages for Recv,
// until it fails; it then fails p.
func (b *Bootstrap) routineRead(p *pair, c net.Conn) {
	defer b.peers.wg.Done()
	for {
		if err := b.readMsg(p, c); err != nil {
			b.peers.mu.Lock()
			b.failLocked(p, err)
			if errors.Is(err, errs.ErrPeerLost) && !b.peers.closed {
				b.peers.wg.Add(1)
				go b.routineProbe(p.peer) // ended by a rank gone, or by one that lives on?
			}
			b.peers.mu.Unlock()
			return
		}
	}
}

// readMsg reads one message from c and queues it in p, checking its length
// and the queue's room before it allocates it.
func (b *Bootstrap) readMsg(p *pair, c net.Conn) error {
	_, n, err := readHeaderOf(c, frameMsg)
	if err == nil && n < msgHeaderLen {
		err = fmt.Errorf("%w: message payload of %d bytes", errFrame, n)
	}
	if err == nil {
		b.peers.mu.Lock()
		full := p.queued >= maxQueuedMsgs || p.queuedLen+n-msgHeaderLen > maxQueuedBytes
		b.peers.mu.Unlock()
		if full {
			return fmt.Errorf("rank %d sent more than %d messages or %d bytes that this rank has not received: %w",
				p.peer, maxQueuedMsgs, maxQueuedBytes, errs.ErrInvalidArgument)
		}
	}
	var m []byte
	if err == nil {
		m, err = readPayload(c, frameMsg, n)
	}
	switch {
	case errors.Is(err, io.EOF):
		return fmt.Errorf("rank %d closed its point-to-point connection: %w", p.peer, errs.ErrPeerLost)
	case errors.Is(err, errFrame):
		return fmt.Errorf("rank %d sent a %w", p.peer, err)
	case err != nil:
		return fmt.Errorf("reading from rank %d: %v: %w", p.peer, err, errs.ErrPeerLost)
	}
	tag, blob, _ := decodeMsg(m)
	if tag == revokeTag {
		b.revokedBy(blob)
		return nil
	}
	b.peers.mu.Lock()
	p.inbox[tag] = append(p.inbox[tag], blob)
	p.queued++
	p.queuedLen += len(blob)
	p.changedLocked()
	b.peers.mu.Unlock()
	return nil
}

// lose fails the pair of rank, which the root reported lost, with err.
func (b *Bootstrap) lose(rank int, err error) {
	if rank < 0 || rank >= b.nranks || rank == b.rank {
		return
	}
	b.peers.mu.Lock()
	defer b.peers.mu.Unlock()
	if p, perr := b.pairLocked(rank); perr == nil {
		b.failLocked(p, err)
	}
}

// failPeers fails every pair with errClosed, and any pair asked for
// after. Their goroutines end soon after (Close waits for b.peers.wg).
func (b *Bootstrap) failPeers() {
	b.peers.mu.Lock()
	defer b.peers.mu.Unlock()
	b.peers.closed = true
	for _, p := range b.peers.pairs {
		b.failLocked(p, errClosed)
	}
}
