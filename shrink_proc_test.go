package ringo_test

import (
	"context"
	"errors"
	"fmt"
	"os"
	"os/exec"
	"runtime"
	"slices"
	"strconv"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/ringo-ccl/ringo"
	"github.com/ringo-ccl/ringo/shm"
)

// Surviving a lost rank across processes: ranks are processes (this test
// binary run again, see childMain), one is killed with SIGKILL, and the
// survivors learn who is gone, shrink and carry on, checked bit for bit.

// isShrinkMode reports whether mode (with its suffixes) is one of
// childShrink's.
func isShrinkMode(mode string) bool {
	for _, m := range []string{"shrink", "regrow", "revoke", "drop", "grow-join"} {
		if strings.HasPrefix(mode, m) {
			return true
		}
	}
	return false
}

// childShrink is a rank process of the shrink tests. It prints on stdout
// "tag T" (T names its communicator's shared-memory segments), then, by
// mode:
//   - "shrink": "ready" after its first all-reduce; all-reduces until one
//     fails, which must be a lost peer (printed on stderr); rank
//     RINGO_TEST_DIE then kills itself; "lost [L]" (Lost); ShrinkAbort
//     excluding L (again with the new Lost, at most twice more, while it
//     fails: printed on stderr); "recovered NS" (the wall clock, in
//     ns, once the first all-reduce on the shrunk communicator is right);
//     "tag T" of the shrunk communicator; every collective checked on it
//     (checkEvery, and checkP2PProcs with RINGO_TEST_P2P=1); "ok R N", its
//     new rank and size.
//   - "revoke": all-reduces; after five, rank RINGO_TEST_REVOKER revokes
//     instead; every rank's call then fails with ErrRevoked naming it (the
//     others' in progress, the revoker's next), printed on stderr; the
//     ranks shrink the revoked communicator excluding no one (the default
//     mode), check every collective on it and print "ok R N".
//   - "regrow": "shrink", then the shrunk communicator grows back to the
//     old size (regrow): its rank 0 prints "growid ID" for the
//     replacement the test starts (mode "grow-join", childGrowJoin).
//   - "drop": the ranks but the last shrink without it (the default mode:
//     it is alive) and check every collective on the new communicator,
//     then all the ranks, the dropped one too, check an all-reduce on the
//     old one; "ok".
func childShrink(ctx context.Context, mode string, c *ringo.Comm) int {
	fail := func(code int, format string, a ...any) int {
		fmt.Fprintf(os.Stderr, "child: "+format+"\n", a...)
		return code
	}
	fmt.Printf("tag %s\n", ringo.Tag(c))
	n, rank := c.Size(), c.Rank()
	var nc *ringo.Comm
	switch mode {
	case "shrink", "regrow":
		buf := make([]float32, testCount())
		var err error
		for i := 0; err == nil; i++ {
			if err = ringo.AllReduce(ctx, c, buf, buf, ringo.OpSum); err == nil && i == 0 {
				fmt.Println("ready")
			}
		}
		if !errors.Is(err, ringo.ErrPeerLost) {
			return fail(6, "not a lost peer: %v", err)
		}
		fmt.Fprintln(os.Stderr, "child:", err)
		if die, err := strconv.Atoi(os.Getenv("RINGO_TEST_DIE")); err == nil && die == rank {
			syscall.Kill(os.Getpid(), syscall.SIGKILL) // a second loss, as the survivors shrink
		}
		if nc, err = shrinkLost(ctx, c); err != nil {
			return fail(7, "%v", err)
		}
		defer nc.Close()
		one := []float32{1}
		if err := ringo.AllReduce(ctx, nc, one, one, ringo.OpSum); err != nil || one[0] != float32(nc.Size()) {
			return fail(8, "first all-reduce after the shrink: %v, %v", one, err)
		}
		fmt.Printf("recovered %d\n", time.Now().UnixNano())
	case "revoke":
		revoker, _ := strconv.Atoi(os.Getenv("RINGO_TEST_REVOKER"))
		buf := make([]float32, 1000)
		var err error
		for i := 0; err == nil; i++ {
			if rank == revoker && i == 5 {
				c.Revoke()
			}
			err = ringo.AllReduce(ctx, c, buf, buf, ringo.OpSum)
		}
		if !errors.Is(err, ringo.ErrRevoked) || !strings.Contains(err.Error(), fmt.Sprintf("rank %d called Revoke", revoker)) {
			return fail(6, "not revoked by rank %d: %v", revoker, err)
		}
		fmt.Fprintln(os.Stderr, "child:", err)
		if nc, err = c.Shrink(ctx, nil, nil); err != nil {
			return fail(7, "%v", err)
		}
		defer nc.Close()
	case "drop":
		if rank < n-1 {
			var err error
			if nc, err = c.Shrink(ctx, []int{n - 1}, nil); err != nil {
				return fail(7, "%v", err)
			}
			defer nc.Close()
		}
	default:
		return fail(2, "unknown mode %q", mode)
	}
	if nc != nil {
		fmt.Printf("tag %s\n", ringo.Tag(nc))
		if err := checkEvery(ctx, nc, nc.Size(), nc.Rank()); err != nil {
			return fail(9, "on the shrunk communicator: %v", err)
		}
		if os.Getenv("RINGO_TEST_P2P") == "1" {
			if err := checkP2PProcs(ctx, nc); err != nil {
				return fail(9, "on the shrunk communicator: %v", err)
			}
		}
	}
	if mode == "regrow" {
		return regrow(ctx, c.Size(), nc)
	}
	if mode == "drop" {
		buf := []float32{float32(rank)}
		if err := ringo.AllReduce(ctx, c, buf, buf, ringo.OpSum); err != nil || buf[0] != float32(n*(n-1)/2) {
			return fail(10, "all-reduce on the old communicator: %v, %v", buf, err)
		}
		fmt.Println("ok")
		return 0
	}
	fmt.Printf("ok %d %d\n", nc.Rank(), nc.Size())
	return 0
}

// shrinkLost is ShrinkAbort of c excluding its Lost ranks, printed as
// "lost [L]". A rank lost during the shrink fails it, naming the rank; Lost
// then lists it too, and the next attempt (at most two more, each printed
// on stderr) leaves it out.
func shrinkLost(ctx context.Context, c *ringo.Comm) (*ringo.Comm, error) {
	for attempt := 1; ; attempt++ {
		lost := c.Lost()
		fmt.Printf("lost %v\n", lost)
		nc, err := c.ShrinkAbort(ctx, lost, nil)
		if err == nil || attempt == 3 {
			return nc, err
		}
		fmt.Fprintf(os.Stderr, "child: shrink attempt %d: %v\n", attempt, err)
	}
}

// regrow grows c back to size ranks, its rank 0 making the id (printed as
// "growid ID") that the replacement joins with, and checks every
// collective on the grown communicator; it prints "ok R N".
func regrow(ctx context.Context, size int, c *ringo.Comm) int {
	var id *ringo.UniqueID
	if c.Rank() == 0 {
		gid, err := c.GrowID()
		if err != nil {
			fmt.Fprintln(os.Stderr, "child:", err)
			return 11
		}
		fmt.Printf("growid %s\n", gid)
		id = &gid
	}
	gc, err := c.Grow(ctx, size, id, nil)
	if err != nil {
		fmt.Fprintln(os.Stderr, "child:", err)
		return 11
	}
	defer gc.Close()
	return checkGrown(ctx, gc)
}

// childGrowJoin is the replacement rank of the grow test: it joins with
// RINGO_TEST_GROW_ID as rank RINGO_TEST_GROW_RANK of
// RINGO_TEST_GROW_SIZE (JoinGrow) and checks every collective.
func childGrowJoin(ctx context.Context) int {
	id, err := ringo.UniqueIDFromString(os.Getenv("RINGO_TEST_GROW_ID"))
	if err != nil {
		fmt.Fprintln(os.Stderr, "child:", err)
		return 2
	}
	rank, _ := strconv.Atoi(os.Getenv("RINGO_TEST_GROW_RANK"))
	size, _ := strconv.Atoi(os.Getenv("RINGO_TEST_GROW_SIZE"))
	gc, err := ringo.JoinGrow(ctx, id, size, rank, nil)
	if err != nil {
		fmt.Fprintln(os.Stderr, "child:", err)
		return 11
	}
	defer gc.Close()
	return checkGrown(ctx, gc)
}

// checkGrown checks every collective on a grown communicator and prints
// its tag, "recovered NS" (the wall clock once its first all-reduce is
// done) and "ok R N".
func checkGrown(ctx context.Context, gc *ringo.Comm) int {
	fmt.Printf("tag %s\n", ringo.Tag(gc))
	one := []float32{1}
	if err := ringo.AllReduce(ctx, gc, one, one, ringo.OpSum); err != nil || one[0] != float32(gc.Size()) {
		fmt.Fprintf(os.Stderr, "child: first all-reduce after the grow: %v, %v\n", one, err)
		return 12
	}
	fmt.Printf("recovered %d\n", time.Now().UnixNano())
	if err := checkEvery(ctx, gc, gc.Size(), gc.Rank()); err != nil {
		fmt.Fprintln(os.Stderr, "child: on the grown communicator:", err)
		return 12
	}
	fmt.Printf("ok %d %d\n", gc.Rank(), gc.Size())
	return 0
}

// shrinkKid is a child of the shrink tests and what it said.
type shrinkKid struct {
	*child
	tags      []string
	lost      string
	recovered int64 // unix ns
	ok        string
}

// until reads k's stdout until a line starting with word (returning its
// rest) or its end, noting the lines it passes.
func (k *shrinkKid) until(word string) (string, bool) {
	for k.stdout.Scan() {
		w, rest, _ := strings.Cut(k.stdout.Text(), " ")
		switch w {
		case "tag":
			k.tags = append(k.tags, rest)
		case "lost":
			k.lost = rest
		case "recovered":
			k.recovered, _ = strconv.ParseInt(rest, 10, 64)
		case "ok":
			k.ok = rest
		}
		if w == word {
			return rest, true
		}
	}
	return "", false
}

// finish reads k's stdout to its end and waits for it to exit, within d.
func (k *shrinkKid) finish(t testing.TB, d time.Duration) error {
	t.Helper()
	k.until("\x00")
	return waitExit(t, k.child, d)
}

// startShrinkKids starts n rank processes of mode on a fresh
// communicator — its root in this process, or with env in rank 0's (they
// join as a launcher's ranks: NewCommFromEnv) — with extra environment.
func startShrinkKids(t testing.TB, n int, mode string, rootInRank0 bool, extra ...string) []*shrinkKid {
	t.Helper()
	var common []string
	if rootInRank0 {
		mode += "-env"
		common = []string{fmt.Sprintf("RINGO_NRANKS=%d", n), fmt.Sprintf("RINGO_COMM_ID=127.0.0.1:%d", freePort(t))}
	} else {
		id, err := ringo.NewUniqueID()
		require.NoError(t, err)
		common = []string{envID + "=" + id.String(), fmt.Sprintf("%s=%d", envRanks, n)}
	}
	kids := make([]*shrinkKid, n)
	for r := range n {
		cmd := exec.Command(os.Args[0], "-test.run=^$")
		cmd.Env = append(os.Environ(), envChild+"="+mode, fmt.Sprintf("%s=%d", envRank, r), fmt.Sprintf("RINGO_RANK=%d", r))
		cmd.Env = append(append(cmd.Env, common...), extra...)
		kids[r] = &shrinkKid{child: startChild(t, cmd)}
	}
	return kids
}

// noShrinkLeftovers checks that /dev/shm holds nothing of the
// communicators kids named.
func noShrinkLeftovers(t testing.TB, kids []*shrinkKid) {
	t.Helper()
	seen := map[string]bool{}
	for _, k := range kids {
		for _, tag := range k.tags {
			if seen[tag] {
				continue
			}
			seen[tag] = true
			left, err := shm.Leftovers(tag)
			require.NoError(t, err)
			require.Empty(t, left, "/dev/shm after the trial")
		}
	}
}

// shrinkTrial is one kill: n ranks (over sockets or shared memory; the
// root in this process or in rank 0's; mode "shrink", or "shrink-hier" for
// the hierarchical variant) all-reduce count floats, victim is killed
// delay after they all started, and every survivor must report victim lost
// (on stderr, and Lost), shrink, and pass every collective on the shrunk
// communicator. It returns the time from the kill to the last survivor's
// first all-reduce on it.
func shrinkTrial(t testing.TB, mode string, n, victim, count int, sockets, rootInRank0 bool, delay time.Duration, extra ...string) time.Duration {
	t.Helper()
	what := fmt.Sprintf("%s, %d ranks, %d floats, sockets %v, root in rank 0 %v, rank %d killed %v after all started",
		mode, n, count, sockets, rootInRank0, victim, delay)
	env := append([]string{fmt.Sprintf("RINGO_TEST_COUNT=%d", count)}, extra...)
	if sockets {
		env = append(env, "NCCL_SHM_DISABLE=1", "NCCL_SOCKET_IFNAME=lo")
	}
	kids := startShrinkKids(t, n, mode, rootInRank0, env...)
	for r, k := range kids {
		if _, ok := k.until("ready"); !ok {
			k.finish(t, 10*time.Second)
			require.FailNow(t, "a rank did not start", "%s: rank %d: %s", what, r, k.stderr.String())
		}
	}
	time.Sleep(delay)
	require.NoError(t, kids[victim].cmd.Process.Signal(syscall.SIGKILL))
	killed := time.Now()
	var last int64
	for r, k := range kids {
		if r == victim {
			k.cmd.Wait()
			continue
		}
		err := k.finish(t, 60*time.Second)
		msg := k.stderr.String()
		require.NoError(t, err, "%s: rank %d: %s", what, r, msg)
		require.NoError(t, namesLost(msg, victim), "%s: rank %d", what, r)
		require.NotContains(t, msg, "shrink attempt", "%s: rank %d: one loss, known to all, takes one shrink", what, r)
		require.Equal(t, fmt.Sprintf("[%d]", victim), k.lost, "%s: rank %d's Lost", what, r)
		newRank := r
		if r > victim {
			newRank--
		}
		require.Equal(t, fmt.Sprintf("%d %d", newRank, n-1), k.ok, "%s: rank %d's new rank and size", what, r)
		last = max(last, k.recovered)
	}
	noShrinkLeftovers(t, kids)
	return time.Unix(0, last).Sub(killed)
}

// TestProcessesShrink: a rank of four is killed while all all-reduce; the
// survivors fail naming it, Lost lists it, ShrinkAbort makes the three a
// communicator, and every collective (point-to-point too) is right on it
// — over shared memory and over sockets, with the bootstrap root in a
// process of its own, and in the killed rank's process (a launcher's rank
// 0 runs it), where the survivors agree without it; and with the
// hierarchical variant, whose group and column communicators the
// survivors remake.
func TestProcessesShrink(t *testing.T) {
	for _, c := range []struct {
		name        string
		mode        string
		victim      int
		sockets     bool
		rootInRank0 bool
	}{
		{"shm", "shrink", 1, false, false},
		{"sockets", "shrink", 2, true, false},
		{"shm root killed", "shrink", 0, false, true},
		{"sockets root killed", "shrink", 0, true, true},
		{"hierarchical", "shrink-hier", 3, false, false},
	} {
		t.Run(c.name, func(t *testing.T) {
			took := shrinkTrial(t, c.mode, 4, c.victim, 1<<14, c.sockets, c.rootInRank0, 0, "RINGO_TEST_P2P=1")
			t.Logf("from the kill to the first all-reduce on the shrunk communicator: %v", took)
		})
	}
}

// TestProcessesShrinkSecondLoss: a rank of four is killed, and a second
// one kills itself as the survivors go to shrink: their shrink fails
// naming it (or, learned in time, leaves it out), and the next, with Lost
// listing both, makes the two that remain a communicator that passes every
// collective. With the root in the first victim's process, nobody reports
// the second loss: the survivors find its listener closed.
func TestProcessesShrinkSecondLoss(t *testing.T) {
	for _, sockets := range []bool{false, true} {
		for _, rootInRank0 := range []bool{false, true} {
			t.Run(fmt.Sprintf("sockets %v root in rank 0 %v", sockets, rootInRank0), func(t *testing.T) {
				secondLoss(t, sockets, rootInRank0)
			})
		}
	}
}

func secondLoss(t *testing.T, sockets, rootInRank0 bool) {
	victim, survivor := 1, 0
	if rootInRank0 {
		victim, survivor = 0, 1
	}
	env := []string{"RINGO_TEST_COUNT=1000", "RINGO_TEST_DIE=2"}
	if sockets {
		env = append(env, "NCCL_SHM_DISABLE=1", "NCCL_SOCKET_IFNAME=lo")
	}
	kids := startShrinkKids(t, 4, "shrink", rootInRank0, env...)
	for r, k := range kids {
		if _, ok := k.until("ready"); !ok {
			k.finish(t, 10*time.Second)
			require.FailNow(t, "a rank did not start", "rank %d: %s", r, k.stderr.String())
		}
	}
	require.NoError(t, kids[victim].cmd.Process.Signal(syscall.SIGKILL))
	for r, k := range kids {
		err := k.finish(t, 60*time.Second)
		if r != survivor && r != 3 {
			continue
		}
		msg := k.stderr.String()
		require.NoError(t, err, "rank %d: %s", r, msg)
		assert.Equal(t, fmt.Sprintf("[%d 2]", victim), k.lost, "rank %d's last Lost", r)
		assert.Equal(t, fmt.Sprintf("%d 2", r/3), k.ok, "rank %d", r)
		if before, _, found := strings.Cut(msg, "shrink attempt 1"); found {
			t.Logf("rank %d's first shrink failed: %s", r, strings.TrimPrefix(msg, before))
		}
	}
	noShrinkLeftovers(t, kids)
}

// TestProcessesRegrow: a rank of four is killed; the survivors shrink,
// and the shrunk communicator grows back to four with a replacement
// process that joins with the id the new rank 0 made (GrowID, Grow,
// JoinGrow); every collective is right on the grown communicator, the
// survivors keeping their shrunk ranks and the replacement taking rank 3.
// It logs the time from the replacement's start (its process's too) to the
// first all-reduce done on the grown communicator.
func TestProcessesRegrow(t *testing.T) {
	for _, sockets := range []bool{false, true} {
		t.Run(fmt.Sprintf("sockets %v", sockets), func(t *testing.T) {
			var env []string
			if sockets {
				env = append(env, "NCCL_SHM_DISABLE=1", "NCCL_SOCKET_IFNAME=lo")
			}
			kids := startShrinkKids(t, 4, "regrow", false, append(env, "RINGO_TEST_COUNT=1000")...)
			for r, k := range kids {
				if _, ok := k.until("ready"); !ok {
					k.finish(t, 10*time.Second)
					require.FailNow(t, "a rank did not start", "rank %d: %s", r, k.stderr.String())
				}
			}
			require.NoError(t, kids[2].cmd.Process.Signal(syscall.SIGKILL))
			id, ok := kids[0].until("growid")
			if !ok {
				kids[0].finish(t, 10*time.Second)
				require.FailNow(t, "no grow id", "rank 0: %s", kids[0].stderr.String())
			}
			cmd := exec.Command(os.Args[0], "-test.run=^$")
			cmd.Env = append(os.Environ(), envChild+"=grow-join", "RINGO_TEST_GROW_ID="+id, "RINGO_TEST_GROW_RANK=3", "RINGO_TEST_GROW_SIZE=4")
			cmd.Env = append(cmd.Env, env...)
			started := time.Now()
			kids = append(kids, &shrinkKid{child: startChild(t, cmd)})
			var last int64
			for r, k := range kids {
				err := k.finish(t, 60*time.Second)
				if r == 2 {
					continue
				}
				require.NoError(t, err, "process %d: %s", r, k.stderr.String())
				assert.Equal(t, fmt.Sprintf("%d 4", map[int]int{0: 0, 1: 1, 3: 2, 4: 3}[r]), k.ok, "process %d", r)
				last = max(last, k.recovered)
			}
			t.Logf("from the replacement's start to the first all-reduce on the grown communicator: %v", time.Unix(0, last).Sub(started))
			noShrinkLeftovers(t, kids)
		})
	}
}

// TestProcessesRevoke: a rank revokes while the others wait for it in an
// all-reduce: theirs fail with ErrRevoked naming it, within seconds
// although it stays alive and connected (the notice travels over the
// bootstrap's point-to-point connections), and its own next call fails
// too; the ranks then shrink the revoked communicator (the default mode,
// excluding no one) and every collective is right on it.
func TestProcessesRevoke(t *testing.T) {
	for _, sockets := range []bool{false, true} {
		t.Run(fmt.Sprintf("sockets %v", sockets), func(t *testing.T) {
			env := []string{"RINGO_TEST_REVOKER=1"}
			if sockets {
				env = append(env, "NCCL_SHM_DISABLE=1", "NCCL_SOCKET_IFNAME=lo")
			}
			kids := startShrinkKids(t, 3, "revoke", false, env...)
			for r, k := range kids {
				require.NoError(t, k.finish(t, 60*time.Second), "rank %d: %s", r, k.stderr.String())
				assert.Contains(t, k.stderr.String(), "rank 1 called Revoke: communicator revoked", "rank %d", r)
				assert.Equal(t, fmt.Sprintf("%d 3", r), k.ok)
			}
			noShrinkLeftovers(t, kids)
		})
	}
}

// TestProcessesShrinkDefault: three live ranks; two shrink without the
// third (the default mode) and every collective is right on their new
// communicator, while the third waits; then the old communicator, all
// three, still works.
func TestProcessesShrinkDefault(t *testing.T) {
	kids := startShrinkKids(t, 3, "drop", false)
	for r, k := range kids {
		require.NoError(t, k.finish(t, 60*time.Second), "rank %d: %s", r, k.stderr.String())
	}
	noShrinkLeftovers(t, kids)
}

// shrinkTrials is RINGO_SHRINK_TRIALS, or 20 (5 with -short).
func shrinkTrials() int { return trials("RINGO_SHRINK_TRIALS", 20, 5) }

// TestFaultShrinkRandom: the fault suite's shrink trials — kill -9 a
// random rank at a random moment of a stream of all-reduces (random rank
// count, message size, transport, and whether the root runs in rank 0's
// process), shrinkTrials times; every survivor must name the killed rank,
// shrink to the others and pass every collective on the shrunk
// communicator; /dev/shm must hold nothing of either communicator, and no
// goroutine of this process (the roots it ran) may be left.
func TestFaultShrinkRandom(t *testing.T) {
	rng := faultRand(t, 2)
	goroutines := runtime.NumGoroutine()
	var took []time.Duration
	for trial := range shrinkTrials() {
		n := 2 + rng.IntN(3)
		victim := rng.IntN(n)
		count := []int{1, 1000, 1 << 14, 1 << 18}[rng.IntN(4)]
		sockets, rootInRank0 := rng.IntN(2) == 1, rng.IntN(3) == 0
		delay := time.Duration(rng.IntN(20)) * time.Millisecond
		cma := fmt.Sprintf("RINGO_CMA=%d", rng.IntN(2))
		t.Run(fmt.Sprintf("trial %d %s", trial, cma), func(t *testing.T) {
			took = append(took, shrinkTrial(t, "shrink", n, victim, count, sockets, rootInRank0, delay, cma))
		})
	}
	slices.Sort(took)
	if len(took) > 0 {
		t.Logf("%d trials; kill to the first all-reduce on the shrunk communicator: median %v, slowest %v (RINGO_SHRINK_TRIALS=100 for more; BenchmarkShrinkRecovery measures it)",
			len(took), took[len(took)/2], took[len(took)-1])
	}
	deadline := time.Now().Add(30 * time.Second) // generous: a busy 2-core CI machine
	for runtime.NumGoroutine() > goroutines && time.Now().Before(deadline) {
		time.Sleep(10 * time.Millisecond)
	}
	assert.LessOrEqual(t, runtime.NumGoroutine(), goroutines, "goroutines after the trials")
}

// openFDs counts this process's open file descriptors.
func openFDs(t *testing.T) int {
	t.Helper()
	fds, err := os.ReadDir("/proc/self/fd")
	require.NoError(t, err)
	return len(fds)
}

// procsKind makes n ranks of the processes' kind (NewComm: a bootstrap
// each, shared memory between them), here goroutines of this process.
func procsKind(t testing.TB, ctx context.Context, n int) []*ringo.Comm {
	t.Helper()
	id, err := ringo.NewUniqueID()
	require.NoError(t, err)
	comms := make([]*ringo.Comm, n)
	noErrors(t, each(comms, func(r int, _ *ringo.Comm) (err error) {
		comms[r], err = ringo.NewComm(ctx, id, n, r, nil)
		return err
	}))
	return comms
}

// TestShrinkGrowCycles: ranks of the processes' kind (NewComm: a
// bootstrap each, shared memory between them), here goroutines of this
// process, go through 20 cycles of a shrink (the default mode: the last
// rank dropped, alive) and a grow back to their size with a new rank
// (GrowID, Grow, JoinGrow), an all-reduce checked on each communicator,
// the old ones closed. Nothing may grow: goroutines, file descriptors,
// /dev/shm segments. It must not run in parallel with other tests.
func TestShrinkGrowCycles(t *testing.T) {
	const n = 3
	ctx := testCtx(t)
	comms := procsKind(t, ctx, n)
	var tags []string
	cycle := func() {
		shrunk := make([]*ringo.Comm, n-1)
		noErrors(t, each(shrunk, func(r int, _ *ringo.Comm) (err error) {
			shrunk[r], err = comms[r].Shrink(ctx, []int{n - 1}, nil)
			return err
		}))
		allReduceOK(t, shrunk)
		gid, err := shrunk[n-2].GrowID()
		require.NoError(t, err)
		grown := make([]*ringo.Comm, n)
		noErrors(t, each(grown, func(r int, _ *ringo.Comm) (err error) {
			switch r {
			case n - 1:
				grown[r], err = ringo.JoinGrow(ctx, gid, n, r, nil)
			case n - 2:
				grown[r], err = shrunk[r].Grow(ctx, n, &gid, nil)
			default:
				grown[r], err = shrunk[r].Grow(ctx, n, nil, nil)
			}
			return err
		}))
		allReduceOK(t, grown)
		for _, c := range append(comms, shrunk...) {
			tags = append(tags, ringo.Tag(c))
			require.NoError(t, c.Close())
		}
		comms = grown
	}
	cycle() // warm up what is made once
	settle := func(what string, count func() int, want int) {
		deadline := time.Now().Add(30 * time.Second)
		for count() > want && time.Now().Before(deadline) {
			time.Sleep(10 * time.Millisecond)
		}
		assert.LessOrEqual(t, count(), want, "%s after the cycles", what)
	}
	goroutines, fds := runtime.NumGoroutine(), openFDs(t)
	for range 20 {
		cycle()
	}
	settle("goroutines", runtime.NumGoroutine, goroutines)
	settle("file descriptors", func() int { return openFDs(t) }, fds)
	for _, c := range comms {
		tags = append(tags, ringo.Tag(c))
		require.NoError(t, c.Close())
	}
	for _, tag := range tags {
		left, err := shm.Leftovers(tag)
		require.NoError(t, err)
		require.Empty(t, left)
	}
}

// BenchmarkShrinkRecovery measures, over b.N kills (-benchtime=100x for a
// hundred), the time from a kill -9 of one rank of four, all inside
// all-reduces of 16 Ki floats, to the first all-reduce done on the
// shrunk communicator by the last survivor: the survivors' detection of the
// loss (the bootstrap's), their agreement and the new communicator's
// making (ShrinkAbort), and one all-reduce, each survivor stamping the wall
// clock when it is done. The victim is rank 1, or rank 0 with the root in
// its process (/root0). It reports the median and the slowest trial in ms.
func BenchmarkShrinkRecovery(b *testing.B) {
	for _, c := range []struct {
		name        string
		sockets     bool
		rootInRank0 bool
	}{{"shm", false, false}, {"sockets", true, false}, {"shm/root0", false, true}, {"sockets/root0", true, true}} {
		b.Run(c.name, func(b *testing.B) {
			victim := 1
			if c.rootInRank0 {
				victim = 0
			}
			var took []time.Duration
			for b.Loop() {
				took = append(took, shrinkTrial(b, "shrink", 4, victim, 1<<14, c.sockets, c.rootInRank0, 0))
			}
			slices.Sort(took)
			b.ReportMetric(float64(took[len(took)/2])/1e6, "median-ms")
			b.ReportMetric(float64(took[len(took)-1])/1e6, "max-ms")
			b.ReportMetric(0, "ns/op")
		})
	}
}

// TestSplitProcsKind: Split of ranks of the processes' kind (NewComm, here
// goroutines of this process): each color's ranks form a communicator
// that works, a negative color gets nil, and the parent still works.
func TestSplitProcsKind(t *testing.T) {
	const n = 4
	ctx := testCtx(t)
	comms := procsKind(t, ctx, n)
	closeAll(t, comms)
	colors, keys := []int{0, -1, 0, 0}, []int{2, 0, 1, 1}
	subs := make([]*ringo.Comm, n)
	noErrors(t, each(comms, func(r int, c *ringo.Comm) (err error) {
		subs[r], err = c.Split(ctx, colors[r], keys[r], nil)
		return err
	}))
	closeAll(t, subs)
	require.Nil(t, subs[1])
	for r, want := range map[int]int{0: 2, 2: 0, 3: 1} {
		assert.Equal(t, want, subs[r].Rank(), "rank %d", r)
		assert.Equal(t, 3, subs[r].Size())
	}
	allReduceOK(t, []*ringo.Comm{subs[2], subs[3], subs[0]})
	allReduceOK(t, comms)
}
