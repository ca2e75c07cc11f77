package rdma

import (
	"errors"
	"fmt"
	"strconv"
	"strings"

	"github.com/ringo-ccl/ringo/internal/errs"
)

// Port names one port of an RDMA device, as "mlx5_0:1".
type Port struct {
	Device string
	Port   int // 1-based
}

func (p Port) String() string { return fmt.Sprintf("%s:%d", p.Device, p.Port) }

// HCASpec is a parsed NCCL_IB_HCA: which device ports to use. The zero
// value selects every port.
type HCASpec struct {
	Exclude bool       // the list started with ^: use every port it does not match
	Exact   bool       // the list started with = (after any ^): names match whole, not as prefixes
	Entries []HCAEntry // empty: no restriction
}

// HCAEntry is one name[:port] of an NCCL_IB_HCA list.
type HCAEntry struct {
	Name string
	Port int // 0: any port
}

// ParseHCA parses an NCCL_IB_HCA value with NCCL's syntax: a
// comma-separated list of name[:port] entries; names are prefixes of device
// names unless the list starts with '=' (exact names); a leading '^'
// inverts the list (so "^=mlx5_1" leaves out exactly mlx5_1). Empty
// entries are ignored. varName (e.g. "NCCL_IB_HCA") names the variable in
// errors, which wrap errs.ErrInvalidArgument.
func ParseHCA(varName, value string) (HCASpec, error) {
	var s HCASpec
	v := strings.TrimSpace(value)
	if strings.HasPrefix(v, "^") {
		s.Exclude, v = true, v[1:]
	}
	if strings.HasPrefix(v, "=") {
		s.Exact, v = true, v[1:]
	}
	bad := func(format string, a ...any) (HCASpec, error) {
		return HCASpec{}, fmt.Errorf("%w: %s=%q: %s", errs.ErrInvalidArgument, varName, value, fmt.Sprintf(format, a...))
	}
	for _, item := range strings.Split(v, ",") {
		item = strings.TrimSpace(item)
		if item == "" {
			continue
		}
		name, port, hasPort := strings.Cut(item, ":")
		name = strings.TrimSpace(name)
		if name == "" {
			return bad("entry %q has no device name", item)
		}
		if strings.ContainsAny(name, "^= \t") {
			return bad("entry %q: device name %q has a stray character ('^' and '=' may only start the list)", item, name)
		}
		e := HCAEntry{Name: name}
		if hasPort {
			n, err := strconv.Atoi(strings.TrimSpace(port))
			if err != nil || n < 1 || n > 255 {
				return bad("entry %q: port %q is not a number in [1, 255]", item, port)
			}
			e.Port = n
		}
		s.Entries = append(s.Entries, e)
	}
	if len(s.Entries) == 0 && (s.Exclude || s.Exact) {
		return bad("the list names no device")
	}
	return s, nil
}

// matches reports whether p is named by an entry of s.
func (s HCASpec) matches(p Port) bool {
	for _, e := range s.Entries {
		if e.Port != 0 && e.Port != p.Port {
			continue
		}
		if s.Exact && p.Device == e.Name || !s.Exact && strings.HasPrefix(p.Device, e.Name) {
			return true
		}
	}
	return false
}

// ErrNoDevice is wrapped by Select when there is no RDMA port at all.
var ErrNoDevice = errors.New("no RDMA device found")

// Select returns the ports of found that s allows, in found's order. It
// fails when found is empty (wrapping ErrNoDevice) and when s leaves
// nothing, listing what was found. varName and value are for the message.
func (s HCASpec) Select(varName, value string, found []Port) ([]Port, error) {
	if len(found) == 0 {
		return nil, fmt.Errorf("%w (rdmamap lists none)", ErrNoDevice)
	}
	var out []Port
	for _, p := range found {
		if len(s.Entries) == 0 || s.matches(p) != s.Exclude {
			out = append(out, p)
		}
	}
	if len(out) == 0 {
		names := make([]string, len(found))
		for i, p := range found {
			names[i] = p.String()
		}
		return nil, fmt.Errorf("%w: %s=%q matches none of the RDMA ports found: %s",
			errs.ErrInvalidArgument, varName, value, strings.Join(names, ", "))
	}
	return out, nil
}
