package bootstrap

import (
	"context"
	"encoding/binary"
	"errors"
	"fmt"
	"io"
	"net"
	"net/netip"
	"sync"
	"sync/atomic"
	"time"

	"github.com/ringo-ccl/ringo/internal/errs"
	"github.com/ringo-ccl/ringo/internal/tcp"
)

const (
	closeTimeout = time.Second            // Close waits this long for the root to take its bye
	rootLinger   = 10 * time.Second       // Close waits this long for other processes' ranks to leave a root of this process
	lossGrace    = 500 * time.Millisecond // a failed connection waits this long for the root to name a lost rank
)

var errClosed = fmt.Errorf("bootstrap closed: %w", errs.ErrAborted)

// Bootstrap is one rank's membership in a communicator's bootstrap: a TCP
// connection to the root, kept open so that the root can report lost ranks,
// and a TCP ring (to rank+1, from rank−1) that AllGather and Barrier run on.
//
// AllGather and Barrier calls are serialized; every rank must make the same
// calls in the same order. A call that fails leaves the ring out of step, so
// every later call fails too. PeerLost, Rank, Size and Close may be called
// from any goroutine at any time; Close ends a call in progress.
type Bootstrap struct {
	id           UniqueID
	rank, nranks int
	root         net.Conn       // to the root; after Join only routineWatchRoot reads it
	local        netip.AddrPort // root's local end, in localRanks while b is open
	joined       bool           // Join succeeded
	next, prev   net.Conn       // the ring: to rank+1, from rank−1; nil when nranks == 1
	lostc        chan error     // PeerLost's, buffered 1
	watchDone    chan struct{}  // closed when routineWatchRoot returns; nil if it never started
	watching     sync.WaitGroup

	opMu   sync.Mutex // serializes AllGather and Barrier; guards seq and broken
	seq    uint64     // calls made
	broken error      // why the ring is out of step

	mu       sync.Mutex              // guards the fields below
	cancelOp context.CancelCauseFunc // of the Join, AllGather or Barrier in progress
	lost     error                   // the first loss reported
	lostDone bool                    // lostc is closed
	closing  bool

	closeOnce sync.Once

	rootMu   sync.Mutex    // serializes writes to root after Join
	progress atomic.Uint64 // SetProgress's: seq<<1 | finished
	queryMu  sync.Mutex    // serializes Query
	reports  chan []Progress
}

// Join connects rank (of nranks) to the root of id, waits until all nranks
// ranks have joined, then forms the bootstrap ring (each rank connects to its
// successor rank+1 and accepts its predecessor). It returns when this rank
// is connected on both sides.
//
// Every wait is bounded by ctx (and, without a deadline, by its
// cancellation only); dialing the root retries with backoff, so ranks may
// start before the root. Errors (all *errs.Error):
//   - rank outside [0, nranks), nranks < 1, a malformed id, or a refusal by
//     the root (wrong secret, duplicate rank, nranks differing from the other
//     ranks'): errs.ErrInvalidArgument, saying why;
//   - ctx ends first: errs.ErrTimeout (deadline) or ctx's error, naming the
//     ranks that never joined, or the root's address if it never answered;
//   - a rank that joined died (its connection closed without Close) before
//     setup completed, or the root died: errs.ErrPeerLost naming it.
func Join(ctx context.Context, id UniqueID, nranks, rank int) (*Bootstrap, error) {
	if nranks < 1 || nranks > maxRanks {
		return nil, errs.Invalid("bootstrap join", rank, "nranks %d out of range [1, %d]", nranks, maxRanks)
	}
	if rank < 0 || rank >= nranks {
		return nil, errs.Invalid("bootstrap join", rank, "rank %d out of range [0, %d)", rank, nranks)
	}
	b := &Bootstrap{id: id, rank: rank, nranks: nranks, lostc: make(chan error, 1), reports: make(chan []Progress, 1)}
	if _, err := ParseUniqueID(id[:]); err != nil {
		return nil, b.wrap("join", err)
	}
	if err := b.join(ctx); err != nil {
		b.Close()
		return nil, b.wrap("join", err)
	}
	b.joined = true
	return b, nil
}

// Rank returns this rank.
func (b *Bootstrap) Rank() int { return b.rank }

// Size returns the number of ranks.
func (b *Bootstrap) Size() int { return b.nranks }

// PeerLost returns a channel that receives, once, the error describing the
// first lost rank, and is then closed. The error wraps errs.ErrPeerLost and
// names the rank ("rank 2 lost: its bootstrap connection closed without
// Close") or the root ("bootstrap root at 10.0.0.1:4242 lost: …"). Close
// closes the channel without a value if no loss came first.
func (b *Bootstrap) PeerLost() <-chan error { return b.lostc }

// Close leaves gracefully: it tells the root (so that this rank's departure
// is not reported as a loss), waits up to a second for the root to take
// that, and closes every connection; a call in progress fails with
// errs.ErrAborted. If this process runs the root, Close (of a Bootstrap that
// Join returned) then waits until the ranks of other processes have left or
// been lost, up to rootLinger (10 s): they may still be finishing a
// collective that this rank has finished, and the root's end with this
// process would look to them like a loss. No goroutine of b outlives Close.
// Idempotent; it always returns nil.
func (b *Bootstrap) Close() error {
	b.closeOnce.Do(func() {
		b.mu.Lock()
		b.closing = true
		if b.cancelOp != nil {
			b.cancelOp(errClosed)
		}
		if !b.lostDone {
			b.lostDone = true
			close(b.lostc)
		}
		b.mu.Unlock()
		if b.root != nil {
			b.sayBye()
		}
		for _, c := range []net.Conn{b.next, b.prev} {
			if c != nil {
				c.Close()
			}
		}
		b.watching.Wait()
		if b.root != nil {
			localRanks.Delete(b.local)
			rootsMu.Lock()
			r := roots[b.id]
			rootsMu.Unlock()
			if r != nil && b.joined {
				r.awaitOthers(rootLinger)
			}
		}
	})
	return nil
}

// localRanks holds the local ends of the root connections of this
// process's open Bootstraps: by them a root in this process tells its own
// ranks from those of other processes (awaitOthers).
var localRanks sync.Map // netip.AddrPort → struct{}

// isLocalRank reports whether the rank at the other end of a root's
// connection c is an open Bootstrap of this process.
func isLocalRank(c net.Conn) bool {
	a, ok := c.RemoteAddr().(*net.TCPAddr)
	if !ok {
		return false
	}
	ap := a.AddrPort()
	_, ok = localRanks.Load(netip.AddrPortFrom(ap.Addr().Unmap(), ap.Port()))
	return ok
}

// sayBye sends bye on the root connection, waits until the root closes its
// side (it has then read the bye), and closes the connection.
func (b *Bootstrap) sayBye() {
	c := b.root
	b.rootMu.Lock()
	c.SetWriteDeadline(time.Now().Add(closeTimeout))
	err := writeFrame(c, frameBye)
	b.rootMu.Unlock()
	if err == nil {
		if tc, ok := c.(*net.TCPConn); ok {
			tc.CloseWrite()
		}
		if b.watchDone != nil {
			select {
			case <-b.watchDone:
			case <-time.After(closeTimeout):
			}
		} else {
			c.SetReadDeadline(time.Now().Add(closeTimeout))
			io.Copy(io.Discard, c)
		}
	}
	c.Close()
}

// join runs Join's protocol.
func (b *Bootstrap) join(ctx context.Context) error {
	op, cancel, err := b.begin(ctx)
	if err != nil {
		return err
	}
	defer b.end(cancel)
	addr := b.id.Addr()
	if b.root, err = tcp.Dial(op, addr); err != nil {
		return fmt.Errorf("bootstrap root at %s did not answer: %w", addr, err)
	}
	l := b.root.LocalAddr().(*net.TCPAddr).AddrPort()
	b.local = netip.AddrPortFrom(l.Addr().Unmap(), l.Port())
	localRanks.Store(b.local, struct{}{})
	// The ring listener listens on the address this host reaches the root
	// from, which the other ranks can then reach too.
	local := b.root.LocalAddr().(*net.TCPAddr).AddrPort().Addr().Unmap()
	ln, err := net.ListenTCP("tcp", net.TCPAddrFromAddrPort(netip.AddrPortFrom(local, 0)))
	if err != nil {
		return fmt.Errorf("ring listener: %w", err)
	}
	defer ln.Close()
	me := ln.Addr().(*net.TCPAddr).AddrPort()
	table, err := b.meet(op, me)
	if err != nil {
		return err
	}
	b.root.SetDeadline(time.Time{})
	b.watchDone = make(chan struct{})
	b.watching.Add(1)
	go b.routineWatchRoot()
	return b.formRing(op, ln, me, table)
}

// meet says hello to the root and waits for the table of ring listener
// addresses, keeping the latest list of missing ranks for the error.
func (b *Bootstrap) meet(op context.Context, me netip.AddrPort) ([]netip.AddrPort, error) {
	addr := b.id.Addr()
	release := tcp.Bind(op, b.root)
	defer release()
	h := hello{secret: b.id.secret(), rank: uint32(b.rank), nranks: uint32(b.nranks), ring: me}
	if err := writeFrame(b.root, frameHello, appendHello(nil, h)); err != nil {
		return nil, ioFail(op, "saying hello to the bootstrap root at "+addr, err)
	}
	var missing *status
	for {
		t, p, err := readFrame(b.root)
		var stop error
		if err != nil {
			stop = tcp.EndedBy(op, err)
		}
		switch {
		case stop != nil && missing != nil:
			return nil, fmt.Errorf("ranks %v never joined: %w", missing, stop)
		case stop != nil:
			return nil, fmt.Errorf("the bootstrap root at %s accepted the connection but sent nothing: %w", addr, stop)
		case errors.Is(err, io.EOF):
			return nil, fmt.Errorf("bootstrap root at %s lost: it closed the connection: %w", addr, errs.ErrPeerLost)
		case err != nil:
			return nil, fmt.Errorf("reading from the bootstrap root at %s: %w", addr, err)
		}
		switch t {
		case frameStatus:
			st, err := decodeStatus(p)
			if err != nil {
				return nil, fmt.Errorf("bootstrap root at %s: %w", addr, err)
			}
			missing = &st
		case frameTable:
			table, err := decodeTable(p)
			if err == nil && len(table) != b.nranks {
				err = fmt.Errorf("%w: table of %d ranks, want %d", errFrame, len(table), b.nranks)
			}
			if err != nil {
				return nil, fmt.Errorf("bootstrap root at %s: %w", addr, err)
			}
			return table, nil
		case frameRefuse:
			code, reason, err := decodeRefuse(p)
			if err != nil {
				return nil, fmt.Errorf("bootstrap root at %s: %w", addr, err)
			}
			return nil, refused("bootstrap root at "+addr, code, reason)
		case frameLost:
			rank, reason, err := decodeLost(p)
			if err != nil {
				return nil, fmt.Errorf("bootstrap root at %s: %w", addr, err)
			}
			return nil, lostError(rank, reason)
		default:
			return nil, fmt.Errorf("bootstrap root at %s sent an unexpected %v frame: %w", addr, t, errFrame)
		}
	}
}

// routineWatchRoot reads the root connection from the end of the root's
// part of Join until it closes, turning a lost frame or the root's death
// into the PeerLost error. Close ends it (by closing the connection).
func (b *Bootstrap) routineWatchRoot() {
	defer b.watching.Done()
	defer close(b.watchDone)
	addr := b.id.Addr()
	for {
		t, p, err := readFrame(b.root)
		if err != nil {
			why := "it closed the connection"
			if !errors.Is(err, io.EOF) {
				why = err.Error()
			}
			b.report(fmt.Errorf("bootstrap root at %s lost: %s: %w", addr, why, errs.ErrPeerLost))
			return
		}
		switch t {
		case frameStatus: // sent before the table, read after it: stale
		case frameAsk:
			if len(p) != 4 {
				b.report(fmt.Errorf("bootstrap root at %s lost: it sent a malformed ask: %w", addr, errs.ErrPeerLost))
				return
			}
			b.writeRoot(frameProgress, appendAnswer(nil, binary.BigEndian.Uint32(p), b.myProgress()))
		case frameReport:
			if ps, err := decodeReport(p); err == nil {
				select {
				case b.reports <- ps:
				default: // nobody asked any more
				}
			}
		case frameLost:
			if rank, reason, err := decodeLost(p); err == nil {
				b.report(lostError(rank, reason))
			} else {
				b.report(fmt.Errorf("bootstrap root at %s lost: %v: %w", addr, err, errs.ErrPeerLost))
			}
		default:
			b.report(fmt.Errorf("bootstrap root at %s lost: it sent an unexpected %v frame: %w", addr, t, errs.ErrPeerLost))
		}
	}
}

// SetProgress records this rank's place in its communicator's collectives,
// which it reports when a stalled rank's Query asks: seq collectives
// entered, the last one returned when finished. It is a single atomic
// store, cheap enough for every collective.
func (b *Bootstrap) SetProgress(seq uint64, finished bool) {
	v := seq << 1
	if finished {
		v |= 1
	}
	b.progress.Store(v)
}

func (b *Bootstrap) myProgress() Progress {
	v := b.progress.Load()
	return NewProgress(b.rank, v>>1, v&1 == 1)
}

// Query asks the root for every rank's progress (SetProgress), for the
// report of a collective that timed out: each rank's background reader
// answers, even while the rank itself is busy elsewhere. Ranks that do not
// answer within a second are Silent, ranks gone are Gone. It waits at most
// until ctx ends.
func (b *Bootstrap) Query(ctx context.Context) ([]Progress, error) {
	if b.nranks == 1 {
		return []Progress{b.myProgress()}, nil
	}
	b.queryMu.Lock()
	defer b.queryMu.Unlock()
	select {
	case <-b.reports: // a stale report of an earlier query that gave up
	default:
	}
	if err := b.writeRoot(frameQuery, nil); err != nil {
		return nil, fmt.Errorf("bootstrap query: %w", err)
	}
	select {
	case ps := <-b.reports:
		return ps, nil
	case <-b.watchDone:
		return nil, fmt.Errorf("bootstrap query: the root connection is closed: %w", errs.ErrPeerLost)
	case <-ctx.Done():
		return nil, fmt.Errorf("bootstrap query: %w", context.Cause(ctx))
	}
}

// writeRoot writes one frame to the root.
func (b *Bootstrap) writeRoot(t frameType, payload []byte) error {
	b.rootMu.Lock()
	defer b.rootMu.Unlock()
	b.root.SetWriteDeadline(time.Now().Add(rootWriteTimeout))
	return writeFrame(b.root, t, payload)
}

// report makes err the loss PeerLost delivers and ends the call in
// progress with it, unless a loss came first or b is closing.
func (b *Bootstrap) report(err error) {
	b.mu.Lock()
	defer b.mu.Unlock()
	if b.closing || b.lost != nil {
		return
	}
	b.lost = err
	if b.cancelOp != nil {
		b.cancelOp(err)
	}
	b.lostDone = true
	b.lostc <- err
	close(b.lostc)
}

// formRing connects to the successor and accepts the predecessor.
func (b *Bootstrap) formRing(op context.Context, ln *net.TCPListener, me netip.AddrPort, table []netip.AddrPort) error {
	if b.nranks == 1 {
		return nil
	}
	next, prev := (b.rank+1)%b.nranks, (b.rank+b.nranks-1)%b.nranks
	ring, cancel := context.WithCancelCause(op)
	defer cancel(nil)
	type accepted struct {
		c   net.Conn
		err error
	}
	ac := make(chan accepted, 1)
	go func() {
		c, err := b.acceptPredecessor(ring, ln, prev)
		ac <- accepted{c, err}
	}()
	nc, err := b.dialSuccessor(ring, me, table[next], next)
	if err != nil {
		cancel(err)
	}
	a := <-ac
	if err == nil {
		err = a.err
	}
	if err != nil {
		for _, c := range []net.Conn{nc, a.c} {
			if c != nil {
				c.Close()
			}
		}
		return err
	}
	b.next, b.prev = nc, a.c
	return nil
}

// dialSuccessor connects to rank next's ring listener at addr and presents
// this rank's ring hello.
func (b *Bootstrap) dialSuccessor(ctx context.Context, me, addr netip.AddrPort, next int) (net.Conn, error) {
	what := fmt.Sprintf("connecting to rank %d (successor) at %v", next, addr)
	c, err := tcp.Dial(ctx, addr.String())
	if err != nil {
		return nil, fmt.Errorf("%s: %w", what, err)
	}
	release := tcp.Bind(ctx, c)
	defer release()
	h := hello{secret: b.id.secret(), rank: uint32(b.rank), nranks: uint32(b.nranks), ring: me}
	err = writeFrame(c, frameRingHello, appendHello(nil, h))
	var t frameType
	var p []byte
	if err == nil {
		t, p, err = readFrame(c)
	}
	if err == nil {
		switch t {
		case frameAccept:
			return c, nil
		case frameRefuse:
			var code byte
			var reason string
			if code, reason, err = decodeRefuse(p); err == nil {
				err = refused(fmt.Sprintf("rank %d", next), code, reason)
			}
		default:
			err = fmt.Errorf("%w: got a %v frame", errFrame, t)
		}
	}
	c.Close()
	return nil, ioFail(ctx, what, err)
}

// maxPendingRingHellos bounds the connections a ring listener vets at once
// (a helloGate, as the root's).
const maxPendingRingHellos = 16

// acceptPredecessor accepts connections on ln until one presents the secret
// and rank prev, refusing the others, each vetted on its own goroutine so
// that a silent one holds up nothing: at most maxPendingRingHellos at once,
// each for at most helloDeadline (helloGate). It closes ln and returns once
// one is accepted or ctx ends, with every goroutine it started ended.
func (b *Bootstrap) acceptPredecessor(ctx context.Context, ln *net.TCPListener, prev int) (net.Conn, error) {
	release := tcp.Bind(ctx, ln)
	defer release()
	var (
		wg      sync.WaitGroup
		gate    = newHelloGate(maxPendingRingHellos)
		quit    = make(chan struct{}) // closed when accepting ends
		mu      sync.Mutex            // guards the fields below
		pending = map[net.Conn]bool{} // being vetted or refused
		shut    bool                  // no more vetting: close what Accept returns
		won     net.Conn
		wonErr  error
		done    = make(chan struct{}) // closed when won is set
	)
	vet := func(c net.Conn) {
		defer wg.Done()
		defer gate.leave(c)
		reason := b.vetPredecessor(ctx, c, prev)
		if reason == "" && !gate.claim(c) {
			reason = "closed to make room" // by the gate, as the hello came in
		}
		mu.Lock()
		if reason == "" && won != nil {
			reason = fmt.Sprintf("rank %d is already connected", prev)
		}
		if reason == "" {
			won = c
			delete(pending, c)
			close(done)
		}
		mu.Unlock()
		if reason != "" {
			refuse(c, refuseInvalid, reason)
			mu.Lock()
			delete(pending, c)
			mu.Unlock()
			return
		}
		err := writeFrame(c, frameAccept)
		mu.Lock()
		wonErr = err
		mu.Unlock()
	}
	wg.Add(1)
	go func() {
		defer wg.Done()
		for {
			if !gate.enter(quit) {
				return
			}
			c, err := ln.Accept()
			if err != nil {
				gate.leave(nil)
				return // ln closed, or ctx ended (deadline)
			}
			tcp.Tune(c)
			mu.Lock()
			if shut {
				mu.Unlock()
				gate.leave(nil)
				c.Close()
				continue
			}
			gate.add(c)
			pending[c] = true
			wg.Add(1)
			mu.Unlock()
			go vet(c)
		}
	}()
	select {
	case <-done:
	case <-ctx.Done():
	}
	close(quit)
	ln.Close()
	mu.Lock()
	shut = true
	for c := range pending {
		c.Close()
	}
	mu.Unlock()
	wg.Wait()
	what := fmt.Sprintf("waiting for rank %d (predecessor) to connect", prev)
	switch {
	case won == nil:
		return nil, fmt.Errorf("%s: %w", what, tcp.Ended(ctx))
	case wonErr != nil:
		won.Close()
		return nil, ioFail(ctx, what, wonErr)
	}
	return won, nil
}

// vetPredecessor reads c's ring hello (readHello, within helloDeadline) and
// returns why it is refused, or "" if it comes from rank prev of this
// communicator.
func (b *Bootstrap) vetPredecessor(ctx context.Context, c net.Conn, prev int) string {
	dl := time.Now().Add(helloDeadline)
	if d, ok := ctx.Deadline(); ok && d.Before(dl) {
		dl = d
	}
	c.SetDeadline(dl)
	secret := b.id.secret()
	h, err := readHello(c, frameRingHello, &secret)
	switch {
	case errors.Is(err, errWrongSecret):
		return "wrong secret"
	case err != nil:
		return fmt.Sprintf("no valid ring hello: %v", err)
	case int(h.nranks) != b.nranks:
		return fmt.Sprintf("nranks %d differs from this communicator's %d", h.nranks, b.nranks)
	case int(h.rank) != prev:
		return fmt.Sprintf("rank %d is not the ring predecessor of rank %d (rank %d is)", h.rank, b.rank, prev)
	}
	return ""
}

// AllGather sends blob (at most 1 MiB) and returns every rank's blob indexed
// by rank (its own, copied, included), moving them around the ring in n−1
// steps. Every rank must call it the same number of times, in the same
// order (with Barrier). Errors: a blob too large, or ranks whose calls do
// not match: errs.ErrInvalidArgument; ctx's end: errs.ErrTimeout or ctx's
// error; a lost rank: errs.ErrPeerLost; after Close: errs.ErrAborted.
func (b *Bootstrap) AllGather(ctx context.Context, blob []byte) ([][]byte, error) {
	if len(blob) > maxBlobBytes {
		return nil, errs.Invalid("bootstrap allgather", b.rank, "blob of %d bytes exceeds %d", len(blob), maxBlobBytes)
	}
	out, err := b.exchange(ctx, frameGather, blob)
	if err != nil {
		return nil, b.wrap("allgather", err)
	}
	return out, nil
}

// Barrier returns once every rank has entered it. It is an AllGather of
// nothing, with AllGather's errors.
func (b *Bootstrap) Barrier(ctx context.Context) error {
	if _, err := b.exchange(ctx, frameBarrier, nil); err != nil {
		return b.wrap("barrier", err)
	}
	return nil
}

// exchange runs one ring all-gather with frames of type t. In step s a rank
// sends the blob of rank−s to its successor while receiving that of rank−s−1
// from its predecessor, so that neither side's send can block the ring.
func (b *Bootstrap) exchange(ctx context.Context, t frameType, blob []byte) ([][]byte, error) {
	b.opMu.Lock()
	defer b.opMu.Unlock()
	if b.broken != nil {
		return nil, b.broken
	}
	op, cancel, err := b.begin(ctx)
	if err != nil {
		return nil, err
	}
	defer b.end(cancel)
	b.seq++
	n := b.nranks
	out := make([][]byte, n)
	out[b.rank] = append([]byte{}, blob...)
	if n == 1 {
		return out, nil
	}
	release := tcp.Bind(op, b.next, b.prev)
	defer release()
	prev, next := (b.rank+n-1)%n, (b.rank+1)%n
	for s := range n - 1 {
		send, recv := (b.rank-s+n)%n, (b.rank-s-1+2*n)%n
		werr := make(chan error, 1)
		go func(seq uint64) { werr <- writeFrame(b.next, t, gatherHeader(seq, send), out[send]) }(b.seq)
		ioErr, err := b.receive(op, t, s, recv, prev, out)
		if ioErr {
			b.next.SetWriteDeadline(tcp.ALongTimeAgo) // the ring is broken: do not wait for the send
		}
		if werr := <-werr; err == nil && werr != nil {
			err = ioFail(op, fmt.Sprintf("step %d: sending rank %d's blob to rank %d", s, send, next), werr)
		}
		if err != nil {
			b.broken = fmt.Errorf("an earlier AllGather or Barrier failed, leaving the ring out of step: %w", err)
			return nil, err
		}
	}
	return out, nil
}

// receive reads step s's frame from rank prev into out[recv]. ioErr reports
// an I/O failure, as opposed to a frame that does not fit (after which this
// rank's own send still goes out, so that its successor sees the mismatch
// too).
func (b *Bootstrap) receive(op context.Context, t frameType, s, recv, prev int, out [][]byte) (ioErr bool, err error) {
	what := fmt.Sprintf("step %d: receiving rank %d's blob from rank %d", s, recv, prev)
	rt, p, err := readFrame(b.prev)
	if errors.Is(err, io.EOF) {
		err = fmt.Errorf("rank %d closed its ring connection: %w", prev, errs.ErrPeerLost)
	}
	if err != nil {
		return true, ioFail(op, what, err)
	}
	if rt != t {
		return false, fmt.Errorf("%s: got a %v frame, expected a %v: the ranks called AllGather and Barrier in different orders: %w",
			what, rt, t, errs.ErrInvalidArgument)
	}
	seq, origin, blob, err := decodeGather(p)
	if err != nil {
		return false, fmt.Errorf("%s: %w", what, err)
	}
	if seq != b.seq || origin != recv {
		return false, fmt.Errorf("%s: got rank %d's blob of call %d, expected call %d: the ranks made different calls: %w",
			what, origin, seq, b.seq, errs.ErrInvalidArgument)
	}
	out[recv] = blob
	return false, nil
}

// begin registers a call, whose context a loss or Close cancels with their
// error as cause; end unregisters it.
func (b *Bootstrap) begin(ctx context.Context) (context.Context, context.CancelCauseFunc, error) {
	b.mu.Lock()
	defer b.mu.Unlock()
	switch {
	case b.closing:
		return nil, nil, errClosed
	case b.lost != nil:
		return nil, nil, b.lost
	}
	op, cancel := context.WithCancelCause(ctx)
	b.cancelOp = cancel
	return op, cancel, nil
}

func (b *Bootstrap) end(cancel context.CancelCauseFunc) {
	b.mu.Lock()
	b.cancelOp = nil
	b.mu.Unlock()
	cancel(nil)
}

func (b *Bootstrap) wrap(op string, err error) error {
	return &errs.Error{Op: "bootstrap " + op, Rank: b.rank, Peer: -1, Channel: -1, Step: -1, Err: err}
}

// lostError is the error of rank's loss, as the root reported it.
func lostError(rank int, reason string) error {
	return fmt.Errorf("rank %d lost: %s: %w", rank, reason, errs.ErrPeerLost)
}

// refused is the error of a refusal by who, with the sentinel its code
// names.
func refused(who string, code byte, reason string) error {
	sentinel := errs.ErrInvalidArgument
	if code == refusePeerLost {
		sentinel = errs.ErrPeerLost
	}
	return fmt.Errorf("%s refused this rank: %s: %w", who, reason, sentinel)
}

// ioFail describes an I/O failure while doing what: by why ctx ended if it
// did (its deadline, its cancellation or a loss is what made the I/O fail),
// else by err. A connection failing under a live ctx is most likely a rank
// dying or giving up, so ioFail first waits up to lossGrace for the root to
// report a loss, which names the rank to blame.
func ioFail(ctx context.Context, what string, err error) error {
	if !errors.Is(err, errs.ErrInvalidArgument) && !errors.Is(err, errFrame) && ctx.Err() == nil {
		t := time.NewTimer(lossGrace)
		select {
		case <-ctx.Done():
		case <-t.C:
		}
		t.Stop()
	}
	if e := tcp.EndedBy(ctx, err); e != nil {
		return fmt.Errorf("%s: %w", what, e)
	}
	return fmt.Errorf("%s: %w", what, err)
}
