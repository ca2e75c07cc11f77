package tcp

import (
	"fmt"
	"net"
	"net/netip"
	"strings"

	"github.com/ringo-ccl/ringo/internal/env"
)

// socketIfname is NCCL_SOCKET_IFNAME (RINGO_SOCKET_IFNAME first).
var socketIfname = env.Var{Name: "SOCKET_IFNAME", NCCL: true}

// Interfaces returns the network interfaces ringo's TCP connections (the
// bootstrap's and the socket wire's) may use, in preference order (the
// system's order, loopback last), honouring NCCL_SOCKET_IFNAME /
// RINGO_SOCKET_IFNAME with NCCL's syntax: a comma-separated list of name
// prefixes; a leading '^' excludes the listed prefixes instead; a leading '=' makes the names exact rather than prefixes
// ('^=' also works). Only interfaces that are up and have an IP address
// qualify. Without the variable (or with it empty): interfaces that are up,
// not loopback, with an IPv4 address, excluding names starting "docker" and
// "virbr"; if none, loopback. A value matching no interface that qualifies
// is an error naming the variable (wrapping errs.ErrInvalidArgument), as
// NCCL fails ("no socket interface found"); so is a system with no
// qualifying interface, or whose interfaces cannot be listed.
func Interfaces() ([]net.Interface, error) {
	ifs, err := net.Interfaces()
	if err != nil {
		return nil, fmt.Errorf("listing network interfaces: %w", err)
	}
	cands := make([]ifCandidate, 0, len(ifs))
	for _, ifc := range ifs {
		c := ifCandidate{ifc: ifc}
		if addrs, err := ifc.Addrs(); err == nil {
			for _, a := range addrs {
				if p, err := netip.ParsePrefix(a.String()); err == nil {
					c.addrs = append(c.addrs, p.Addr())
				}
			}
		}
		cands = append(cands, c)
	}
	value, name, _ := socketIfname.Lookup()
	chosen, err := chooseInterfaces(cands, name, value)
	if err != nil {
		return nil, err
	}
	if len(chosen) == 0 {
		return nil, fmt.Errorf("no network interface is up with an IP address")
	}
	out := make([]net.Interface, len(chosen))
	for i, c := range chosen {
		out[i] = c.ifc
	}
	return out, nil
}

// ifCandidate is an interface and its IP addresses.
type ifCandidate struct {
	ifc   net.Interface
	addrs []netip.Addr
}

func (c ifCandidate) up() bool       { return c.ifc.Flags&net.FlagUp != 0 }
func (c ifCandidate) loopback() bool { return c.ifc.Flags&net.FlagLoopback != 0 }

func (c ifCandidate) hasIPv4() bool {
	for _, a := range c.addrs {
		if a.Unmap().Is4() {
			return true
		}
	}
	return false
}

// chooseInterfaces applies the selection rule of Interfaces to cands:
// the spec value (of variable name; "" for unset), which must match a
// qualifying interface, else the default rule.
func chooseInterfaces(cands []ifCandidate, name, value string) ([]ifCandidate, error) {
	var chosen []ifCandidate
	if strings.TrimSpace(value) != "" {
		spec := parseIfSpec(value)
		var up []string
		for _, c := range cands {
			if c.up() && len(c.addrs) > 0 {
				up = append(up, c.ifc.Name)
				if spec.match(c.ifc.Name) {
					chosen = append(chosen, c)
				}
			}
		}
		if len(chosen) == 0 {
			return nil, env.Invalid(name, value, "matches no interface that is up with an IP address (those are: %s)", strings.Join(up, ", "))
		}
		return loopbackLast(chosen), nil
	}
	for _, c := range cands {
		n := c.ifc.Name
		if c.up() && !c.loopback() && c.hasIPv4() && !strings.HasPrefix(n, "docker") && !strings.HasPrefix(n, "virbr") {
			chosen = append(chosen, c)
		}
	}
	if len(chosen) == 0 {
		for _, c := range cands {
			if c.up() && c.loopback() && len(c.addrs) > 0 {
				chosen = append(chosen, c)
			}
		}
	}
	return chosen, nil
}

func loopbackLast(cs []ifCandidate) []ifCandidate {
	out := make([]ifCandidate, 0, len(cs))
	for _, c := range cs {
		if !c.loopback() {
			out = append(out, c)
		}
	}
	for _, c := range cs {
		if c.loopback() {
			out = append(out, c)
		}
	}
	return out
}

// ifSpec is a parsed NCCL_SOCKET_IFNAME value.
type ifSpec struct {
	exclude bool     // leading '^': select the interfaces not matching
	exact   bool     // leading '=' (after any '^'): whole names, not prefixes
	names   []string // non-empty, spaces trimmed
}

// parseIfSpec parses NCCL's interface list syntax, as NCCL does: '^' then
// '=' at the start, in that order; empty list entries are ignored.
func parseIfSpec(s string) ifSpec {
	var spec ifSpec
	s = strings.TrimSpace(s)
	if strings.HasPrefix(s, "^") {
		spec.exclude, s = true, s[1:]
	}
	if strings.HasPrefix(s, "=") {
		spec.exact, s = true, s[1:]
	}
	for _, n := range strings.Split(s, ",") {
		if n = strings.TrimSpace(n); n != "" {
			spec.names = append(spec.names, n)
		}
	}
	return spec
}

// match reports whether the interface called name is selected.
func (s ifSpec) match(name string) bool {
	hit := false
	for _, n := range s.names {
		if name == n || (!s.exact && strings.HasPrefix(name, n)) {
			hit = true
			break
		}
	}
	return hit != s.exclude
}

// ListenIP returns the address this process listens on for other ranks (a
// bootstrap root, a socket wire's listener): that of the most preferred
// interface (Interfaces), IPv4 before IPv6; link-local IPv6 addresses,
// which need a zone, are skipped.
func ListenIP() (netip.Addr, error) {
	ifs, err := Interfaces()
	if err != nil {
		return netip.Addr{}, err
	}
	for _, ifc := range ifs {
		addrs, err := ifc.Addrs()
		if err != nil {
			continue
		}
		var v6 netip.Addr
		for _, a := range addrs {
			p, err := netip.ParsePrefix(a.String())
			if err != nil {
				continue
			}
			ip := p.Addr().Unmap()
			if ip.Is4() {
				return ip, nil
			}
			if !v6.IsValid() && !ip.IsLinkLocalUnicast() {
				v6 = ip
			}
		}
		if v6.IsValid() {
			return v6, nil
		}
	}
	return netip.Addr{}, fmt.Errorf("no usable address on interfaces %v", ifNames(ifs))
}

func ifNames(ifs []net.Interface) []string {
	names := make([]string, len(ifs))
	for i, ifc := range ifs {
		names[i] = ifc.Name
	}
	return names
}
