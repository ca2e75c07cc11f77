package ringo_test

import (
	"fmt"
	"strings"
	"syscall"
	"testing"
	"time"
)

// Ranks in separate processes over the socket transport: all of them
// (NCCL_SHM_DISABLE=1), or two "hosts" told apart by NCCL_HOSTID, each
// connected inside through shared memory.

func TestProcessesOverSockets(t *testing.T) {
	for _, proto := range []string{"LL", "Simple"} {
		t.Run(proto, func(t *testing.T) {
			id, kids := startRanksEnv(t, 3, func(int) string { return "every" }, func(int) []string {
				// Simple runs with RINGO_CHECK=1: every call compared, every post checksummed.
				return []string{"NCCL_SHM_DISABLE=1", "NCCL_PROTO=" + proto, "NCCL_SOCKET_IFNAME=lo", "RINGO_CHECK=" + map[string]string{"LL": "0", "Simple": "1"}[proto]}
			})
			for r, k := range kids {
				if err := waitExit(t, k, 90*time.Second); err != nil {
					t.Fatalf("rank %d: %v; stderr: %s", r, err, k.stderr.String())
				}
			}
			noLeftovers(t, id)
		})
	}
}

// TestHostsInterleaved: ranks 0 and 2 on host a, 1 and 3 on host b. The
// ring must visit a's ranks, then b's, so only two links cross hosts;
// RINGO_DEBUG=INFO prints each rank's send link.
func TestHostsInterleaved(t *testing.T) {
	_, kids := startRanksEnv(t, 4, func(int) string { return "every" }, func(r int) []string {
		return []string{fmt.Sprintf("NCCL_HOSTID=host-%c", 'a'+r%2), "RINGO_DEBUG=INFO", "NCCL_SOCKET_IFNAME=lo"}
	})
	// Ring 0 → 2 → 1 → 3 → 0: 0 and 1 send through shared memory, 2 and 3
	// across hosts.
	want := map[int]string{0: "0 -> 2 via SHM", 2: "2 -> 1 via NET/Socket", 1: "1 -> 3 via SHM", 3: "3 -> 0 via NET/Socket"}
	for r, k := range kids {
		if err := waitExit(t, k, 90*time.Second); err != nil {
			t.Fatalf("rank %d: %v; stderr: %s", r, err, k.stderr.String())
		}
		if !strings.Contains(k.stderr.String(), want[r]) {
			t.Errorf("rank %d does not say %q: %s", r, want[r], k.stderr.String())
		}
	}
}

// TestKillOverSockets: kill -9 one rank while all are inside all-reduces
// over sockets; every survivor fails promptly, naming it.
func TestKillOverSockets(t *testing.T) {
	_, kids := startRanksEnv(t, 3, func(int) string { return "loop" }, func(int) []string {
		return []string{"NCCL_SHM_DISABLE=1", "NCCL_SOCKET_IFNAME=lo"}
	})
	for r, k := range kids {
		if !k.stdout.Scan() || k.stdout.Text() != "ready" {
			t.Fatalf("rank %d did not start: %s", r, k.stderr.String())
		}
	}
	kids[1].cmd.Process.Signal(syscall.SIGKILL)
	for _, r := range []int{0, 2} {
		if err := waitExit(t, kids[r], 10*time.Second); err == nil {
			t.Fatalf("rank %d survived the loss of rank 1", r)
		}
		if err := namesLost(kids[r].stderr.String(), 1); err != nil {
			t.Fatalf("rank %d: %v", r, err)
		}
	}
}

// TestNetForcedIBWithoutRDMA: NCCL_NET=IB on machines without RDMA fails
// communicator creation with an error that says so; NCCL_NET naming no
// transport fails it too, naming the variable (as NCCL: no net plugin has
// that name).
func TestNetForcedIBWithoutRDMA(t *testing.T) {
	_, kids := startRanksEnv(t, 2, func(int) string { return "check" }, func(int) []string {
		return []string{"NCCL_SHM_DISABLE=1", "NCCL_NET=IB", "NCCL_SOCKET_IFNAME=lo"}
	})
	for r, k := range kids {
		if err := waitExit(t, k, 30*time.Second); err == nil {
			t.Fatalf("rank %d made a communicator with NCCL_NET=IB and no RDMA", r)
		}
		if msg := k.stderr.String(); !strings.Contains(msg, "NCCL_NET=IB") || !strings.Contains(msg, "no RDMA") {
			t.Errorf("rank %d: %s", r, msg)
		}
	}
	_, kids = startRanksEnv(t, 2, func(int) string { return "check" }, func(int) []string {
		return []string{"NCCL_SHM_DISABLE=1", "NCCL_NET=carrier-pigeon", "NCCL_SOCKET_IFNAME=lo"}
	})
	for r, k := range kids {
		if err := waitExit(t, k, 30*time.Second); err == nil {
			t.Fatalf("rank %d made a communicator with NCCL_NET=carrier-pigeon", r)
		}
		if msg := k.stderr.String(); !strings.Contains(msg, `NCCL_NET="carrier-pigeon": names no transport ringo has (want Socket or IB)`) {
			t.Errorf("rank %d: %s", r, msg)
		}
	}
}
