package sys

import (
	"crypto/rand"
	"crypto/subtle"
	"encoding/hex"
	"errors"
	"fmt"
	"net"
	"os"
	"sync"
	"time"

	"golang.org/x/sys/unix"
)

// Lending a file descriptor to other processes of this host: what CUDA's
// shareable memory travels as (a window's buffer from ncclMemAlloc, across
// processes). The lender listens on an abstract Unix socket (no file to
// clean up; reachable from this network namespace) under a random name and
// hands the descriptor, as SCM_RIGHTS, to every connection that first
// sends its random secret and comes from this user; both travel to the
// borrowers with the rest of a collective exchange (the bootstrap's), so
// only the communicator's ranks know them. A lender serves until Close.

// LendSecretBytes is the size of a lender's secret; LendNameBytes of the
// random part of its socket's name.
const (
	LendSecretBytes = 16
	LendNameBytes   = 8
)

// LendAddr is what a borrower needs: the lender's socket name and secret.
type LendAddr struct {
	Name   [LendNameBytes]byte
	Secret [LendSecretBytes]byte
}

// lendTimeout bounds each exchange with one borrower, on both sides: a
// borrower that connects and says nothing holds one goroutine that long.
const lendTimeout = 10 * time.Second

// Lender lends one file descriptor.
type Lender struct {
	fd   int
	addr LendAddr
	ln   *net.UnixListener

	mu    sync.Mutex
	conns map[*net.UnixConn]struct{}
	wg    sync.WaitGroup
}

// Lend starts lending fd, which the Lender owns from now on (Close closes
// it, even when Lend fails).
func Lend(fd int) (*Lender, error) {
	l := &Lender{fd: fd, conns: map[*net.UnixConn]struct{}{}}
	if _, err := rand.Read(l.addr.Name[:]); err != nil {
		unix.Close(fd)
		return nil, fmt.Errorf("lending a file descriptor: %w", err)
	}
	if _, err := rand.Read(l.addr.Secret[:]); err != nil {
		unix.Close(fd)
		return nil, fmt.Errorf("lending a file descriptor: %w", err)
	}
	ln, err := net.ListenUnix("unix", &net.UnixAddr{Name: l.addr.socket(), Net: "unix"})
	if err != nil {
		unix.Close(fd)
		return nil, fmt.Errorf("lending a file descriptor: %w", err)
	}
	l.ln = ln
	l.wg.Add(1)
	go l.serve()
	return l, nil
}

// Addr returns what borrowers need.
func (l *Lender) Addr() LendAddr { return l.addr }

// socket is the abstract socket's name (a leading @: no file).
func (a LendAddr) socket() string { return "@ringo-fd-" + hex.EncodeToString(a.Name[:]) }

func (l *Lender) serve() {
	defer l.wg.Done()
	for {
		c, err := l.ln.AcceptUnix()
		if err != nil {
			return // closed
		}
		l.mu.Lock()
		if l.conns == nil { // closing
			l.mu.Unlock()
			c.Close()
			return
		}
		l.conns[c] = struct{}{}
		l.wg.Add(1)
		l.mu.Unlock()
		go func() {
			defer l.wg.Done()
			l.answer(c)
			l.mu.Lock()
			delete(l.conns, c)
			l.mu.Unlock()
			c.Close()
		}()
	}
}

// answer hands the descriptor to c if it sends the secret first and runs
// as this user; otherwise it says no. Nothing longer than the secret is
// read.
func (l *Lender) answer(c *net.UnixConn) {
	c.SetDeadline(time.Now().Add(lendTimeout))
	var got [LendSecretBytes]byte
	if _, err := readFull(c, got[:]); err != nil {
		return
	}
	if subtle.ConstantTimeCompare(got[:], l.addr.Secret[:]) != 1 || !sameUser(c) {
		c.Write([]byte{0})
		return
	}
	c.WriteMsgUnix([]byte{1}, unix.UnixRights(l.fd), nil)
}

// sameUser reports whether c's peer runs as this process's user.
func sameUser(c *net.UnixConn) bool {
	raw, err := c.SyscallConn()
	if err != nil {
		return false
	}
	var cred *unix.Ucred
	var cerr error
	if err := raw.Control(func(fd uintptr) {
		cred, cerr = unix.GetsockoptUcred(int(fd), unix.SOL_SOCKET, unix.SO_PEERCRED)
	}); err != nil || cerr != nil {
		return false
	}
	return int(cred.Uid) == os.Getuid()
}

func readFull(c *net.UnixConn, b []byte) (int, error) {
	n := 0
	for n < len(b) {
		m, err := c.Read(b[n:])
		n += m
		if err != nil {
			return n, err
		}
	}
	return n, nil
}

// Close stops lending: borrowers still connected are cut off, and the
// descriptor is closed.
func (l *Lender) Close() error {
	err := l.ln.Close()
	l.mu.Lock()
	for c := range l.conns {
		c.Close()
	}
	l.conns = nil
	l.mu.Unlock()
	l.wg.Wait()
	return errors.Join(err, unix.Close(l.fd))
}

// Borrow returns a descriptor of this process for the one lent at a; the
// caller closes it.
func Borrow(a LendAddr) (int, error) {
	c, err := net.DialUnix("unix", nil, &net.UnixAddr{Name: a.socket(), Net: "unix"})
	if err != nil {
		return -1, fmt.Errorf("borrowing a file descriptor: %w", err)
	}
	defer c.Close()
	c.SetDeadline(time.Now().Add(lendTimeout))
	if _, err := c.Write(a.Secret[:]); err != nil {
		return -1, fmt.Errorf("borrowing a file descriptor: %w", err)
	}
	b := make([]byte, 1)
	oob := make([]byte, unix.CmsgSpace(4))
	n, oobn, _, _, err := c.ReadMsgUnix(b, oob)
	if err != nil {
		return -1, fmt.Errorf("borrowing a file descriptor: %w", err)
	}
	fds, perr := receivedFDs(oob[:oobn])
	if n != 1 || b[0] != 1 || perr != nil || len(fds) != 1 {
		for _, fd := range fds {
			unix.Close(fd)
		}
		return -1, fmt.Errorf("borrowing a file descriptor: the lender refused (a wrong secret, or another user)")
	}
	return fds[0], nil
}

// receivedFDs returns the descriptors of the control messages in oob.
func receivedFDs(oob []byte) ([]int, error) {
	msgs, err := unix.ParseSocketControlMessage(oob)
	if err != nil {
		return nil, err
	}
	var fds []int
	for _, m := range msgs {
		got, err := unix.ParseUnixRights(&m)
		if err != nil {
			return fds, err
		}
		fds = append(fds, got...)
	}
	return fds, nil
}
