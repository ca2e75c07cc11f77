package bootstrap

import (
	"errors"
	"fmt"
	"net"
	"sync"
	"time"
)

// A rank's listener is the address the root's table gives for it. For the
// Bootstrap's whole life it admits the connections other ranks open to
// this one: the ring predecessor's during Join (a ring hello, ring.go) and
// any rank's point-to-point connection (a p2p hello, p2p.go). One
// listener serves both because the table is all a rank knows of the others'
// addresses: a second listener would need a second address in the root's
// hello and table.
//
// Until a connection has proved the secret, the listener holds it as the
// root holds its own: in a helloGate of maxPendingListenerHellos slots,
// each for at most helloDeadline, reading a fixed-size hello (readHelloOf).

// maxPendingListenerHellos bounds the connections a rank's listener vets at
// once (a helloGate, as the root's).
const maxPendingListenerHellos = 16

// listener is a rank's listener. Its goroutines — routineAccept and a
// routineVet per connection being vetted — end in close.
type listener struct {
	b    *Bootstrap
	ln   net.Listener
	gate *helloGate
	quit chan struct{} // closed by close
	wg   sync.WaitGroup

	mu      sync.Mutex // guards the fields below
	pending map[net.Conn]bool
	shut    bool // close began: vet nothing more
}

// listen starts serving ln, which b.close closes.
func (b *Bootstrap) listen(ln net.Listener) {
	l := &listener{b: b, ln: ln, gate: newHelloGate(maxPendingListenerHellos), quit: make(chan struct{}), pending: map[net.Conn]bool{}}
	b.lis = l
	l.wg.Add(1)
	go l.routineAccept()
}

// routineAccept accepts connections as l.gate lets it, each vetted by its
// own routineVet.
func (l *listener) routineAccept() {
	defer l.wg.Done()
	l.gate.acceptLoop(l.ln, l.quit, func(c net.Conn) bool {
		l.mu.Lock()
		defer l.mu.Unlock()
		if l.shut {
			return false
		}
		l.pending[c] = true
		l.wg.Add(1)
		go l.routineVet(c)
		return true
	})
}

// routineVet reads c's hello in its l.gate slot and hands c to the ring
// (takePredecessor) or to the point-to-point connections (takePeer), or
// refuses it, saying why.
func (l *listener) routineVet(c net.Conn) {
	defer l.wg.Done()
	defer l.gate.leave(c) // last, so that the gate bounds the goroutines too
	t, h, reason := l.b.vetMember(c)
	if reason == "" && !l.gate.claim(c) {
		reason = "closed to make room" // by the gate, as the hello came in
	}
	code := refuseInvalid
	if reason == "" {
		switch t {
		case frameRingHello:
			reason = l.b.takePredecessor(c, int(h.rank))
		case frameP2PHello:
			code, reason = l.b.takePeer(c, int(h.rank))
		}
	}
	if reason != "" {
		refuse(c, code, reason)
	}
	l.mu.Lock()
	delete(l.pending, c)
	l.mu.Unlock()
}

// vetMember reads c's ring or p2p hello (readHelloOf, within helloDeadline)
// and returns it, or why c is refused: a wrong secret, another
// communicator's size, a rank out of range.
func (b *Bootstrap) vetMember(c net.Conn) (frameType, hello, string) {
	c.SetDeadline(time.Now().Add(helloDeadline))
	secret := b.id.secret()
	t, h, err := readHelloOf(c, &secret, frameRingHello, frameP2PHello)
	switch {
	case errors.Is(err, errWrongSecret):
		return 0, h, "wrong secret"
	case err != nil:
		return 0, h, fmt.Sprintf("no valid hello: %v", err)
	case int(h.nranks) != b.nranks:
		return 0, h, fmt.Sprintf("nranks %d differs from this communicator's %d", h.nranks, b.nranks)
	case int(h.rank) >= b.nranks:
		return 0, h, fmt.Sprintf("rank %d out of range [0, %d)", h.rank, b.nranks)
	}
	return t, h, ""
}

// close stops accepting, closes the connections being vetted and waits for
// l's goroutines.
func (l *listener) close() {
	close(l.quit)
	l.ln.Close()
	l.mu.Lock()
	l.shut = true
	for c := range l.pending {
		c.Close()
	}
	l.mu.Unlock()
	l.wg.Wait()
}
