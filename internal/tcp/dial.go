package tcp

import (
	"context"
	"fmt"
	"net"
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
	var d net.Dialer
	wait := dialBackoffMin
	for {
		c, err := d.DialContext(ctx, "tcp", addr)
		if err == nil {
			Tune(c)
			return c, nil
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
