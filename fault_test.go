package ringo_test

import (
	"fmt"
	"math/rand/v2"
	"os"
	"regexp"
	"runtime"
	"strconv"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
)

// The fault-injection suite: ranks in separate processes, one of them
// killed or stalled; every survivor must return an error naming it, within
// seconds, and nothing may be left in /dev/shm. Its shrink trials, where
// the survivors then shrink and carry on, are TestFaultShrinkRandom
// (shrink_proc_test.go). (A socket dropped under a
// live rank: TestNetPeerGone in transport/; corrupt bootstrap frames:
// TestRefuseGarbage, TestRingListenerRefusesStrangers and FuzzDecodeFrame
// in bootstrap/.)

// faultTrials is RINGO_FAULT_TRIALS, or 100 (10 with -short).
func faultTrials() int { return trials("RINGO_FAULT_TRIALS", 100, 10) }

// trials is the number in the environment variable env, or full (short
// with -short).
func trials(env string, full, short int) int {
	if n, err := strconv.Atoi(os.Getenv(env)); err == nil && n > 0 {
		return n
	}
	if testing.Short() {
		return short
	}
	return full
}

// faultRand returns the random source of a fault suite's trials, stream
// apart from other tests', seeded by RINGO_FAULT_SEED or the clock (and
// says which, so that a failure can be reproduced).
func faultRand(t *testing.T, stream uint64) *rand.Rand {
	seed := uint64(time.Now().UnixNano())
	if s, err := strconv.ParseUint(os.Getenv("RINGO_FAULT_SEED"), 10, 64); err == nil {
		seed = s
	}
	t.Logf("seed %d (RINGO_FAULT_SEED reproduces the trials)", seed)
	return rand.New(rand.NewPCG(seed, stream))
}

// TestFaultKillRandom: kill -9 a random rank at a random moment of a
// stream of all-reduces (random rank count, message size and transport:
// shared memory or sockets), faultTrials times. Each survivor must exit
// with an error naming the killed rank as lost within 10 s, and /dev/shm
// must hold nothing of the communicator.
func TestFaultKillRandom(t *testing.T) {
	rng := faultRand(t, 1)
	slowest := time.Duration(0)
	goroutines := runtime.NumGoroutine()
	for trial := range faultTrials() {
		n := 2 + rng.IntN(3)
		victim := rng.IntN(n)
		count := []int{1, 1000, 1 << 14, 1 << 18}[rng.IntN(4)]
		sockets := rng.IntN(2) == 1
		delay := time.Duration(rng.IntN(20)) * time.Millisecond
		cma := rng.IntN(2) // over shared memory, large calls read the peers' buffers (host.RunDirect) or go round the ring
		what := fmt.Sprintf("trial %d: %d ranks, %d floats, sockets %v, RINGO_CMA=%d, rank %d killed %v after all started", trial, n, count, sockets, cma, victim, delay)
		id, kids := startRanksEnv(t, n, func(int) string { return "loop" }, func(int) []string {
			env := []string{fmt.Sprintf("RINGO_TEST_COUNT=%d", count), fmt.Sprintf("RINGO_CMA=%d", cma)}
			if sockets {
				env = append(env, "NCCL_SHM_DISABLE=1", "NCCL_SOCKET_IFNAME=lo")
			}
			return env
		})
		for r, k := range kids {
			if !k.stdout.Scan() || k.stdout.Text() != "ready" {
				t.Fatalf("%s: rank %d did not start: %s", what, r, k.stderr.String())
			}
		}
		time.Sleep(delay)
		kids[victim].cmd.Process.Signal(syscall.SIGKILL)
		start := time.Now()
		for r, k := range kids {
			if r == victim {
				k.cmd.Wait()
				continue
			}
			if err := waitExit(t, k, 10*time.Second); err == nil {
				t.Fatalf("%s: rank %d survived", what, r)
			}
			msg := k.stderr.String()
			if err := namesLost(msg, victim); err != nil {
				t.Fatalf("%s: rank %d: %v", what, r, err)
			}
			if trial == 0 {
				t.Logf("%s: rank %d: %s", what, r, strings.TrimSpace(msg))
			}
		}
		slowest = max(slowest, time.Since(start))
		noLeftovers(t, id)
	}
	t.Logf("%d trials; the slowest took %v from the kill to the last survivor's exit", faultTrials(), slowest)
	// The communicators' bootstrap roots ran in this process: they must
	// all have ended.
	deadline := time.Now().Add(30 * time.Second) // generous: a busy 2-core CI machine
	for runtime.NumGoroutine() > goroutines && time.Now().Before(deadline) {
		time.Sleep(10 * time.Millisecond)
	}
	if g := runtime.NumGoroutine(); g > goroutines {
		t.Errorf("%d goroutines after the trials, %d before", g, goroutines)
	}
}

// lostRE matches a rank named lost: the root's report "rank N lost"
// (transport's lostError), or a net proxy's "net connection to rank N,
// channel C: peer lost" (its connection with N closed). "(peer rank N)",
// the neighbour a wait was on, does not match.
var lostRE = regexp.MustCompile(`\brank (\d+)(?: lost\b|, channel \d+: peer lost\b)`)

// namesLost checks that msg, a survivor's error, is a lost peer and names
// victim, and no other rank, as the one lost.
func namesLost(msg string, victim int) error {
	if !strings.Contains(msg, "peer lost") {
		return fmt.Errorf("the error is not a lost peer: %s", msg)
	}
	found := lostRE.FindAllStringSubmatch(msg, -1)
	if len(found) == 0 {
		return fmt.Errorf("the error names no rank lost (want rank %d): %s", victim, msg)
	}
	for _, m := range found {
		if m[1] != strconv.Itoa(victim) {
			return fmt.Errorf("the error names rank %s lost, not rank %d: %s", m[1], victim, msg)
		}
	}
	return nil
}

// TestNamesLost: the fault suite's check rejects a survivor's error that
// names the wrong rank lost, even when the victim is the peer it waited on.
func TestNamesLost(t *testing.T) {
	const wait = "child: allreduce rank 1 ch0 step 2 recv: waiting for data (peer rank 0): communicator aborted: "
	for _, c := range []struct {
		msg    string
		victim int
		ok     bool
	}{
		{wait + "rank 0 lost: its bootstrap connection closed without Close: peer lost", 0, true},
		{wait + "rank 2 lost: its bootstrap connection closed without Close: peer lost", 0, false}, // the old check passed this
		{wait + "rank 0 lost: its bootstrap connection closed without Close: peer lost", 2, false},
		{wait + "rank 10 lost: its bootstrap connection closed without Close: peer lost", 1, false},
		{wait + "peer lost: recv: the connection closed", 0, false}, // only the neighbour is named
		{wait + "rank 0 lost: timed out", 0, false},
		{wait + "net connection to rank 0, channel 3: peer lost: reading credit: the connection closed", 0, true},
		{wait + "net connection from rank 2, channel 0: peer lost: the connection closed", 0, false},
	} {
		err := namesLost(c.msg, c.victim)
		assert.Equal(t, c.ok, err == nil, "victim %d, %q: %v", c.victim, c.msg, err)
	}
}

// TestFaultStall: one rank stops calling collectives (alive, busy outside
// the library) while the others are inside one; with RINGO_TIMEOUT=1s each
// of them fails with ErrTimeout and a stall report, gathered from every
// rank through the bootstrap root, that names the stalled rank and where it
// is.
func TestFaultStall(t *testing.T) {
	for _, sockets := range []bool{false, true} {
		id, kids := startRanksEnv(t, 3, func(r int) string {
			if r == 1 {
				return "stall"
			}
			return "loop"
		}, func(int) []string {
			env := []string{"RINGO_TIMEOUT=1s", "RINGO_TEST_COUNT=1000"}
			if sockets {
				env = append(env, "NCCL_SHM_DISABLE=1", "NCCL_SOCKET_IFNAME=lo")
			}
			return env
		})
		if !kids[1].stdout.Scan() || kids[1].stdout.Text() != "stalled" {
			t.Fatalf("rank 1 did not stall: %s", kids[1].stderr.String())
		}
		for _, r := range []int{0, 2} {
			if err := waitExit(t, kids[r], 15*time.Second); err == nil {
				t.Fatalf("sockets %v: rank %d survived the stall", sockets, r)
			}
			msg := kids[r].stderr.String()
			t.Logf("sockets %v: rank %d: %s", sockets, r, strings.TrimSpace(msg))
			for _, want := range []string{"timed out", "collective #4: ranks that never called it [1]", "rank 1 at #3"} {
				if !strings.Contains(msg, want) {
					t.Errorf("sockets %v: rank %d's error lacks %q: %s", sockets, r, want, msg)
				}
			}
		}
		kids[1].cmd.Process.Kill()
		kids[1].cmd.Wait()
		noLeftovers(t, id)
	}
}

// TestFaultMismatch: with RINGO_CHECK=1, ranks in separate processes that
// call different collectives (here a count one larger on rank 1) all fail
// with an error naming both ranks and both calls, instead of hanging or
// computing garbage.
func TestFaultMismatch(t *testing.T) {
	id, kids := startRanksEnv(t, 3, func(int) string { return "mismatch" }, func(int) []string {
		return []string{"RINGO_CHECK=1", "RINGO_TIMEOUT=10s"}
	})
	for r, k := range kids {
		if err := waitExit(t, k, 15*time.Second); err == nil {
			t.Fatalf("rank %d completed a mismatched all-reduce", r)
		}
		msg := k.stderr.String()
		if !strings.Contains(msg, "collective #1 differs between ranks") || !strings.Contains(msg, "count 1001") ||
			!strings.Contains(msg, "count 1000") {
			t.Errorf("rank %d: %s", r, msg)
		}
		if r == 0 {
			t.Logf("rank 0: %s", strings.TrimSpace(msg))
		}
	}
	noLeftovers(t, id)
}
