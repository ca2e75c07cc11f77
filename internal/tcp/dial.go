package tcp

import (
	"context"
	"errors"
	"fmt"
	"net"
	"syscall"
	"time"

	"github.com/ringo-ccl/ringo/internal/sys"
)

const (
	dialBackoffMin = 10 * time.Millisecond
	dialBackoffMax = 200 * time.Millisecond
)

// Dial dials addr ("host:port") until it answers or ctx ends, backing off
// from 10 ms to 200 ms between attempts, so that a peer may start
// listening after this side starts dialing. It returns the connection
// tuned (Tune), or why ctx ended (Ended) with the last attempt's error.
func Dial(ctx context.Context, addr string) (net.Conn, error) {
	return dial(ctx, addr, false)
}

// ErrRefused is a dial of DialUp that the peer's host refused: nothing
// listens at the address any more.
var ErrRefused = errors.New("connection refused")

// DialUp is Dial for a listener known to have been up (a bootstrap rank's,
// whose address the root's table gave): a refusal — its host answers that
// nothing listens there, so the listener closed or its process is gone —
// ends it at once with an error wrapping ErrRefused, instead of a retry.
// Other failures (a host that does not answer) are retried as Dial does.
func DialUp(ctx context.Context, addr string) (net.Conn, error) {
	return dial(ctx, addr, true)
}

func dial(ctx context.Context, addr string, up bool) (net.Conn, error) {
	var d net.Dialer
	wait := dialBackoffMin
	for {
		c, err := d.DialContext(ctx, "tcp", addr)
		if err == nil {
			Tune(c)
			return c, nil
		}
		if up && errors.Is(err, syscall.ECONNREFUSED) {
			return nil, fmt.Errorf("%w: %v", ErrRefused, err)
		}
		t := time.NewTimer(wait)
		select {
		case <-ctx.Done():
			t.Stop()
			return nil, fmt.Errorf("%w (last attempt: %v)", Ended(ctx), err)
		case <-t.C:
		}
		wait = min(2*wait, dialBackoffMax)
	}
}

// Tune makes a dead host's connection fail within seconds (a dead
// process's fails at once: its kernel closes it): keepalives probe it when
// idle, and data unacknowledged for DeadHostAfter ends it when busy. It
// does nothing to a connection that is not TCP.
func Tune(c net.Conn) {
	if tc, ok := c.(*net.TCPConn); ok {
		tc.SetKeepAliveConfig(net.KeepAliveConfig{Enable: true, Idle: time.Second, Interval: time.Second, Count: 5})
		sys.SetTCPUserTimeout(tc, DeadHostAfter)
	}
}

// DeadHostAfter is how long data written on a tuned connection may go
// unacknowledged.
const DeadHostAfter = 10 * time.Second
