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
// a TCP ring (to rank+1, from rank−1) that AllGather and Barrier run on, a
// listener (listen.go), and the point-to-point connections of Send and
// Recv (p2p.go), made when first used.
//
// AllGather and Barrier calls are serialized; every rank must make the same
// calls in the same order. A call that fails leaves the ring out of step, so
// every later call fails too. Send, Recv, Pair, PeerLost, Rank, Size and
// Close may be called from any goroutine at any time; Close ends a call in
// progress.
type Bootstrap struct {
	id           UniqueID
	rank, nranks int
	root         net.Conn         // to the root; after Join only routineWatchRoot reads it
	local        netip.AddrPort   // root's local end, in localRanks while b is open
	joined       bool             // Join succeeded
	me           netip.AddrPort   // this rank's listener
	table        []netip.AddrPort // every rank's listener, by rank; set by Join before it returns
	lis          *listener        // nil until Join listens
	predc        chan accepted    // the ring predecessor's connection, as the listener took it; buffered 1
	next, prev   net.Conn         // the ring: to rank+1, from rank−1; nil when nranks == 1
	lostc        chan error       // PeerLost's, buffered 1
	watchDone    chan struct{}    // closed when routineWatchRoot returns; nil if it never started
	watching     sync.WaitGroup
	peers        peers // Send and Recv's connections

	opMu   sync.Mutex // serializes AllGather and Barrier; guards seq and broken
	seq    uint64     // calls made
	broken error      // why the ring is out of step

	mu         sync.Mutex              // guards the fields below
	cancelOp   context.CancelCauseFunc // of the Join, AllGather or Barrier in progress
	lost       error                   // the first loss reported
	lostDone   bool                    // lostc is closed
	closing    bool
	prevTaken  bool   // the listener took the ring predecessor's connection
	lostRanks  []bool // the ranks known gone, by rank (liveness.go)
	rootHosts  []int  // the ranks in the root's process (a hosts frame)
	revoked    error  // why the communicator was revoked (revoke.go); nil if it was not
	revokeSent bool   // this rank's Revoke told the others

	revokedc chan struct{} // closed when revoked is set
	lostMore chan struct{} // closed, and replaced, when lostRanks grows; guarded by mu

	quit     context.Context // ended by Close: bounds the probes of liveness.go
	stopQuit context.CancelFunc

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
	b := newBootstrap(id, nranks, rank)
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

// newBootstrap returns rank's Bootstrap before it joins.
func newBootstrap(id UniqueID, nranks, rank int) *Bootstrap {
	quit, stop := context.WithCancel(context.Background())
	return &Bootstrap{id: id, rank: rank, nranks: nranks, lostc: make(chan error, 1), reports: make(chan []Progress, 1),
		predc: make(chan accepted, 1), peers: peers{pairs: map[int]*pair{}}, lostRanks: make([]bool, nranks),
		revokedc: make(chan struct{}), lostMore: make(chan struct{}), quit: quit, stopQuit: stop}
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
// that, and closes every connection and its listener; a call in progress
// (Send and Recv included) fails with errs.ErrAborted. If this process runs the root, Close (of a Bootstrap that
// Join returned) then waits until the ranks of other processes have left or
// been lost, up to rootLinger (10 s): they may still be finishing a
// collective that this rank has finished, and the root's end with this
// process would look to them like a loss. No goroutine of b outlives Close.
// Idempotent; it always returns nil.
func (b *Bootstrap) Close() error {
	b.closeOnce.Do(func() {
		b.stopQuit()
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
		b.failPeers() // first, so that a connection the listener is handing over fails with errClosed too
		if b.lis != nil {
			b.lis.close()
		}
		b.peers.wg.Wait()
		select { // taken by the listener, not by Join
		case a := <-b.predc:
			a.c.Close()
		default:
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
	// The listener listens on the address this host reaches the root from,
	// which the other ranks can then reach too.
	local := b.root.LocalAddr().(*net.TCPAddr).AddrPort().Addr().Unmap()
	ln, err := net.ListenTCP("tcp", net.TCPAddrFromAddrPort(netip.AddrPortFrom(local, 0)))
	if err != nil {
		return fmt.Errorf("listener: %w", err)
	}
	b.me = ln.Addr().(*net.TCPAddr).AddrPort()
	b.listen(ln)
	table, err := b.meet(op, b.me)
	if err != nil {
		return err
	}
	b.table = table
	b.root.SetDeadline(time.Time{})
	b.watchDone = make(chan struct{})
	b.watching.Add(1)
	go b.routineWatchRoot()
	return b.formRing(op, b.me, table)
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
			b.rootLost(addr, why)
			return
		}
		switch t {
		case frameStatus: // sent before the table, read after it: stale
		case frameHosts:
			hosts, err := decodeRanks(p)
			if err == nil && len(hosts) > 0 && hosts[len(hosts)-1] >= b.nranks {
				err = fmt.Errorf("%w: hosts %v beyond %d ranks", errFrame, hosts, b.nranks)
			}
			if err != nil {
				b.report(fmt.Errorf("bootstrap root at %s lost: it sent a bad hosts frame: %v: %w", addr, err, errs.ErrPeerLost))
				return
			}
			b.mu.Lock()
			b.rootHosts = hosts
			b.mu.Unlock()
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
				b.markLost(rank)
				b.report(lostError(rank, reason))
				b.lose(rank, lostError(rank, reason))
			} else {
				b.report(fmt.Errorf("bootstrap root at %s lost: %v: %w", addr, err, errs.ErrPeerLost))
			}
		default:
			b.report(fmt.Errorf("bootstrap root at %s lost: it sent an unexpected %v frame: %w", addr, t, errs.ErrPeerLost))
		}
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
	case b.revoked != nil:
		return nil, nil, b.revoked
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
	return errs.At("bootstrap "+op, b.rank, err)
}

// wrapPeer is wrap for a call with a peer.
func (b *Bootstrap) wrapPeer(op string, peer int, err error) error {
	e := errs.At("bootstrap "+op, b.rank, err)
	e.Peer = peer
	return e
}

// lostError is the error of rank's loss, as the root reported it.
func lostError(rank int, reason string) error {
	return fmt.Errorf("rank %d lost: %s: %w", rank, reason, errs.ErrPeerLost)
}

// refused is the error of a refusal by who, with the sentinel its code
// names.
func refused(who string, code byte, reason string) error {
	sentinel := errs.ErrInvalidArgument
	switch code {
	case refusePeerLost:
		sentinel = errs.ErrPeerLost
	case refuseCrossed:
		sentinel = errCrossed
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
