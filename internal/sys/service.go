package sys

import (
	"context"
	"crypto/rand"
	"crypto/subtle"
	"encoding/binary"
	"encoding/hex"
	"errors"
	"fmt"
	"io"
	"net"
	"os"
	"sync"
	"time"

	"golang.org/x/sys/unix"
)

// A Service answers requests from other processes of this host: what a
// rank's peers ask of it outside any collective call (map a buffer it
// registered), and file descriptors lent to them (CUDA's shareable memory
// travels as one: a window's buffer from ncclMemAlloc, across processes).
// It listens on an abstract Unix socket (no file to clean up; reachable
// from this network namespace) under a random name and answers only
// connections that first send its random secret and come from this user;
// both travel to the peers with the rest of a collective exchange (the
// bootstrap's), so only the communicator's ranks know them. A request
// longer than the service takes is refused before it is read.

// ServiceSecretBytes is the size of a service's secret; ServiceNameBytes of
// the random part of its socket's name.
const (
	ServiceSecretBytes = 16
	ServiceNameBytes   = 8
)

// ServiceAddr is what a caller needs: the service's socket name and secret.
type ServiceAddr struct {
	Name   [ServiceNameBytes]byte
	Secret [ServiceSecretBytes]byte
}

// serviceTimeout bounds each exchange with one caller, on both sides: a
// caller that connects and says nothing holds one goroutine that long.
const serviceTimeout = 10 * time.Second

// Handler answers one request: the response and a file descriptor to
// attach to it (-1: none; the service does not close it).
type Handler func(req []byte) (resp []byte, fd int)

// Service serves requests until Close.
type Service struct {
	addr   ServiceAddr
	ln     *net.UnixListener
	maxReq int
	handle Handler

	mu    sync.Mutex
	conns map[*net.UnixConn]struct{}
	wg    sync.WaitGroup
}

// Serve starts a service that answers requests of at most maxReq bytes
// with handle, one goroutine a connection.
func Serve(maxReq int, handle Handler) (*Service, error) {
	s := &Service{maxReq: maxReq, handle: handle, conns: map[*net.UnixConn]struct{}{}}
	if _, err := rand.Read(s.addr.Name[:]); err != nil {
		return nil, fmt.Errorf("starting a service: %w", err)
	}
	if _, err := rand.Read(s.addr.Secret[:]); err != nil {
		return nil, fmt.Errorf("starting a service: %w", err)
	}
	ln, err := net.ListenUnix("unix", &net.UnixAddr{Name: s.addr.socket(), Net: "unix"})
	if err != nil {
		return nil, fmt.Errorf("starting a service: %w", err)
	}
	s.ln = ln
	s.wg.Add(1)
	go s.serve()
	return s, nil
}

// Addr returns what callers need.
func (s *Service) Addr() ServiceAddr { return s.addr }

// socket is the abstract socket's name (a leading @: no file).
func (a ServiceAddr) socket() string { return "@ringo-" + hex.EncodeToString(a.Name[:]) }

func (s *Service) serve() {
	defer s.wg.Done()
	for {
		c, err := s.ln.AcceptUnix()
		if err != nil {
			return // closed
		}
		s.mu.Lock()
		if s.conns == nil { // closing
			s.mu.Unlock()
			c.Close()
			return
		}
		s.conns[c] = struct{}{}
		s.wg.Add(1)
		s.mu.Unlock()
		go func() {
			defer s.wg.Done()
			s.answer(c)
			s.mu.Lock()
			delete(s.conns, c)
			s.mu.Unlock()
			c.Close()
		}()
	}
}

// answer reads one request from c — the secret, then its length and body —
// and writes the handler's response. A caller with the wrong secret, of
// another user, or with a request longer than maxReq gets no answer.
func (s *Service) answer(c *net.UnixConn) {
	c.SetDeadline(time.Now().Add(serviceTimeout))
	var head [ServiceSecretBytes + 4]byte
	if _, err := io.ReadFull(c, head[:]); err != nil {
		return
	}
	n := int(binary.LittleEndian.Uint32(head[ServiceSecretBytes:]))
	if subtle.ConstantTimeCompare(head[:ServiceSecretBytes], s.addr.Secret[:]) != 1 || !sameUser(c) || n > s.maxReq {
		return
	}
	req := make([]byte, n)
	if _, err := io.ReadFull(c, req); err != nil {
		return
	}
	resp, fd := s.handle(req)
	msg := binary.LittleEndian.AppendUint32(make([]byte, 0, 4+len(resp)), uint32(len(resp)))
	msg = append(msg, resp...)
	var rights []byte
	if fd >= 0 {
		rights = unix.UnixRights(fd)
	}
	c.WriteMsgUnix(msg, rights, nil)
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

// Close stops the service: callers still connected are cut off.
func (s *Service) Close() error {
	err := s.ln.Close()
	s.mu.Lock()
	for c := range s.conns {
		c.Close()
	}
	s.conns = nil
	s.mu.Unlock()
	s.wg.Wait()
	return err
}

// Call sends req to the service at a and returns its response (at most
// maxResp bytes) and the file descriptor attached to it (-1: none), which
// the caller closes. It gives up when ctx ends, or after serviceTimeout.
func Call(ctx context.Context, a ServiceAddr, req []byte, maxResp int) ([]byte, int, error) {
	deadline := time.Now().Add(serviceTimeout)
	if d, ok := ctx.Deadline(); ok && d.Before(deadline) {
		deadline = d
	}
	var d net.Dialer
	conn, err := d.DialContext(ctx, "unix", a.socket())
	if err != nil {
		return nil, -1, fmt.Errorf("calling a peer's service: %w", err)
	}
	c := conn.(*net.UnixConn)
	defer c.Close()
	c.SetDeadline(deadline)
	msg := append(a.Secret[:len(a.Secret):len(a.Secret)], binary.LittleEndian.AppendUint32(nil, uint32(len(req)))...)
	if _, err := c.Write(append(msg, req...)); err != nil {
		return nil, -1, fmt.Errorf("calling a peer's service: %w", err)
	}
	head := make([]byte, 4)
	oob := make([]byte, unix.CmsgSpace(4))
	n, oobn, _, _, err := c.ReadMsgUnix(head, oob)
	fds, perr := receivedFDs(oob[:oobn])
	fail := func(err error) ([]byte, int, error) {
		for _, fd := range fds {
			unix.Close(fd)
		}
		return nil, -1, err
	}
	switch {
	case errors.Is(err, io.EOF) || errors.Is(err, unix.ECONNRESET) || (err == nil && n == 0): // closed unanswered
		return fail(fmt.Errorf("calling a peer's service: it refused (a wrong secret, another user, or a request too long)"))
	case err != nil:
		return fail(fmt.Errorf("calling a peer's service: %w", err))
	case perr != nil || len(fds) > 1:
		return fail(fmt.Errorf("calling a peer's service: %d descriptors in its answer (%v)", len(fds), perr))
	}
	if _, err := io.ReadFull(c, head[n:]); err != nil {
		return fail(fmt.Errorf("calling a peer's service: %w", err))
	}
	size := int(binary.LittleEndian.Uint32(head))
	if size > maxResp {
		return fail(fmt.Errorf("calling a peer's service: a response of %d bytes, at most %d expected", size, maxResp))
	}
	resp := make([]byte, size)
	if _, err := io.ReadFull(c, resp); err != nil {
		return fail(fmt.Errorf("calling a peer's service: %w", err))
	}
	fd := -1
	if len(fds) == 1 {
		fd = fds[0]
	}
	return resp, fd, nil
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

// Lender lends one file descriptor: a service whose every answer carries
// it.
type Lender struct {
	*Service
	fd int
}

// Lend starts lending fd, which the Lender owns from now on (Close closes
// it, even when Lend fails).
func Lend(fd int) (*Lender, error) {
	s, err := Serve(0, func([]byte) ([]byte, int) { return []byte{1}, fd })
	if err != nil {
		unix.Close(fd)
		return nil, fmt.Errorf("lending a file descriptor: %w", err)
	}
	return &Lender{Service: s, fd: fd}, nil
}

// Close stops lending and closes the descriptor.
func (l *Lender) Close() error { return errors.Join(l.Service.Close(), unix.Close(l.fd)) }

// Borrow returns a descriptor of this process for the one lent at a; the
// caller closes it.
func Borrow(ctx context.Context, a ServiceAddr) (int, error) {
	resp, fd, err := Call(ctx, a, nil, 1)
	switch {
	case err != nil:
		return -1, fmt.Errorf("borrowing a file descriptor: %w", err)
	case fd < 0 || len(resp) != 1:
		if fd >= 0 {
			unix.Close(fd)
		}
		return -1, fmt.Errorf("borrowing a file descriptor: the answer carried none")
	}
	return fd, nil
}
