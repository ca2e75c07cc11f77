package sys

import (
	"net"
	"time"

	"golang.org/x/sys/unix"
)

// SetTCPUserTimeout bounds how long data written to c may stay
// unacknowledged before the kernel drops the connection (TCP_USER_TIMEOUT):
// a peer host that vanishes while data is in flight — where keepalives,
// which probe idle connections only, never fire — fails the connection
// within d rather than after minutes of retransmissions.
func SetTCPUserTimeout(c *net.TCPConn, d time.Duration) error {
	rc, err := c.SyscallConn()
	if err != nil {
		return err
	}
	var serr error
	if err := rc.Control(func(fd uintptr) {
		serr = unix.SetsockoptInt(int(fd), unix.IPPROTO_TCP, unix.TCP_USER_TIMEOUT, int(d.Milliseconds()))
	}); err != nil {
		return err
	}
	return serr
}
