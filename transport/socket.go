package transport

import (
	"context"
	"crypto/rand"
	"encoding/binary"
	"errors"
	"fmt"
	"hash/crc32"
	"io"
	"math"
	"net"
	"net/netip"
	"strconv"
	"sync"
	"syscall"
	"time"

	"github.com/ringo-ccl/ringo/internal/env"
	"github.com/ringo-ccl/ringo/internal/errs"
	"github.com/ringo-ccl/ringo/internal/tcp"
	"github.com/ringo-ccl/ringo/ring"
)

// The socket wire: a net connection's posts over TCP, on several sockets.
//
// A connection has NCCL_SOCKET_NTHREADS × NCCL_NSOCKS_PERTHREAD sockets
// (at most 64, as NCCL), each served by its own goroutine on both ends —
// Go's poller plays the part of NCCL's helper threads. Socket 0 carries
// every post's header and credits back; a post of at least 2×stripeMin
// bytes is striped across as many sockets as it has stripeMin pieces, each
// piece behind a part header on its socket, read straight into the
// receiver's slots. Every header carries a magic number and a CRC-32, so a
// corrupt or truncated header is an error, never data.
//
//	post header (socket 0, 32 B):  magic u32 | proto u8 | skip u8 | slots u8 | 0 u8 |
//	                               step u64 | bytes u32 | parts u32 | 0 u32 | crc u32
//	part header (socket i, 16 B):  magic u32 | step u32 (low bits) | length u32 | crc u32
//	credit (socket 0, back, 16 B): magic u32 | crc u32 | head u64
//	hello (every socket, dialer → listener, 40 B):
//	                               magic u32 | token [16] | from u32 | channel u32 | socket u32 | sockets u32 | crc u32
//
// Integers are little endian. A post of at most inlineMax bytes goes out
// with its header in one write. Closing an end sends a goodbye — a post
// header or credit whose magic is magicBye — so the other end's wire
// reports ErrWireClosed rather than a lost peer.
const (
	magicPost   = 0x52474e50 // "PNGR"
	magicPart   = 0x52474e44
	magicCredit = 0x52474e43
	magicHello  = 0x52474e48
	magicAccept = 0x52474e41
	magicBye    = 0x52474e42 // in place of a post or a credit: the end is closing

	postHdrLen   = 32
	partHdrLen   = 16
	creditLen    = 16
	sockHelloLen = 40
	inlineMax    = 4096
	stripeMin    = 64 << 10 // NCCL's smallest per-socket piece
	maxSockets   = 64       // NCCL's MAX_SOCKETS
	maxThreads   = 16       // NCCL's MAX_THREADS
	sockTokenLen = 16
)

var (
	envSocketThreads = env.Var{Name: "SOCKET_NTHREADS", NCCL: true}
	envSocksPer      = env.Var{Name: "NSOCKS_PERTHREAD", NCCL: true}
)

// defaultSockets is the sockets per connection when neither variable is
// set (NCCL's default is 1; see BENCHMARKS.md for why ringo opens more).
const defaultSockets = 4

// SocketsPerConn returns the sockets a connection opens: the product of
// NCCL_SOCKET_NTHREADS and NCCL_NSOCKS_PERTHREAD, either defaulting to 1
// when only the other is set (0 counts as 1: NCCL's main thread and
// socket), at most 64; defaultSockets when neither is set. As NCCL, a
// thread count above 16 is clamped to 16 and a product above 64 lowers
// NCCL_NSOCKS_PERTHREAD to fit, with a warning; text or a negative count
// is an error naming the variable.
func SocketsPerConn() (int, error) {
	_, _, tset := envSocketThreads.Lookup()
	_, _, sset := envSocksPer.Lookup()
	if !tset && !sset {
		return defaultSockets, nil
	}
	threads, err := envSocketThreads.Int(1, 0, math.MaxInt32)
	if err != nil {
		return 0, err
	}
	socks, err := envSocksPer.Int(1, 0, math.MaxInt32)
	if err != nil {
		return 0, err
	}
	if threads > maxThreads {
		v, name, _ := envSocketThreads.Lookup()
		env.Fallback(name, v, strconv.Itoa(maxThreads), "more than %d threads", maxThreads)
		threads = maxThreads
	}
	threads, socks = max(threads, 1), max(socks, 1)
	if threads*socks > maxSockets {
		v, name, _ := envSocksPer.Lookup()
		env.Fallback(name, v, strconv.Itoa(maxSockets/threads), "%d threads × %d sockets exceed %d sockets per connection", threads, socks, maxSockets)
		socks = maxSockets / threads
	}
	return threads * socks, nil
}

// ConnectSockets makes the socket wires of this rank's (ex.Rank()) net
// connections: one per edge of sends (each from this rank) and of recvs
// (each to it), returned in their order. Every rank of the communicator
// calls it at the same time, each with its own edges (it exchanges
// listener addresses through ex): a rank with edges to receive listens,
// and each sender dials its edge's receiver with a hello naming the
// edge's sender, channel and socket, which the receiver accepts only for
// an edge it expects. nsock is the sockets of each connection this rank
// dials.
func ConnectSockets(ctx context.Context, ex Exchanger, sends, recvs []Edge, nsock int) (sendWires []SendWire, recvWires []RecvWire, err error) {
	rank, n := ex.Rank(), ex.Size()
	if nsock < 1 || nsock > maxSockets {
		return nil, nil, fmt.Errorf("socket transport: rank %d: %d sockets per connection (want 1 to %d)", rank, nsock, maxSockets)
	}
	if err := checkEdges(rank, n, sends, recvs); err != nil {
		return nil, nil, fmt.Errorf("socket transport: %w", err)
	}
	var ln *net.TCPListener
	var blob []byte
	var token [sockTokenLen]byte
	if len(recvs) > 0 {
		ip, err := tcp.ListenIP()
		if err != nil {
			return nil, nil, fmt.Errorf("socket transport: %w", err)
		}
		ln, err = net.ListenTCP("tcp", net.TCPAddrFromAddrPort(netip.AddrPortFrom(ip, 0)))
		if err != nil {
			return nil, nil, fmt.Errorf("socket transport: listening: %w", err)
		}
		defer ln.Close()
		rand.Read(token[:])
		blob = append(tcp.AppendAddr(nil, ln.Addr().(*net.TCPAddr).AddrPort()), token[:]...)
	}
	blobs, err := ex.AllGather(ctx, blob)
	if err != nil {
		return nil, nil, fmt.Errorf("socket transport: exchanging addresses: %w", err)
	}
	var socks [][]net.Conn // by edge of recvs, as accepted
	accepted := make(chan error, 1)
	if len(recvs) > 0 {
		go func() {
			var err error
			socks, err = acceptSockets(ctx, ln, token, recvs)
			accepted <- err
		}()
	}
	defer func() {
		if err != nil {
			for _, w := range sendWires {
				w.Close()
			}
			for _, w := range recvWires {
				w.Close()
			}
			sendWires, recvWires = nil, nil
		}
	}()
	for _, e := range sends {
		b := blobs[e.To]
		if len(b) != 18+sockTokenLen {
			err = fmt.Errorf("socket transport: rank %d announced no listener (%d bytes) for %v", e.To, len(b), e)
			break
		}
		var cs []net.Conn
		if cs, err = dialSockets(ctx, tcp.DecodeAddr(b), [sockTokenLen]byte(b[18:]), e, nsock); err != nil {
			break
		}
		sendWires = append(sendWires, newSockSend(cs))
	}
	if len(recvs) > 0 {
		if err != nil {
			ln.Close() // ends the accept loop
			<-accepted
			for _, cs := range socks {
				closeAll(cs)
			}
			return sendWires, nil, err // the deferred clean-up closes the send wires
		}
		if err = <-accepted; err != nil {
			return sendWires, nil, err
		}
		for _, cs := range socks {
			recvWires = append(recvWires, newSockRecv(cs))
		}
	}
	return sendWires, recvWires, err
}

// checkEdges checks rank's edges of a net connector: sends from rank,
// recvs to it, each to or from another rank of n, on a channel ≥ 0, none
// twice.
func checkEdges(rank, n int, sends, recvs []Edge) error {
	seen := map[Edge]bool{}
	for i, es := range [][]Edge{sends, recvs} {
		for _, e := range es {
			peer, mine := e.To, e.From
			if i == 1 {
				peer, mine = e.From, e.To
			}
			switch {
			case mine != rank:
				return fmt.Errorf("rank %d of %d given the edge %v, not its own", rank, n, e)
			case peer < 0 || peer >= n || peer == rank || e.Ch < 0 || e.Ch > math.MaxInt32:
				return fmt.Errorf("rank %d of %d given the edge %v", rank, n, e)
			case seen[e]:
				return fmt.Errorf("rank %d given the edge %v twice", rank, e)
			}
			seen[e] = true
		}
	}
	return nil
}

// dialSockets opens the nsock sockets of edge e (from this rank) to its
// receiver, listening at addr.
func dialSockets(ctx context.Context, addr netip.AddrPort, token [sockTokenLen]byte, e Edge, nsock int) ([]net.Conn, error) {
	var cs []net.Conn
	for i := range nsock {
		c, err := tcp.Dial(ctx, addr.String())
		if err == nil {
			err = greet(ctx, c, token, e.From, e.Ch, i, nsock)
		}
		if err != nil {
			if c != nil {
				c.Close()
			}
			closeAll(cs)
			return nil, fmt.Errorf("socket transport: connecting to rank %d (%v), channel %d, socket %d: %w", e.To, addr, e.Ch, i, err)
		}
		cs = append(cs, c)
	}
	return cs, nil
}

// greet sends a dialed socket's hello and waits for its acceptance.
func greet(ctx context.Context, c net.Conn, token [sockTokenLen]byte, rank, ch, i, nsock int) error {
	defer unbind(tcp.Bind(ctx, c), c)
	var h [sockHelloLen]byte
	binary.LittleEndian.PutUint32(h[0:], magicHello)
	copy(h[4:], token[:])
	binary.LittleEndian.PutUint32(h[20:], uint32(rank))
	binary.LittleEndian.PutUint32(h[24:], uint32(ch))
	binary.LittleEndian.PutUint32(h[28:], uint32(i))
	binary.LittleEndian.PutUint32(h[32:], uint32(nsock))
	binary.LittleEndian.PutUint32(h[36:], crc32.ChecksumIEEE(h[:36]))
	if _, err := c.Write(h[:]); err != nil {
		return err
	}
	var a [4]byte
	if _, err := io.ReadFull(c, a[:]); err != nil {
		return fmt.Errorf("not accepted: %w", err)
	}
	if binary.LittleEndian.Uint32(a[:]) != magicAccept {
		return fmt.Errorf("not accepted: bad answer %x", a)
	}
	return nil
}

// acceptSockets accepts every socket of the connections of edges (each to
// this rank), and returns them by edge. A socket whose hello is wrong —
// bad token, an edge not in edges, a socket out of range, a duplicate — is
// closed and the wait goes on; nothing is sized from a hello before its
// token and edge are vetted.
func acceptSockets(ctx context.Context, ln *net.TCPListener, token [sockTokenLen]byte, edges []Edge) ([][]net.Conn, error) {
	defer tcp.Bind(ctx, ln)()
	want := make(map[hello]int, len(edges))
	for k, e := range edges {
		want[hello{uint32(e.From), uint32(e.Ch)}] = k
	}
	socks := make([][]net.Conn, len(edges))
	missing := len(edges) // connections not yet complete
	for missing > 0 {
		c, err := ln.Accept()
		if err != nil {
			var waiting []Edge
			for k, cs := range socks {
				if cs == nil || !complete(cs) {
					waiting = append(waiting, edges[k])
				}
			}
			for _, cs := range socks {
				closeAll(cs)
			}
			return nil, fmt.Errorf("socket transport: waiting for the connections %v: %w", waiting, tcp.EndedBy(ctx, err))
		}
		tcp.Tune(c)
		k, i, n, ok := vetHello(ctx, c, token, want)
		if !ok || (socks[k] != nil && (len(socks[k]) != n || socks[k][i] != nil)) {
			c.Close()
			continue
		}
		if socks[k] == nil {
			socks[k] = make([]net.Conn, n)
		}
		var a [4]byte
		binary.LittleEndian.PutUint32(a[:], magicAccept)
		if _, err := c.Write(a[:]); err != nil {
			c.Close()
			continue
		}
		socks[k][i] = c
		if complete(socks[k]) {
			missing--
		}
	}
	return socks, nil
}

// hello is what a hello names of its edge: the sender and the channel (the
// receiver is the rank that accepts it).
type hello struct{ from, ch uint32 }

// vetHello reads a hello and checks it: the token, and an edge of want
// (k, the edge's index there), with socket i of n.
func vetHello(ctx context.Context, c net.Conn, token [sockTokenLen]byte, want map[hello]int) (k, i, n int, ok bool) {
	defer unbind(tcp.Bind(ctx, c), c)
	var h [sockHelloLen]byte
	if _, err := io.ReadFull(c, h[:]); err != nil {
		return 0, 0, 0, false
	}
	if binary.LittleEndian.Uint32(h[0:]) != magicHello ||
		binary.LittleEndian.Uint32(h[36:]) != crc32.ChecksumIEEE(h[:36]) ||
		[sockTokenLen]byte(h[4:20]) != token {
		return 0, 0, 0, false
	}
	k, ok = want[hello{binary.LittleEndian.Uint32(h[20:]), binary.LittleEndian.Uint32(h[24:])}]
	i, n = int(binary.LittleEndian.Uint32(h[28:])), int(binary.LittleEndian.Uint32(h[32:]))
	return k, i, n, ok && n >= 1 && n <= maxSockets && i < n
}

// unbind ends bind's hold on c and clears c's deadline: setup is over, and
// the connection lives on.
func unbind(release func(), c net.Conn) {
	release()
	c.SetDeadline(time.Time{})
}

func complete(cs []net.Conn) bool {
	for _, c := range cs {
		if c == nil {
			return false
		}
	}
	return true
}

func closeAll(cs []net.Conn) {
	for _, c := range cs {
		if c != nil {
			c.Close()
		}
	}
}

// stripes returns how many sockets carry a post of n bytes, and the size of
// each piece but the last.
func stripes(n, nsock int) (parts, piece int) {
	parts = min(nsock, max(1, n/stripeMin))
	piece = (n + parts - 1) / parts
	return parts, (piece + 63) &^ 63
}

// piece returns part i of data when split into parts of size piece.
func piece(data []byte, i, size int) []byte {
	lo := min(i*size, len(data))
	return data[lo:min(lo+size, len(data))]
}

// sockPart is socket i ≥ 1 of a connection and the goroutine serving it:
// it writes (or reads) one piece per job.
type sockPart struct {
	c    net.Conn
	jobs chan sockJob
	done chan error
	hdr  [partHdrLen]byte
}

type sockJob struct {
	step uint64
	data []byte
}

// sockWire is what both ends of a socket connection have: the sockets, the
// goroutines of sockets 1…, and their end.
type sockWire struct {
	socks []net.Conn
	parts []*sockPart // parts[i] serves socks[i], i ≥ 1
	quit  chan struct{}
	once  sync.Once
	mu    sync.Mutex // held by writes to socket 0, so a goodbye goes between messages
}

// start starts the goroutines of sockets 1…, each moving its jobs' pieces
// with move.
func (w *sockWire) start(cs []net.Conn, move func(*sockPart, sockJob) error) {
	w.socks, w.parts, w.quit = cs, make([]*sockPart, len(cs)), make(chan struct{})
	for i := 1; i < len(cs); i++ {
		p := &sockPart{c: cs[i], jobs: make(chan sockJob), done: make(chan error, 1)}
		w.parts[i] = p
		go func() {
			for {
				select {
				case <-w.quit:
					return
				case j := <-p.jobs:
					p.done <- move(p, j)
				}
			}
		}()
	}
}

// close writes bye on socket 0 — after any write in progress, which it
// cuts short when it blocks — then closes every socket and ends the
// goroutines; blocked calls fail.
func (w *sockWire) close(bye []byte) error {
	w.once.Do(func() {
		close(w.quit)
		w.socks[0].SetWriteDeadline(time.Now().Add(byeWait))
		w.mu.Lock()
		w.socks[0].SetWriteDeadline(time.Now().Add(byeWait))
		w.socks[0].Write(bye)
		w.mu.Unlock()
		// Half-close, and read what the peer still sends until it closes
		// too (at most lingerWait): closing a socket with unread data —
		// credits that came in after the last read — resets the
		// connection, and the reset can destroy data the peer has not read
		// yet, the last posts of a collective it is still finishing.
		var wg sync.WaitGroup
		for _, c := range w.socks {
			if tc, ok := c.(*net.TCPConn); ok {
				tc.CloseWrite()
			}
			c.SetReadDeadline(time.Now().Add(lingerWait))
			wg.Add(1)
			go func() {
				defer wg.Done()
				io.Copy(io.Discard, c)
			}()
		}
		wg.Wait()
		closeAll(w.socks)
	})
	return nil
}

// byeWait bounds a goodbye's write; lingerWait how long a closing end
// reads what its peer still sends.
const (
	byeWait    = 200 * time.Millisecond
	lingerWait = 500 * time.Millisecond
)

// ErrWireClosed is what a wire's calls return once it is closed, or once
// the other end has closed its end and said goodbye.
var ErrWireClosed = errors.New("net connection closed")

// goodbye is the message that closes an end: magicBye, then zeros.
func goodbye(n int) []byte {
	b := make([]byte, n)
	binary.LittleEndian.PutUint32(b, magicBye)
	return b
}

// stripe has sockets 1…parts−1 move their pieces of data while move
// handles piece 0 on socket 0, and returns the first failure.
func (w *sockWire) stripe(step uint64, data []byte, parts, size int, move func([]byte) error) error {
	for i := 1; i < parts; i++ {
		select {
		case w.parts[i].jobs <- sockJob{step: step, data: piece(data, i, size)}:
		case <-w.quit:
			return ErrWireClosed
		}
	}
	err := move(piece(data, 0, size))
	for i := 1; i < parts; i++ {
		select {
		case perr := <-w.parts[i].done:
			if err == nil {
				err = perr
			}
		case <-w.quit:
			return ErrWireClosed
		}
	}
	return err
}

// ioError describes a failed read or write of what: a connection that
// closed or reset is a lost peer.
func ioError(what string, err error) error {
	switch {
	case errors.Is(err, io.EOF):
		return fmt.Errorf("%w: %s: the connection closed", errs.ErrPeerLost, what)
	case errors.Is(err, io.ErrUnexpectedEOF):
		return fmt.Errorf("%w: %s: truncated, the connection closed mid-message", errs.ErrPeerLost, what)
	case errors.Is(err, net.ErrClosed):
		return ErrWireClosed
	case errors.Is(err, syscall.ECONNRESET), errors.Is(err, syscall.EPIPE), errors.Is(err, syscall.ETIMEDOUT),
		errors.Is(err, syscall.ENETUNREACH), errors.Is(err, syscall.EHOSTUNREACH):
		return fmt.Errorf("%w: %s: %v", errs.ErrPeerLost, what, err)
	}
	return fmt.Errorf("%s: %w", what, err)
}

// sockSend is the sender's end of a socket wire.
type sockSend struct {
	sockWire
	buf    [postHdrLen + inlineMax]byte // header, and a small post's data
	credit [creditLen]byte
	sum    bool // checksum every post's data (RINGO_CHECK=1)
}

func newSockSend(cs []net.Conn) *sockSend {
	w := &sockSend{sum: SumData()}
	w.start(cs, writePart)
	return w
}

// Send writes p's header and data, striped when large.
func (w *sockSend) Send(p Post, data []byte) error {
	if !p.ShapeOK() {
		return fmt.Errorf("%w: %v: a post takes 1 to %d slots and skips fewer than it takes", errs.ErrInvalidArgument, p, 2*ring.NSteps)
	}
	parts, size := stripes(len(data), len(w.socks))
	h := w.buf[:postHdrLen]
	binary.LittleEndian.PutUint32(h[0:], magicPost)
	h[4], h[5], h[6], h[7] = p.Proto, uint8(p.Skip), uint8(p.Slots), 0
	binary.LittleEndian.PutUint64(h[8:], p.Step)
	binary.LittleEndian.PutUint32(h[16:], uint32(len(data)))
	binary.LittleEndian.PutUint32(h[20:], uint32(parts))
	binary.LittleEndian.PutUint32(h[24:], 0)
	if w.sum { // flag 1: h[24:28] is the data's checksum
		h[7] = 1
		binary.LittleEndian.PutUint32(h[24:], DataSum(data))
	}
	binary.LittleEndian.PutUint32(h[28:], crc32.ChecksumIEEE(h[:28]))
	w.mu.Lock()
	defer w.mu.Unlock()
	if len(data) <= inlineMax {
		n := copy(w.buf[postHdrLen:], data)
		if _, err := w.socks[0].Write(w.buf[:postHdrLen+n]); err != nil {
			return ioError("writing a post", err)
		}
		return nil
	}
	if _, err := w.socks[0].Write(h); err != nil {
		return ioError("writing a post header", err)
	}
	return w.stripe(p.Step, data, parts, size, func(b []byte) error {
		if _, err := w.socks[0].Write(b); err != nil {
			return ioError("writing a post", err)
		}
		return nil
	})
}

// Close says goodbye and closes the sockets.
func (w *sockSend) Close() error { return w.close(goodbye(postHdrLen)) }

// writePart writes one piece behind its part header.
func writePart(p *sockPart, j sockJob) error {
	h := p.hdr[:]
	binary.LittleEndian.PutUint32(h[0:], magicPart)
	binary.LittleEndian.PutUint32(h[4:], uint32(j.step))
	binary.LittleEndian.PutUint32(h[8:], uint32(len(j.data)))
	binary.LittleEndian.PutUint32(h[12:], crc32.ChecksumIEEE(h[:12]))
	if _, err := p.c.Write(h); err != nil {
		return ioError("writing a part header", err)
	}
	if _, err := p.c.Write(j.data); err != nil {
		return ioError("writing a part", err)
	}
	return nil
}

// Credit reads the receiver's next credit report.
func (w *sockSend) Credit() (uint64, error) {
	b := w.credit[:]
	if _, err := io.ReadFull(w.socks[0], b); err != nil {
		return 0, ioError("reading credit", err)
	}
	if binary.LittleEndian.Uint32(b[0:]) == magicBye {
		return 0, ErrWireClosed
	}
	if binary.LittleEndian.Uint32(b[0:]) != magicCredit || binary.LittleEndian.Uint32(b[4:]) != crc32.ChecksumIEEE(b[8:16]) {
		return 0, fmt.Errorf("corrupt credit report % x", b)
	}
	return binary.LittleEndian.Uint64(b[8:]), nil
}

// sockRecv is the receiver's end of a socket wire.
type sockRecv struct {
	sockWire
	hdr    [postHdrLen]byte
	credit [creditLen]byte
	next   uint64 // the step the next post must start at
}

func newSockRecv(cs []net.Conn) *sockRecv {
	w := &sockRecv{}
	w.start(cs, readPart)
	return w
}

// Recv reads the next post's header, checks it, and reads its data where
// place says.
func (w *sockRecv) Recv(place func(Post) ([]byte, error)) (Post, error) {
	h := w.hdr[:]
	if _, err := io.ReadFull(w.socks[0], h); err != nil {
		return Post{}, ioError("reading a post header", err)
	}
	if binary.LittleEndian.Uint32(h[0:]) == magicBye {
		return Post{}, ErrWireClosed
	}
	if binary.LittleEndian.Uint32(h[0:]) != magicPost || binary.LittleEndian.Uint32(h[28:]) != crc32.ChecksumIEEE(h[:28]) {
		return Post{}, fmt.Errorf("corrupt post header % x", h)
	}
	p := Post{Proto: h[4], Skip: uint32(h[5]), Slots: uint32(h[6]),
		Step: binary.LittleEndian.Uint64(h[8:]), Bytes: binary.LittleEndian.Uint32(h[16:])}
	parts := int(binary.LittleEndian.Uint32(h[20:]))
	if !p.ShapeOK() {
		return p, fmt.Errorf("corrupt post header: %v", p)
	}
	if want, _ := stripes(int(p.Bytes), len(w.socks)); parts != want {
		return p, fmt.Errorf("corrupt post header: %v in %d parts, expected %d", p, parts, want)
	}
	if p.Step != w.next {
		return p, fmt.Errorf("%v does not follow step %d", p, w.next)
	}
	dst, err := place(p)
	if err != nil {
		return p, err
	}
	if len(dst) != int(p.Bytes) {
		return p, fmt.Errorf("%v placed in %d bytes", p, len(dst))
	}
	_, size := stripes(len(dst), len(w.socks))
	err = w.stripe(p.Step, dst, parts, size, func(b []byte) error {
		if _, err := io.ReadFull(w.socks[0], b); err != nil {
			return ioError("reading a post", err)
		}
		return nil
	})
	if err != nil {
		return p, err
	}
	if h[7] == 1 {
		if got, want := DataSum(dst), binary.LittleEndian.Uint32(h[24:]); got != want {
			return p, fmt.Errorf("%v: data checksum %#08x, the sender's %#08x: corrupted in transit", p, got, want)
		}
	}
	w.next = p.Step + uint64(p.Slots)
	return p, nil
}

// Close says goodbye and closes the sockets.
func (w *sockRecv) Close() error { return w.close(goodbye(creditLen)) }

// readPart reads one piece behind its part header, which must announce it.
func readPart(p *sockPart, j sockJob) error {
	h := p.hdr[:]
	if _, err := io.ReadFull(p.c, h); err != nil {
		return ioError("reading a part header", err)
	}
	if binary.LittleEndian.Uint32(h[0:]) != magicPart || binary.LittleEndian.Uint32(h[12:]) != crc32.ChecksumIEEE(h[:12]) ||
		binary.LittleEndian.Uint32(h[4:]) != uint32(j.step) || int(binary.LittleEndian.Uint32(h[8:])) != len(j.data) {
		return fmt.Errorf("corrupt part header % x (expected step %d, %d bytes)", h, uint32(j.step), len(j.data))
	}
	if _, err := io.ReadFull(p.c, j.data); err != nil {
		return ioError("reading a part", err)
	}
	return nil
}

// SendCredit writes a credit report.
func (w *sockRecv) SendCredit(head uint64) error {
	b := w.credit[:]
	binary.LittleEndian.PutUint32(b[0:], magicCredit)
	binary.LittleEndian.PutUint64(b[8:], head)
	binary.LittleEndian.PutUint32(b[4:], crc32.ChecksumIEEE(b[8:16]))
	w.mu.Lock()
	defer w.mu.Unlock()
	if _, err := w.socks[0].Write(b); err != nil {
		return ioError("writing credit", err)
	}
	return nil
}
