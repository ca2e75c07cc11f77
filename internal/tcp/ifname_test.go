package tcp

import (
	"net"
	"net/netip"
	"os"
	"reflect"
	"strings"
	"testing"
	"unicode"

	"github.com/ringo-ccl/ringo/internal/errs"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

func TestIfSpecMatch(t *testing.T) {
	cases := []struct {
		spec string
		in   []string // selected
		out  []string // not selected
	}{
		{"eth", []string{"eth0", "eth1", "eth"}, []string{"ib0", "veth0", "lo"}},
		{"eth0", []string{"eth0", "eth01"}, []string{"eth1"}},
		{"=eth0", []string{"eth0"}, []string{"eth01", "eth1"}},
		{"^docker", []string{"eth0", "lo", "ib0"}, []string{"docker0", "docker"}},
		{"^=eth0", []string{"eth01", "eth1", "lo"}, []string{"eth0"}},
		{"ib,eth1", []string{"ib0", "ibp1s0", "eth1"}, []string{"eth0", "lo"}},
		{" eth0 , ,ib ", []string{"eth0", "ib3"}, []string{"eth1"}},
		{"^eth,lo", []string{"ib0", "docker0"}, []string{"eth0", "lo"}},
		{"=^eth", nil, []string{"eth0", "eth"}}, // '=' then '^': the '^' is part of the name
		{"^", []string{"eth0", "lo"}, nil},      // excludes nothing
	}
	for _, c := range cases {
		s := parseIfSpec(c.spec)
		for _, n := range c.in {
			if !s.match(n) {
				t.Errorf("%q should select %q", c.spec, n)
			}
		}
		for _, n := range c.out {
			if s.match(n) {
				t.Errorf("%q should not select %q", c.spec, n)
			}
		}
	}
	if s := parseIfSpec("=^eth"); !s.exact || s.exclude || !reflect.DeepEqual(s.names, []string{"^eth"}) {
		t.Errorf("=^eth parsed as %+v", s)
	}
}

func candidate(name string, flags net.Flags, addrs ...string) ifCandidate {
	c := ifCandidate{ifc: net.Interface{Name: name, Flags: flags}}
	for _, a := range addrs {
		c.addrs = append(c.addrs, netip.MustParseAddr(a))
	}
	return c
}

func TestChooseInterfaces(t *testing.T) {
	up, lo := net.FlagUp, net.FlagUp|net.FlagLoopback
	system := []ifCandidate{
		candidate("lo", lo, "127.0.0.1", "::1"),
		candidate("docker0", up, "172.17.0.1"),
		candidate("eth0", up, "10.0.0.2"),
		candidate("virbr0", up, "192.168.122.1"),
		candidate("ib0", up, "fd00::5"),  // IPv6 only
		candidate("eth1", 0, "10.0.1.2"), // down
		candidate("ib1", up, "10.1.0.2"),
	}
	cases := []struct {
		name, value string
		want        []string
		err         string
	}{
		{"default", "", []string{"eth0", "ib1"}, ""},
		{"prefix", "ib", []string{"ib0", "ib1"}, ""},
		{"exact", "=ib1", []string{"ib1"}, ""},
		{"exclude", "^eth,ib", []string{"docker0", "virbr0", "lo"}, ""},
		{"exclude exact", "^=eth0,lo", []string{"docker0", "virbr0", "ib0", "ib1"}, ""},
		{"loopback by name", "lo", []string{"lo"}, ""},
		// As NCCL: a value matching nothing is an error, not the default.
		{"down only", "eth1", nil, `NCCL_SOCKET_IFNAME="eth1": matches no interface that is up with an IP address (those are: lo, docker0, eth0, virbr0, ib0, ib1)`},
		{"no match", "=bond0", nil, `NCCL_SOCKET_IFNAME="=bond0": matches no interface`},
		{"separators only", " , ", nil, `NCCL_SOCKET_IFNAME=" , ": matches no interface`},
		{"excludes all", "^=lo,docker0,eth0,virbr0,ib0,ib1", nil, `matches no interface`},
	}
	for _, c := range cases {
		got, err := chooseInterfaces(system, "NCCL_SOCKET_IFNAME", c.value)
		if c.err != "" {
			assert.ErrorIs(t, err, errs.ErrInvalidArgument, c.name)
			assert.ErrorContains(t, err, c.err, c.name)
			assert.Empty(t, got, c.name)
			continue
		}
		require.NoError(t, err, c.name)
		var names []string
		for _, g := range got {
			names = append(names, g.ifc.Name)
		}
		assert.Equal(t, c.want, names, c.name)
	}
	// Only loopback and the excluded kinds: loopback.
	bare := []ifCandidate{candidate("docker0", up, "172.17.0.1"), candidate("lo", lo, "127.0.0.1"), candidate("ib0", up, "fd00::5")}
	if got, _ := chooseInterfaces(bare, "", ""); len(got) != 1 || got[0].ifc.Name != "lo" {
		t.Errorf("without a usable interface: %v, want lo", got)
	}
}

// TestInterfacesOnThisMachine runs the real selection: there is at least
// loopback, and naming it selects it alone.
func TestInterfacesOnThisMachine(t *testing.T) {
	for _, v := range []string{"RINGO_SOCKET_IFNAME", "NCCL_SOCKET_IFNAME"} {
		t.Setenv(v, "") // restored when the test ends
		os.Unsetenv(v)
	}
	ifs, err := Interfaces()
	if err != nil || len(ifs) == 0 {
		t.Fatalf("%v, %v", ifs, err)
	}
	loName := ""
	all, _ := net.Interfaces()
	for _, ifc := range all {
		if ifc.Flags&net.FlagLoopback != 0 && ifc.Flags&net.FlagUp != 0 {
			loName = ifc.Name
		}
	}
	if loName == "" {
		t.Skip("no loopback interface up")
	}
	t.Setenv("NCCL_SOCKET_IFNAME", "="+loName)
	ifs, err = Interfaces()
	if err != nil || len(ifs) != 1 || ifs[0].Name != loName {
		t.Fatalf("NCCL_SOCKET_IFNAME==%s: %v, %v", loName, ifs, err)
	}
	t.Setenv("NCCL_SOCKET_IFNAME", "=no-such-interface")
	_, err = Interfaces()
	assert.ErrorContains(t, err, `NCCL_SOCKET_IFNAME="=no-such-interface": matches no interface`)
	t.Setenv("RINGO_SOCKET_IFNAME", "="+loName) // RINGO_ wins over NCCL_
	ifs, err = Interfaces()
	if err != nil || len(ifs) != 1 || ifs[0].Name != loName {
		t.Fatalf("RINGO_SOCKET_IFNAME==%s: %v, %v", loName, ifs, err)
	}
}

// FuzzIfSpec: '^' inverts a selection, and an exact list selects no more
// than the same list of prefixes.
func FuzzIfSpec(f *testing.F) {
	f.Add("eth,ib", "eth0")
	f.Add("=lo", "lo")
	f.Add(" , ", "x")
	f.Fuzz(func(t *testing.T, list, name string) {
		list = strings.TrimLeftFunc(list, func(r rune) bool { return r == '^' || r == '=' || unicode.IsSpace(r) })
		plain, not := parseIfSpec(list), parseIfSpec("^"+list)
		exact, notExact := parseIfSpec("="+list), parseIfSpec("^="+list)
		if plain.match(name) == not.match(name) {
			t.Fatalf("%q and ^%q agree on %q", list, list, name)
		}
		if exact.match(name) == notExact.match(name) {
			t.Fatalf("=%q and ^=%q agree on %q", list, list, name)
		}
		if exact.match(name) && !plain.match(name) {
			t.Fatalf("=%q selects %q but %q does not", list, name, list)
		}
	})
}
