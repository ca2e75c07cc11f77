package bootstrap

import (
	"context"
	"crypto/rand"
	"encoding/binary"
	"errors"
	"fmt"
	"io"
	"net"
	"net/netip"
	"strconv"
	"sync"
	"time"

	"github.com/ringo-ccl/ringo/internal/env"
	"github.com/ringo-ccl/ringo/internal/tcp"
)

// The bootstrap root is where the ranks of a communicator meet: each rank
// connects and says hello (secret, rank, nranks, ring listener address); the
// root refuses a bad hello on that connection alone; once all nranks ranks
// have joined it sends every rank the table of ring listener addresses,
// then the list of the ranks that live in the root's own process (hosts: if
// the root dies, so did they), and until then a status frame naming the
// ranks still missing every statusInterval. Ranks keep their connection
// open after setup: an EOF without a prior bye is a dead rank, reported to
// every remaining rank. The root stops once every rank that joined has left
// (bye) or been lost.
//
// Until a connection has proved the secret, nothing the root holds for it
// depends on what its peer sends: readHello reads a fixed-size hello and
// checks the secret before anything else, and a helloGate (gate.go) bounds
// such connections to maxPendingHellos at once, each for at most
// helloDeadline.

const (
	statusInterval   = 200 * time.Millisecond
	maxPendingHellos = 64                     // connections vetted at once (helloGate)
	resolveTimeout   = 10 * time.Second       // StartRoot's host name lookup
	rootWriteTimeout = 2 * time.Second        // a rank that does not take a small frame within this is dropped
	queryWait        = time.Second            // a query's report waits this long for the ranks' answers
	refusalLinger    = 500 * time.Millisecond // a refused connector's time to read why
)

// roots are the roots this process runs, by ID, for StopRoot.
var (
	rootsMu sync.Mutex
	roots   = map[UniqueID]*rootServer{}
)

// NewUniqueID picks an interface (see Interfaces), starts a root listening on
// an OS-chosen port of its address, and returns the ID naming that root with
// a fresh 256-bit random secret. The root runs as goroutines of this process
// until every rank that joined has closed or been lost (or StopRoot, or the
// process exits). Safe for concurrent use.
func NewUniqueID() (UniqueID, error) {
	ip, err := tcp.ListenIP()
	if err != nil {
		return UniqueID{}, fmt.Errorf("bootstrap root: %w", err)
	}
	var secret [32]byte
	rand.Read(secret[:]) // never fails (it crashes the program instead)
	return startRoot(netip.AddrPortFrom(ip, 0).String(), ip, secret)
}

// StartRoot starts a root listening on addr ("host:port"; port may be 0; a
// host name is resolved, IPv4 first) with the given secret and returns its
// ID, for launchers that fix the root's address. With an empty or
// unspecified host ("0.0.0.0") it listens on every interface and the ID
// names the address NewUniqueID would pick. A port already taken fails with
// the system's "address already in use" error (errors.Is syscall.EADDRINUSE);
// a malformed addr wraps errs.ErrInvalidArgument.
func StartRoot(addr string, secret [32]byte) (UniqueID, error) {
	host, port, err := tcp.SplitHostPort(addr)
	if err != nil {
		return UniqueID{}, fmt.Errorf("bootstrap root: %w", err)
	}
	if host == "" || host == "0.0.0.0" || host == "::" {
		ip, err := tcp.ListenIP()
		if err != nil {
			return UniqueID{}, fmt.Errorf("bootstrap root: %w", err)
		}
		return startRoot(net.JoinHostPort(host, strconv.Itoa(int(port))), ip, secret)
	}
	ctx, cancel := context.WithTimeout(context.Background(), resolveTimeout)
	defer cancel()
	ip, err := tcp.ResolveHost(ctx, host)
	if err != nil {
		return UniqueID{}, fmt.Errorf("bootstrap root: %w", err)
	}
	return startRoot(netip.AddrPortFrom(ip, port).String(), ip, secret)
}

// StopRoot stops the root of id started by this process, if any, closing
// its connections (its ranks see it as lost), and waits for its goroutines
// to end. Safe for concurrent use.
func StopRoot(id UniqueID) {
	rootsMu.Lock()
	r := roots[id]
	rootsMu.Unlock()
	if r != nil {
		r.stop()
		r.wg.Wait()
	}
}

// StopRootIdle stops the root of id started by this process, as StopRoot
// does, if no rank has joined it yet — an id made for ranks that never
// came (a grow that did not happen) — and reports whether it did. Safe for
// concurrent use.
func StopRootIdle(id UniqueID) bool {
	rootsMu.Lock()
	r := roots[id]
	rootsMu.Unlock()
	if r == nil {
		return false
	}
	r.mu.Lock()
	idle := r.nranks == 0
	if idle {
		r.stopLocked()
	}
	r.mu.Unlock()
	if idle {
		r.wg.Wait()
	}
	return idle
}

// startRoot listens on listen and serves the ID naming advertise and the
// port listened on.
func startRoot(listen string, advertise netip.Addr, secret [32]byte) (UniqueID, error) {
	ln, err := net.Listen("tcp", listen)
	if err != nil {
		return UniqueID{}, fmt.Errorf("bootstrap root: %w", err)
	}
	port := ln.Addr().(*net.TCPAddr).AddrPort().Port()
	id := newUniqueID(netip.AddrPortFrom(advertise, port), secret)
	r := &rootServer{id: id, secret: secret, ln: ln, stopc: make(chan struct{}), conns: map[net.Conn]struct{}{},
		gate: newHelloGate(maxPendingHellos), departed: make(chan struct{})}
	rootsMu.Lock()
	roots[id] = r
	rootsMu.Unlock()
	r.wg.Add(2)
	go r.routineAccept()
	go r.routineStatus()
	return id, nil
}

// rootServer is one running root. Its goroutines — routineAccept,
// routineStatus and one routineServe per connection (at most
// maxPendingHellos of them before the hello, then one per admitted rank) —
// end after stop; stop is called by the last rank's departure or by
// StopRoot.
type rootServer struct {
	id     UniqueID
	secret [32]byte
	ln     net.Listener
	stopc  chan struct{} // closed by stop
	wg     sync.WaitGroup
	gate   *helloGate // connections whose hello is being read or refused

	mu        sync.Mutex // guards the fields below; never held while writing to a connection
	nranks    int        // from the first admitted hello; 0 before
	members   []*rootMember
	joined    int    // non-nil members
	connected int    // members not gone
	formed    bool   // all joined and the table sent
	failed    string // set when a rank was lost before formed: why the communicator cannot form
	conns     map[net.Conn]struct{}
	stopped   bool
	queries   map[uint32]chan Progress // asks in flight, by query number
	nextQuery uint32
	departed  chan struct{} // closed, and replaced, when a member leaves or is lost
}

// rootMember is an admitted rank.
type rootMember struct {
	rank int
	conn net.Conn
	ring netip.AddrPort
	gone bool // said bye or was lost; guarded by rootServer.mu

	wmu sync.Mutex // serializes writes to conn
}

// send writes one frame to m, dropping m's connection (which its
// routineServe then reports as lost) if that fails.
func (m *rootMember) send(t frameType, payload []byte) {
	m.wmu.Lock()
	defer m.wmu.Unlock()
	m.conn.SetWriteDeadline(time.Now().Add(rootWriteTimeout))
	if err := writeFrame(m.conn, t, payload); err != nil {
		env.Info(env.SubBootstrap, "bootstrap root: dropping rank %d, whose connection took no %v frame: %v", m.rank, t, err)
		m.conn.Close()
	}
}

// routineAccept accepts connections as r.gate lets it, each served by its
// own routineServe.
func (r *rootServer) routineAccept() {
	defer r.wg.Done()
	r.gate.acceptLoop(r.ln, r.stopc, func(c net.Conn) bool {
		r.mu.Lock()
		defer r.mu.Unlock()
		if r.stopped {
			return false
		}
		r.conns[c] = struct{}{}
		r.wg.Add(1)
		go r.routineServe(c)
		return true
	})
}

// routineServe vets c's hello in its r.gate slot, admits or refuses it, and
// then waits for the admitted rank's bye or death.
func (r *rootServer) routineServe(c net.Conn) {
	defer r.wg.Done()
	m := r.vet(c)
	if m == nil {
		r.forget(c)
		r.gate.leave(c) // last, so that the gate bounds the goroutines too
		return
	}
	r.gate.leave(c)
	defer r.forget(c)
	for {
		t, p, err := readFrameOf(c, frameBye, frameQuery, frameProgress)
		switch {
		case err == nil && t == frameBye:
			r.leave(m)
			return
		case err == nil && t == frameQuery:
			r.wg.Add(1)
			go r.routineQuery(m)
			continue
		case err == nil && t == frameProgress:
			if q, pr, err := decodeAnswer(p); err == nil && pr.Rank == m.rank {
				r.answer(q, pr)
				continue
			}
			r.lose(m, "it sent a malformed progress frame")
		case errors.Is(err, errFrame):
			r.lose(m, fmt.Sprintf("it sent a %v", err))
		case errors.Is(err, io.EOF):
			r.lose(m, "its bootstrap connection closed without Close")
		default:
			r.lose(m, fmt.Sprintf("its bootstrap connection failed: %v", err))
		}
		return
	}
}

// vet reads c's hello within helloDeadline and returns its admitted rank, or
// nil once c is refused (or said nothing).
func (r *rootServer) vet(c net.Conn) *rootMember {
	c.SetReadDeadline(time.Now().Add(helloDeadline))
	h, err := readHello(c, frameHello, &r.secret)
	switch {
	case errors.Is(err, io.EOF) || errors.Is(err, net.ErrClosed):
		return nil
	case errors.Is(err, errWrongSecret):
		refuse(c, refuseInvalid, "wrong secret (a unique ID of another communicator?)")
		return nil
	case err != nil:
		refuse(c, refuseInvalid, fmt.Sprintf("no valid hello: %v", err))
		return nil
	case !r.gate.claim(c):
		return nil // evicted as the hello came in
	}
	m, code, reason := r.admit(c, h)
	if m == nil {
		refuse(c, code, reason)
		return nil
	}
	c.SetReadDeadline(time.Time{})
	return m
}

// routineQuery answers m's query: it asks every connected rank for its
// progress, waits up to queryWait for the answers, and sends m the report
// (ranks that did not answer are Silent, ranks closed or lost Gone).
func (r *rootServer) routineQuery(m *rootMember) {
	defer r.wg.Done()
	r.mu.Lock()
	if r.queries == nil {
		r.queries = map[uint32]chan Progress{}
	}
	r.nextQuery++
	q := r.nextQuery
	answers := make(chan Progress, r.nranks)
	r.queries[q] = answers
	asked := r.connectedLocked()
	report := make([]Progress, r.nranks)
	for i := range report {
		report[i] = Progress{Rank: i, State: Gone}
	}
	for _, o := range asked {
		report[o.rank].State = Silent
	}
	r.mu.Unlock()
	defer func() {
		r.mu.Lock()
		delete(r.queries, q)
		r.mu.Unlock()
	}()
	ask := binary.BigEndian.AppendUint32(nil, q)
	for _, o := range asked {
		o.send(frameAsk, ask)
	}
	timeout := time.After(queryWait)
wait:
	for range asked {
		select {
		case pr := <-answers:
			if pr.Rank >= 0 && pr.Rank < len(report) {
				report[pr.Rank] = pr
			}
		case <-timeout:
			break wait
		case <-r.stopc:
			return
		}
	}
	m.send(frameReport, appendReport(nil, report))
}

// answer delivers a rank's answer to query q, if it is still waited for.
func (r *rootServer) answer(q uint32, pr Progress) {
	r.mu.Lock()
	defer r.mu.Unlock()
	if c, ok := r.queries[q]; ok {
		select {
		case c <- pr:
		default:
		}
	}
}

// admit registers the rank of hello h, whose secret readHello checked, on
// c, or returns why not. It sends the new rank the missing ranks, or
// everyone the table if h completes it.
func (r *rootServer) admit(c net.Conn, h hello) (m *rootMember, code byte, reason string) {
	r.mu.Lock()
	switch {
	case r.stopped:
		reason = "the bootstrap root is stopping"
	case r.failed != "":
		r.mu.Unlock()
		return nil, refusePeerLost, r.failed
	case h.nranks < 1 || h.nranks > maxRanks:
		reason = fmt.Sprintf("nranks %d out of range [1, %d]", h.nranks, maxRanks)
	case r.nranks != 0 && int(h.nranks) != r.nranks:
		reason = fmt.Sprintf("nranks %d differs from the %d of the ranks that joined first", h.nranks, r.nranks)
	case h.rank >= h.nranks:
		reason = fmt.Sprintf("rank %d out of range [0, %d)", h.rank, h.nranks)
	case !dialable(h.ring):
		reason = fmt.Sprintf("ring listener address %v cannot be dialed", h.ring)
	case r.nranks != 0 && r.members[h.rank] != nil:
		reason = fmt.Sprintf("duplicate rank %d: rank %d already joined", h.rank, h.rank)
	}
	if reason != "" {
		r.mu.Unlock()
		return nil, refuseInvalid, reason
	}
	if r.nranks == 0 {
		r.nranks = int(h.nranks)
		r.members = make([]*rootMember, r.nranks)
	}
	m = &rootMember{rank: int(h.rank), conn: c, ring: h.ring}
	r.members[m.rank] = m
	r.joined++
	r.connected++
	if r.joined < r.nranks {
		st := r.statusLocked()
		r.mu.Unlock()
		m.send(frameStatus, appendStatus(nil, st))
		return m, 0, ""
	}
	r.formed = true
	addrs := make([]netip.AddrPort, r.nranks)
	for i, o := range r.members {
		addrs[i] = o.ring
	}
	all := append([]*rootMember(nil), r.members...)
	r.mu.Unlock()
	table := appendTable(nil, addrs)
	var hosts []int // the ranks of this process: lost with the root if it dies
	for _, o := range all {
		if isLocalRank(o.conn) {
			hosts = append(hosts, o.rank)
		}
	}
	hostsFrame := appendRanks(nil, hosts)
	for _, o := range all {
		o.send(frameTable, table)
		o.send(frameHosts, hostsFrame)
	}
	return m, 0, ""
}

// statusLocked lists the ranks not joined. r.mu is held.
func (r *rootServer) statusLocked() status {
	var st status
	for i, m := range r.members {
		if m == nil {
			st.missing++
			if len(st.listed) < maxListedMissing {
				st.listed = append(st.listed, i)
			}
		}
	}
	return st
}

// awaitOthers waits until no rank of another process (isLocalRank) is
// connected, or r stops, or d has passed.
func (r *rootServer) awaitOthers(d time.Duration) {
	t := time.NewTimer(d)
	defer t.Stop()
	for {
		r.mu.Lock()
		others := 0
		for _, m := range r.connectedLocked() {
			if !isLocalRank(m.conn) {
				others++
			}
		}
		departed := r.departed
		r.mu.Unlock()
		if others == 0 {
			return
		}
		select {
		case <-departed:
		case <-r.stopc:
			return
		case <-t.C:
			return
		}
	}
}

// connectedLocked returns the members not gone. r.mu is held.
func (r *rootServer) connectedLocked() []*rootMember {
	var out []*rootMember
	for _, m := range r.members {
		if m != nil && !m.gone {
			out = append(out, m)
		}
	}
	return out
}

// departLocked marks m gone and wakes whoever waits for a departure, or
// reports false when m is already gone or the root has stopped. r.mu is
// held.
func (r *rootServer) departLocked(m *rootMember) bool {
	if r.stopped || m.gone {
		return false
	}
	m.gone = true
	r.connected--
	close(r.departed)
	r.departed = make(chan struct{})
	return true
}

// leave handles m's bye. Before the table is out, m's rank becomes missing
// again (its Join gave up; a retry may take its place).
func (r *rootServer) leave(m *rootMember) {
	env.Info(env.SubBootstrap, "bootstrap root at %v: rank %d closed", r.ln.Addr(), m.rank)
	r.mu.Lock()
	if !r.departLocked(m) {
		r.mu.Unlock()
		return
	}
	if !r.formed {
		r.members[m.rank] = nil
		r.joined--
	}
	last := r.connected == 0
	r.mu.Unlock()
	if last {
		r.stop() // first, so that the listener is closed when m sees its connection close
	}
	m.conn.Close()
}

// lose reports m's death to every remaining rank. Before the table is out,
// it also fails the communicator: later hellos are refused.
func (r *rootServer) lose(m *rootMember, reason string) {
	env.Info(env.SubBootstrap, "bootstrap root at %v: rank %d lost: %s", r.ln.Addr(), m.rank, reason)
	r.mu.Lock()
	if !r.departLocked(m) {
		r.mu.Unlock()
		return
	}
	if !r.formed && r.failed == "" {
		r.failed = fmt.Sprintf("rank %d lost: %s", m.rank, reason)
	}
	others := r.connectedLocked()
	r.mu.Unlock()
	m.conn.Close()
	lost := appendLost(nil, m.rank, reason)
	for _, o := range others {
		o.send(frameLost, lost)
	}
	if len(others) == 0 {
		r.stop()
	}
}

func (r *rootServer) routineStatus() {
	defer r.wg.Done()
	tick := time.NewTicker(statusInterval)
	defer tick.Stop()
	for {
		select {
		case <-r.stopc:
			return
		case <-tick.C:
		}
		r.mu.Lock()
		if r.formed || r.failed != "" {
			r.mu.Unlock()
			return
		}
		waiting := r.connectedLocked()
		st := r.statusLocked()
		r.mu.Unlock()
		p := appendStatus(nil, st)
		for _, m := range waiting {
			m.send(frameStatus, p)
		}
	}
}

// forget closes c and drops it from the connections stop closes.
func (r *rootServer) forget(c net.Conn) {
	r.mu.Lock()
	delete(r.conns, c)
	r.mu.Unlock()
	c.Close()
}

// stop unregisters r, closes the listener, then every connection (so that
// a rank seeing its connection close finds r stopped); the goroutines end
// on their own. Idempotent. Lock order: r.mu, then rootsMu.
func (r *rootServer) stop() {
	r.mu.Lock()
	r.stopLocked()
	r.mu.Unlock()
}

// stopLocked is stop with r.mu held.
func (r *rootServer) stopLocked() {
	if r.stopped {
		return
	}
	env.Info(env.SubBootstrap, "bootstrap root at %v: stopped", r.ln.Addr())
	r.stopped = true
	rootsMu.Lock()
	if roots[r.id] == r {
		delete(roots, r.id)
	}
	rootsMu.Unlock()
	close(r.stopc)
	r.ln.Close()
	for c := range r.conns {
		c.Close()
	}
}

// refuse tells c's peer why it is refused, gives it refusalLinger to read
// that, and closes c.
func refuse(c net.Conn, code byte, reason string) {
	c.SetDeadline(time.Now().Add(refusalLinger))
	if writeFrame(c, frameRefuse, appendRefuse(nil, code, reason)) == nil {
		if tc, ok := c.(*net.TCPConn); ok {
			tc.CloseWrite()
		}
		// Read until the peer closes, so that closing does not reset the
		// connection under the refusal.
		io.Copy(io.Discard, io.LimitReader(c, 1<<20))
	}
	c.Close()
}

func dialable(a netip.AddrPort) bool {
	return a.Port() != 0 && a.Addr().IsValid() && !a.Addr().IsUnspecified() && !a.Addr().IsMulticast()
}
