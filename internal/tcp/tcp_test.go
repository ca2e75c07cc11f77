package tcp

import (
	"context"
	"errors"
	"net"
	"net/netip"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/ringo-ccl/ringo/internal/errs"
)

func TestAddrRoundTrip(t *testing.T) {
	for _, s := range []string{"127.0.0.1:4242", "[::1]:1", "[2001:db8::7]:65535", "10.0.0.1:0"} {
		a := netip.MustParseAddrPort(s)
		b := AppendAddr([]byte{0xee}, a)
		require.Len(t, b, 1+AddrLen, s)
		assert.Equal(t, a, DecodeAddr(b[1:]), s)
	}
}

func TestSplitHostPort(t *testing.T) {
	host, port, err := SplitHostPort("node7:29500")
	require.NoError(t, err)
	assert.Equal(t, "node7", host)
	assert.Equal(t, uint16(29500), port)
	host, port, err = SplitHostPort("[::1]:0")
	require.NoError(t, err)
	assert.Equal(t, "::1", host)
	assert.Zero(t, port)
	for _, bad := range []string{"node7", "node7:http", "node7:65536", "node7:-1", ""} {
		_, _, err := SplitHostPort(bad)
		assert.ErrorIs(t, err, errs.ErrInvalidArgument, bad)
	}
}

func TestResolveHost(t *testing.T) {
	ctx, cancel := context.WithTimeout(context.Background(), time.Minute)
	defer cancel()
	ip, err := ResolveHost(ctx, "::ffff:10.1.2.3")
	require.NoError(t, err)
	assert.Equal(t, netip.MustParseAddr("10.1.2.3"), ip, "a mapped literal comes back unmapped")
	_, err = ResolveHost(ctx, "fe80::1%eth0")
	assert.ErrorIs(t, err, errs.ErrInvalidArgument)
	ip, err = ResolveHost(ctx, "localhost")
	require.NoError(t, err)
	assert.True(t, ip.IsLoopback(), "localhost resolved to %v", ip)
}

// closedPort returns a loopback address where nothing listens and that
// nothing else picks while the test runs: a connection accepted on it
// keeps it bound after its listener closes (Listen, with SO_REUSEADDR, can
// still bind it).
func closedPort(t *testing.T) string {
	t.Helper()
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	require.NoError(t, err)
	defer ln.Close()
	c, err := net.Dial("tcp", ln.Addr().String())
	require.NoError(t, err)
	s, err := ln.Accept()
	require.NoError(t, err)
	t.Cleanup(func() { c.Close(); s.Close() })
	return ln.Addr().String()
}

// TestDialWaitsForListener: a Dial that starts before anything listens
// connects once something does.
func TestDialWaitsForListener(t *testing.T) {
	addr := closedPort(t)

	ctx, cancel := context.WithTimeout(context.Background(), time.Minute)
	defer cancel()
	type dialed struct {
		c   net.Conn
		err error
	}
	res := make(chan dialed, 1)
	go func() {
		c, err := Dial(ctx, addr)
		res <- dialed{c, err}
	}()
	ln, err := net.Listen("tcp", addr)
	require.NoError(t, err)
	defer ln.Close()
	a, err := ln.Accept()
	require.NoError(t, err)
	defer a.Close()
	d := <-res
	require.NoError(t, d.err)
	d.c.Close()
}

// TestDialEndsWithContext: with nothing listening, Dial returns once its
// context ends, saying why and what the last attempt met.
func TestDialEndsWithContext(t *testing.T) {
	addr := closedPort(t)

	ctx, cancel := context.WithTimeout(context.Background(), 100*time.Millisecond)
	defer cancel()
	_, err := Dial(ctx, addr)
	assert.ErrorIs(t, err, errs.ErrTimeout)
	assert.ErrorContains(t, err, "last attempt")

	cctx, ccancel := context.WithCancelCause(context.Background())
	why := errors.New("the rank left")
	ccancel(why)
	_, err = Dial(cctx, addr)
	assert.ErrorIs(t, err, why)
}

// TestDialUpRefused: DialUp gives up at the first refusal (nothing
// listens: the listener closed), where Dial would retry until its context
// ends; a listener that is up is dialed as Dial does.
func TestDialUpRefused(t *testing.T) {
	addr := closedPort(t)
	ctx, cancel := context.WithTimeout(context.Background(), time.Minute)
	defer cancel()
	_, err := DialUp(ctx, addr)
	require.ErrorIs(t, err, ErrRefused)
	assert.NoError(t, ctx.Err(), "DialUp waited for its context")

	ln, err := net.Listen("tcp", "127.0.0.1:0")
	require.NoError(t, err)
	defer ln.Close()
	c, err := DialUp(ctx, ln.Addr().String())
	require.NoError(t, err)
	c.Close()
}

// TestBindEndsBlockedCalls: a read blocked on a bound connection returns
// when the context ends, and EndedBy names the context's cause; after
// release, ending another context leaves the connection alone.
func TestBindEndsBlockedCalls(t *testing.T) {
	a, b := net.Pipe()
	defer a.Close()
	defer b.Close()
	ctx, cancel := context.WithCancelCause(context.Background())
	release := Bind(ctx, a)
	why := errors.New("closing")
	readErr := make(chan error, 1)
	go func() {
		_, err := a.Read(make([]byte, 1))
		readErr <- err
	}()
	cancel(why)
	err := <-readErr
	require.Error(t, err)
	assert.ErrorIs(t, EndedBy(ctx, err), why)
	release()

	ctx2, cancel2 := context.WithCancel(context.Background())
	release2 := Bind(ctx2, a)
	release2()
	cancel2()
	go b.Write([]byte{7})
	buf := make([]byte, 1)
	_, err = a.Read(buf)
	require.NoError(t, err, "a released binding still set a deadline")
	assert.Equal(t, byte(7), buf[0])
	assert.NoError(t, Ended(context.Background()))
	assert.ErrorIs(t, Ended(ctx2), context.Canceled)
}
