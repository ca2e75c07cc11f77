package bootstrap

import (
	"io"
	"net"
	"os"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// TestHelloGate: with every slot taken, enter closes the oldest connection
// still pending once it has waited helloGrace — never one whose hello was
// claimed — and returns when its goroutine leaves; enter gives up when told
// to stop.
func TestHelloGate(t *testing.T) {
	g := newHelloGate(2)
	stop := make(chan struct{})
	conns := make([]net.Conn, 3)
	for i := range conns {
		var peer net.Conn
		conns[i], peer = net.Pipe()
		t.Cleanup(func() { conns[i].Close(); peer.Close() })
	}
	a, b, c := conns[0], conns[1], conns[2]
	require.True(t, g.enter(stop))
	g.add(a) // silent
	require.True(t, g.enter(stop))
	g.add(b)
	require.True(t, g.claim(b)) // b proved the secret: not evictable

	start := time.Now()
	entered := make(chan bool, 1)
	go func() { entered <- g.enter(stop) }()
	// a's vetting goroutine: its read fails once the gate closes a.
	_, err := a.Read(make([]byte, 1))
	require.ErrorIs(t, err, io.ErrClosedPipe)
	assert.GreaterOrEqual(t, time.Since(start), helloGrace-10*time.Millisecond, "a was evicted before helloGrace")
	g.leave(a)
	require.True(t, <-entered)
	g.add(c)
	assert.False(t, g.claim(a), "a evicted, yet claimed")

	// Both slots taken (b, c), and c is young: enter waits, and gives up on stop.
	go func() { entered <- g.enter(stop) }()
	close(stop)
	assert.False(t, <-entered)
	b.SetDeadline(time.Now())
	_, err = b.Read(make([]byte, 1))
	assert.ErrorIs(t, err, os.ErrDeadlineExceeded, "b, claimed, was closed")
}
