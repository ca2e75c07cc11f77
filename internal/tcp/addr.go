package tcp

import (
	"context"
	"encoding/binary"
	"fmt"
	"net"
	"net/netip"
	"strconv"

	"github.com/ringo-ccl/ringo/internal/errs"
)

// AddrLen is the size of an address in its wire form: the IP in its
// 16-byte form (IPv4 as ::ffff:a.b.c.d), then the port, big endian.
const AddrLen = 18

// AppendAddr appends a's wire form to b.
func AppendAddr(b []byte, a netip.AddrPort) []byte {
	ip := a.Addr().As16()
	b = append(b, ip[:]...)
	return binary.BigEndian.AppendUint16(b, a.Port())
}

// DecodeAddr decodes the AddrLen bytes at the start of p (an IPv4 address
// comes back unmapped). p must hold them.
func DecodeAddr(p []byte) netip.AddrPort {
	ip := netip.AddrFrom16([16]byte(p[:16])).Unmap()
	return netip.AddrPortFrom(ip, binary.BigEndian.Uint16(p[16:]))
}

// SplitHostPort splits "host:port" with a numeric port (0 allowed).
// Failures wrap errs.ErrInvalidArgument.
func SplitHostPort(addr string) (string, uint16, error) {
	host, p, err := net.SplitHostPort(addr)
	if err != nil {
		return "", 0, fmt.Errorf("address %q: %v: %w", addr, err, errs.ErrInvalidArgument)
	}
	port, err := strconv.ParseUint(p, 10, 16)
	if err != nil {
		return "", 0, fmt.Errorf("address %q: port %q is not a number in [0, 65535]: %w", addr, p, errs.ErrInvalidArgument)
	}
	return host, uint16(port), nil
}

// ResolveHost returns host's IP (an IP literal as it is, unmapped), the
// first IPv4 address if it has any. A zoned IPv6 literal wraps
// errs.ErrInvalidArgument: the zone cannot travel to other hosts.
func ResolveHost(ctx context.Context, host string) (netip.Addr, error) {
	if ip, err := netip.ParseAddr(host); err == nil {
		if ip.Zone() != "" {
			return netip.Addr{}, fmt.Errorf("address %s: zoned IPv6 addresses cannot travel in a unique ID: %w", host, errs.ErrInvalidArgument)
		}
		return ip.Unmap(), nil
	}
	ips, err := net.DefaultResolver.LookupNetIP(ctx, "ip", host)
	if err != nil {
		return netip.Addr{}, fmt.Errorf("resolving %q: %w", host, err)
	}
	for _, ip := range ips {
		if ip.Unmap().Is4() {
			return ip.Unmap(), nil
		}
	}
	for _, ip := range ips {
		if ip.Zone() == "" {
			return ip, nil
		}
	}
	return netip.Addr{}, fmt.Errorf("resolving %q: no usable address in %v", host, ips)
}
