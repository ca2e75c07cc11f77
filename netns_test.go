package ringo_test

import (
	"fmt"
	"os"
	"os/exec"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// Multi-host tests on one machine: network namespaces stand in for hosts,
// joined by veth pairs. They need root and iproute2's ip, and skip without
// them (CI runs them as root).

// hostsNet is two namespaces joined by two veth pairs: the "main" pair
// (10.<k>.1.0/24) and the "alt" one (10.<k>.2.0/24).
type hostsNet struct {
	ns   [2]string
	main [2]string // interface names, in ns[0] and ns[1]
	alt  [2]string
	addr [2]string // ns[i]'s address on the main pair
}

func ip(t *testing.T, args ...string) {
	t.Helper()
	if out, err := exec.Command("ip", args...).CombinedOutput(); err != nil {
		t.Fatalf("ip %s: %v: %s", strings.Join(args, " "), err, out)
	}
}

// newHostsNet makes the namespaces, or skips the test when it cannot.
func newHostsNet(t *testing.T) *hostsNet {
	t.Helper()
	if os.Geteuid() != 0 {
		t.Skip("network namespaces need root: the multi-host tests did not run")
	}
	if _, err := exec.LookPath("ip"); err != nil {
		t.Skip("iproute2's ip is not installed: the multi-host tests did not run")
	}
	k := os.Getpid()%200 + 20
	tag := strconv.Itoa(os.Getpid() % 100000)
	h := &hostsNet{
		ns:   [2]string{"ringo-a" + tag, "ringo-b" + tag},
		main: [2]string{"rma" + tag, "rmb" + tag},
		alt:  [2]string{"raa" + tag, "rab" + tag},
		addr: [2]string{fmt.Sprintf("10.%d.1.1", k), fmt.Sprintf("10.%d.1.2", k)},
	}
	for _, ns := range h.ns {
		if out, err := exec.Command("ip", "netns", "add", ns).CombinedOutput(); err != nil {
			t.Skipf("cannot make network namespaces here (%v: %s): the multi-host tests did not run", err, out)
		}
		t.Cleanup(func() { exec.Command("ip", "netns", "del", ns).Run() })
		if out, err := exec.Command("ip", "-n", ns, "link", "set", "lo", "up").CombinedOutput(); err != nil {
			t.Skipf("cannot use network namespaces here (%v: %s): the multi-host tests did not run", err, out)
		}
	}
	for p, pair := range [][2]string{h.main, h.alt} {
		// A machine that makes namespaces but not veth pairs (a container
		// without the module) skips too.
		if out, err := exec.Command("ip", "link", "add", pair[0], "netns", h.ns[0], "type", "veth", "peer", "name", pair[1], "netns", h.ns[1]).CombinedOutput(); err != nil {
			t.Skipf("cannot make veth pairs here (%v: %s): the multi-host tests did not run", err, out)
		}
		for i := range 2 {
			ip(t, "-n", h.ns[i], "addr", "add", fmt.Sprintf("10.%d.%d.%d/24", k, p+1, i+1), "dev", pair[i])
			ip(t, "-n", h.ns[i], "link", "set", pair[i], "up")
		}
	}
	return h
}

// rxBytes returns the bytes interface dev of namespace ns has received.
func (h *hostsNet) rxBytes(t *testing.T, ns, dev string) int64 {
	t.Helper()
	out, err := exec.Command("ip", "netns", "exec", ns, "cat", "/sys/class/net/"+dev+"/statistics/rx_bytes").Output()
	if err != nil {
		t.Fatalf("reading %s's counters: %v", dev, err)
	}
	n, _ := strconv.ParseInt(strings.TrimSpace(string(out)), 10, 64)
	return n
}

// start runs ranks of mode, ranksPer in each namespace (rank r in
// namespace r / ranksPer), launched as torchrun would: rank 0 serves the
// bootstrap root at port on its namespace's main address.
func (h *hostsNet) start(t *testing.T, ranksPer int, mode string, port int, env ...string) []*child {
	t.Helper()
	n := 2 * ranksPer
	kids := make([]*child, n)
	for r := range n {
		host := r / ranksPer
		cmd := exec.Command("ip", "netns", "exec", h.ns[host], os.Args[0], "-test.run=^$")
		cmd.Env = append(os.Environ(), envChild+"="+mode, "RANK="+strconv.Itoa(r), "WORLD_SIZE="+strconv.Itoa(n),
			"MASTER_ADDR="+h.addr[0], "MASTER_PORT="+strconv.Itoa(port), "NCCL_HOSTID="+h.ns[host], "RINGO_DEBUG=INFO")
		cmd.Env = append(cmd.Env, env...)
		kids[r] = startChild(t, cmd)
	}
	return kids
}

// TestHostsOverVeth: two "hosts" of two ranks each run every collective,
// in both protocols; inside a host the ranks share memory, between hosts
// the socket transport carries the data over the interface that
// NCCL_SOCKET_IFNAME names — the alt pair, not the main one the bootstrap
// root is reached by.
func TestHostsOverVeth(t *testing.T) {
	h := newHostsNet(t)
	for i, proto := range []string{"LL", "Simple"} {
		altBefore, mainBefore := h.rxBytes(t, h.ns[1], h.alt[1]), h.rxBytes(t, h.ns[1], h.main[1])
		kids := h.start(t, 2, "every-env", 29400+i, "NCCL_PROTO="+proto, "NCCL_SOCKET_IFNAME=="+h.alt[0]+","+h.alt[1])
		for r, k := range kids {
			if err := waitExit(t, k, 90*time.Second); err != nil {
				t.Fatalf("%s: rank %d: %v; stderr: %s", proto, r, err, k.stderr.String())
			}
			want := map[int]string{0: "via SHM", 1: "via NET/Socket", 2: "via SHM", 3: "via NET/Socket"}[r]
			if !strings.Contains(k.stderr.String(), want) {
				t.Errorf("%s: rank %d does not send %s: %s", proto, r, want, k.stderr.String())
			}
		}
		alt, main := h.rxBytes(t, h.ns[1], h.alt[1])-altBefore, h.rxBytes(t, h.ns[1], h.main[1])-mainBefore
		t.Logf("%s: host b received %d bytes on the chosen interface, %d on the other", proto, alt, main)
		if alt < 1<<20 || main > alt/4 {
			t.Errorf("%s: the data did not go over NCCL_SOCKET_IFNAME's interface: %d bytes there, %d on the other", proto, alt, main)
		}
	}
}

// TestHostsHierarchical: two "hosts" of two ranks each, with the
// hierarchical variant in groups of 2: each group is a host's ranks
// (shared memory), each column crosses between the hosts (sockets), and
// every collective is right. Ranks 0 and 2 send to their ring successor
// through shared memory, so their column's link is the net one they report.
func TestHostsHierarchical(t *testing.T) {
	h := newHostsNet(t)
	kids := h.start(t, 2, "every-hier-env", 29420)
	for r, k := range kids {
		require.NoError(t, waitExit(t, k, 90*time.Second), "rank %d; stderr: %s", r, k.stderr.String())
		assert.Contains(t, k.stderr.String(), "via SHM", "rank %d", r)
		if r%2 == 0 {
			assert.Contains(t, k.stderr.String(), "via NET/Socket", "rank %d's column", r)
		}
	}
}

// TestHostsAnyPeer: two "hosts" of two ranks each connect both ways round
// the ring — the bidirectional variant, every collective — and then any
// pair, a schedule that is no ring (a direct all-gather: every rank sends
// to every other, inside a host through shared memory, between them over
// sockets); each rank reports backward channels through both.
func TestHostsAnyPeer(t *testing.T) {
	h := newHostsNet(t)
	for i, mode := range []string{"every-env", "schedule-env"} {
		kids := h.start(t, 2, mode, 29430+i, "RINGO_VARIANT=bidirectional", "NCCL_MIN_NCHANNELS=2")
		for r, k := range kids {
			require.NoError(t, waitExit(t, k, 90*time.Second), "%s: rank %d; stderr: %s", mode, r, k.stderr.String())
			assert.NotContains(t, k.stderr.String(), "using ring", "%s: rank %d", mode, r)
			assert.Contains(t, k.stderr.String(), "via SHM", "%s: rank %d", mode, r)
			assert.Contains(t, k.stderr.String(), "via NET/Socket", "%s: rank %d", mode, r)
		}
	}
}

// TestHostLinkDown: the link between two hosts goes down while their ranks
// are inside all-reduces; each survivor returns an error naming the other
// within the timeout, and none hangs.
func TestHostLinkDown(t *testing.T) {
	h := newHostsNet(t)
	kids := h.start(t, 1, "loop-env", 29410, "RINGO_TIMEOUT=60s")
	for r, k := range kids {
		if !k.stdout.Scan() || k.stdout.Text() != "ready" {
			t.Fatalf("rank %d did not start: %s", r, k.stderr.String())
		}
	}
	ip(t, "-n", h.ns[0], "link", "set", h.main[0], "down")
	ip(t, "-n", h.ns[0], "link", "set", h.alt[0], "down")
	start := time.Now()
	for r, k := range kids {
		if err := waitExit(t, k, 45*time.Second); err == nil {
			t.Fatalf("rank %d went on without its peer", r)
		}
		other := fmt.Sprintf("rank %d", 1-r)
		msg := k.stderr.String()
		if !strings.Contains(msg, other) {
			t.Errorf("rank %d's error does not name %s: %s", r, other, msg)
		}
		t.Logf("rank %d: %s", r, msg[strings.LastIndex(msg, "child:"):])
	}
	t.Logf("both ranks failed %v after the link went down", time.Since(start).Round(time.Millisecond))
}
