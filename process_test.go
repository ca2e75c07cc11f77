package ringo_test

import (
	"bufio"
	"context"
	"fmt"
	"net"
	"os"
	"os/exec"
	"strconv"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/ringo-ccl/ringo"
	"github.com/ringo-ccl/ringo/bootstrap"
	"github.com/ringo-ccl/ringo/internal/commhook"
	"github.com/ringo-ccl/ringo/internal/mem"
	"github.com/ringo-ccl/ringo/internal/peers"
	"github.com/ringo-ccl/ringo/internal/sys"
	"github.com/ringo-ccl/ringo/ring"
	"github.com/ringo-ccl/ringo/ring/ringtest"
	"github.com/ringo-ccl/ringo/shm"
)

// Rank processes for these tests are this test binary run again with
// RINGO_TEST_CHILD set: TestMain sends them to childMain instead of the
// tests.
const (
	envChild = "RINGO_TEST_CHILD" // the child's mode
	envID    = "RINGO_TEST_ID"
	envRank  = "RINGO_TEST_RANK"
	envRanks = "RINGO_TEST_RANKS"
	// envShmFree, where set, is the bytes the rank says its /dev/shm has
	// free (peers.ShmFree), to play a host short of room.
	envShmFree = "RINGO_TEST_SHM_FREE"
)

func TestMain(m *testing.M) {
	if mode := os.Getenv(envChild); mode != "" {
		os.Exit(childMain(mode))
	}
	os.Exit(m.Run())
}

// childMain is one rank process. Modes (a mode ending in "-env" joins as
// torchrun's ranks do, NewCommFromEnv; one ending in "-hier", before any
// "-env", uses the hierarchical variant in groups of 2):
//   - "check": run an all-reduce and an all-gather on known data and
//     verify them.
//   - "every": run every collective at two sizes and verify them
//     (checkEvery).
//   - "every-fifo": "every", first writing "fifo=<bytes>", the size of
//     its Simple FIFOs, on standard error.
//   - "every-attach": "every", first writing "attached=<bool>", whether it
//     reads its peers' buffers (shm.Attach), on standard error.
//   - "every-crowded": "every", first writing "crowded=<bool>", whether
//     its board counts the host crowded (the two-shot all-reduces).
//   - "every-windows": "every" on buffers in a host window
//     (RegisterHostWindow), then with rank 0's alone there (the others'
//     are not: every call falls back), then on none, writing
//     "windowed=<calls>" after each: how many calls ran on the windows.
//   - "loop": report "ready" after the first all-reduce, then all-reduce
//     until an error, which it prints.
//   - "loop-windows": "loop" on a buffer in a host window.
//   - "join-then-die": join the bootstrap, then kill itself (a rank lost
//     during setup).
//   - "p2p": all-to-all, all-to-allv, gather, scatter, a send/receive group and a lone Send/Recv, checked
//     (checkP2PProcs), then every collective (checkEvery).
//   - "mismatch": one all-reduce of 1000 elements, 1001 on odd ranks.
//   - "p2p-mismatch": rank 0 sends 100 elements to rank 1, which receives 60.
//   - "stall": three all-reduces, then "stalled" and a minute without
//     calling any (a rank stuck outside the library).
//   - "shrink", "regrow", "revoke", "drop", "grow-join": the shrink tests'
//     (childShrink, childGrowJoin).
//
// The all-reduces of "loop" and "stall" have RINGO_TEST_COUNT elements
// (default 2¹⁸).
func childMain(mode string) int {
	if strings.HasPrefix(mode, "gpu-") {
		return gpuChildMain(mode)
	}
	id, err := ringo.UniqueIDFromString(os.Getenv(envID))
	if err != nil && !strings.HasSuffix(mode, "-env") && mode != "grow-join" {
		fmt.Fprintln(os.Stderr, "child:", err)
		return 2
	}
	rank, _ := strconv.Atoi(os.Getenv(envRank))
	n, _ := strconv.Atoi(os.Getenv(envRanks))
	limit := 20 * time.Second
	if strings.HasPrefix(mode, "every") || isShrinkMode(mode) {
		limit = 80 * time.Second // many collectives, slow under the race detector on a loaded machine
	}
	ctx, cancel := context.WithTimeout(context.Background(), limit)
	defer cancel()
	if mode == "grow-join" {
		return childGrowJoin(ctx)
	}
	if mode == "join-then-die" {
		if _, err := bootstrap.Join(ctx, id, n, rank); err != nil {
			fmt.Fprintln(os.Stderr, "child:", err)
			return 2
		}
		syscall.Kill(os.Getpid(), syscall.SIGKILL)
	}
	if v := os.Getenv(envShmFree); v != "" {
		free, err := strconv.ParseUint(v, 10, 64)
		if err != nil {
			fmt.Fprintln(os.Stderr, "child:", envShmFree, err)
			return 2
		}
		peers.ShmFree = func() (uint64, error) { return free, nil }
	}
	var c *ringo.Comm
	mode, fromEnv := strings.CutSuffix(mode, "-env")
	mode, hier := strings.CutSuffix(mode, "-hier")
	var cfg *ringo.Config
	if hier {
		cfg = &ringo.Config{Variant: "hierarchical", Group: 2}
	}
	if fromEnv { // launched as torchrun would
		c, err = ringo.NewCommFromEnv(ctx, cfg)
		if c != nil {
			n, rank = c.Size(), c.Rank()
		}
	} else {
		c, err = ringo.NewComm(ctx, id, n, rank, cfg)
	}
	if err != nil {
		fmt.Fprintln(os.Stderr, "child:", err)
		return 3
	}
	defer c.Close()
	if groups := commhook.SumPathOf(c, ringo.TypeFloat32).Groups; hier && len(groups) != n/2 {
		fmt.Fprintf(os.Stderr, "child: all-reduce runs in groups %v, want %d groups of 2\n", groups, n/2)
		return 5
	}
	if isShrinkMode(mode) {
		return childShrink(ctx, mode, c)
	}
	switch mode {
	case "every-windows":
		if err := childWindows(ctx, c, n, rank); err != nil {
			fmt.Fprintln(os.Stderr, "child:", err)
			return 5
		}
		fmt.Println("ok")
		return 0
	case "every", "every-fifo", "every-attach", "every-crowded":
		if mode == "every-crowded" {
			fmt.Fprintf(os.Stderr, "crowded=%v\n", ringo.BoardCrowded(c))
		}
		if mode == "every-fifo" {
			fmt.Fprintf(os.Stderr, "fifo=%d\n", ringo.SimpleFIFO(c))
		}
		if mode == "every-attach" {
			fmt.Fprintf(os.Stderr, "attached=%v\n", ringo.Attached(c))
		}
		if err := checkEvery(ctx, c, n, rank); err != nil {
			fmt.Fprintln(os.Stderr, "child:", err)
			return 5
		}
		fmt.Println("ok")
		return 0
	case "check":
		send := make([]float32, 1000)
		for i := range send {
			send[i] = float32(rank*1000 + i)
		}
		recv := make([]float32, 1000)
		if err := ringo.AllReduce(ctx, c, send, recv, ringo.OpSum); err != nil {
			fmt.Fprintln(os.Stderr, "child:", err)
			return 4
		}
		for i, v := range recv {
			want := float32(0)
			for r := range n {
				want += float32(r*1000 + i)
			}
			if v != want {
				fmt.Fprintf(os.Stderr, "child: element %d = %v, want %v\n", i, v, want)
				return 5
			}
		}
		gathered := make([]int32, 3*n)
		if err := ringo.AllGather(ctx, c, []int32{int32(rank), 7, int32(-rank)}, gathered); err != nil {
			fmt.Fprintln(os.Stderr, "child:", err)
			return 4
		}
		for r := range n {
			if gathered[3*r] != int32(r) || gathered[3*r+2] != int32(-r) {
				fmt.Fprintf(os.Stderr, "child: gathered %v\n", gathered)
				return 5
			}
		}
		fmt.Println("ok")
		return 0
	case "schedule", "p2p":
		first := runDirect // a schedule that is no ring
		if mode == "p2p" {
			first = checkP2PProcs
		}
		if err := first(ctx, c); err != nil {
			fmt.Fprintln(os.Stderr, "child:", err)
			return 5
		}
		if err := checkEvery(ctx, c, n, rank); err != nil { // the ring after, on the same communicator
			fmt.Fprintln(os.Stderr, "child:", err)
			return 5
		}
		fmt.Println("ok")
		return 0
	case "p2p-mismatch": // rank 0 sends 100 elements to rank 1, which receives 60
		var err error
		if rank == 0 {
			err = ringo.Send(ctx, c, make([]float32, 100), 1)
		} else if rank == 1 {
			err = ringo.Recv(ctx, c, make([]float32, 60), 0)
		}
		if err != nil {
			fmt.Fprintln(os.Stderr, "child:", err)
			return 7
		}
		return 0
	case "mismatch": // rank 1 all-reduces one element more than the others
		buf := make([]float32, 1000+rank%2)
		if err := ringo.AllReduce(ctx, c, buf, buf, ringo.OpSum); err != nil {
			fmt.Fprintln(os.Stderr, "child:", err)
			return 7
		}
		return 0
	case "stall":
		buf := make([]float32, testCount())
		for range 3 {
			if err := ringo.AllReduce(ctx, c, buf, buf, ringo.OpSum); err != nil {
				fmt.Fprintln(os.Stderr, "child:", err)
				return 6
			}
		}
		fmt.Println("stalled")
		time.Sleep(time.Minute)
		return 0
	case "loop", "loop-windows":
		buf := make([]float32, testCount())
		if mode == "loop-windows" {
			if buf, err = ringo.HostAlloc[float32](testCount()); err == nil {
				_, err = ringo.RegisterHostWindow(ctx, c, buf)
			}
			if err != nil {
				fmt.Fprintln(os.Stderr, "child:", err)
				return 6
			}
		}
		for i := 0; ; i++ {
			if err := ringo.AllReduce(context.Background(), c, buf, buf, ringo.OpSum); err != nil {
				fmt.Fprintln(os.Stderr, "child:", err)
				return 6
			}
			if i == 0 {
				fmt.Println("ready")
			}
		}
	}
	return 2
}

// runDirect runs a schedule that is no ring — a direct all-gather, every
// rank sending to every other — through RunSchedule with both protocols,
// and checks what arrives.
func runDirect(ctx context.Context, c *ringo.Comm) error {
	n, rank := c.Size(), c.Rank()
	for _, proto := range []ring.Protocol{ring.Simple, ring.LL} {
		const count = 500
		plans, err := ringtest.DirectAllGather(ring.Spec{Coll: ring.AllGather, Ring: ring.Identity(n), Count: count,
			EltSize: 4, Channels: 1, Proto: proto, BuffSize: 8 * 4096})
		if err != nil {
			return err
		}
		send, recv := make([]int32, count), make([]int32, count*n)
		for i := range send {
			send[i] = int32(rank*count + i)
		}
		call := ringo.Call{Coll: ringo.CollAllGather, Count: count, Type: ringo.TypeInt32,
			Send: mem.Bytes(send), Recv: mem.Bytes(recv)}
		if err := c.RunSchedule(ctx, plans, call); err != nil {
			return fmt.Errorf("%v: %w", proto, err)
		}
		for i, v := range recv {
			if v != int32(i) {
				return fmt.Errorf("%v: element %d = %d, want %d", proto, i, v, i)
			}
		}
	}
	return nil
}

// testCount is RINGO_TEST_COUNT, or 2¹⁸.
func testCount() int {
	if n, err := strconv.Atoi(os.Getenv("RINGO_TEST_COUNT")); err == nil && n >= 0 {
		return n
	}
	return 1 << 18
}

// checkEvery runs every collective at a small size, at one that crowded
// ranks all-reduce in two shots, and at one large enough to stripe across
// sockets, and checks the results exactly (the
// values are small integers in float32).
func checkEvery(ctx context.Context, c *ringo.Comm, n, rank int) error {
	return checkEveryAlloc(ctx, c, n, rank, func(n int) []float32 { return make([]float32, n) })
}

// childWindows is the "every-windows" mode: checkEvery three times on a
// communicator with a window, writing how many calls ran on windows after
// each.
func childWindows(ctx context.Context, c *ringo.Comm, n, rank int) error {
	arena, err := ringo.HostAlloc[float32](3 << 20)
	if err != nil {
		return err
	}
	defer ringo.HostFree(arena)
	w, err := ringo.RegisterHostWindow(ctx, c, arena)
	if err != nil {
		return err
	}
	defer w.Deregister()
	var used int
	inArena := func(k int) []float32 { // a bump allocator over the window
		b := arena[used : used+k : used+k]
		used += k
		return b
	}
	plain := func(k int) []float32 { return make([]float32, k) }
	for phase, alloc := range []func(int) []float32{inArena, map[bool]func(int) []float32{true: inArena, false: plain}[rank == 0], plain} {
		used = 0
		if err := checkEveryAlloc(ctx, c, n, rank, alloc); err != nil {
			return fmt.Errorf("phase %d: %w", phase, err)
		}
		fmt.Fprintf(os.Stderr, "windowed=%d\n", ringo.WindowedCalls(c))
	}
	return nil
}

// checkEveryAlloc is checkEvery with its buffers from alloc, each call's
// taken anew.
func checkEveryAlloc(ctx context.Context, c *ringo.Comm, n, rank int, alloc func(n int) []float32) error {
	for _, count := range []int{1000, 100_003, 1<<18 + 3} {
		val := func(r, i int) float32 { return float32((r*7 + i) % 1000) }
		send := alloc(count)
		for i := range send {
			send[i] = val(rank, i)
		}
		sum := func(i int) float32 {
			var s float32
			for r := range n {
				s += val(r, i)
			}
			return s
		}
		check := func(what string, got []float32, want func(i int) float32) error {
			for i, v := range got {
				if v != want(i) {
					return fmt.Errorf("%s of %d: element %d = %v, want %v", what, count, i, v, want(i))
				}
			}
			return nil
		}
		recv := alloc(count)
		if err := ringo.AllReduce(ctx, c, send, recv, ringo.OpSum); err != nil {
			return err
		}
		if err := check("all-reduce", recv, sum); err != nil {
			return err
		}
		part := alloc(count / n)
		if err := ringo.ReduceScatter(ctx, c, send[:len(part)*n], part, ringo.OpSum); err != nil {
			return err
		}
		if err := check("reduce-scatter", part, func(i int) float32 { return sum(rank*len(part) + i) }); err != nil {
			return err
		}
		all := alloc(len(part) * n)
		if err := ringo.AllGather(ctx, c, send[:len(part)], all); err != nil {
			return err
		}
		if err := check("all-gather", all, func(i int) float32 { return val(i/len(part), i%len(part)) }); err != nil {
			return err
		}
		copy(recv, send) // in place
		if err := ringo.AllReduce(ctx, c, recv, recv, ringo.OpSum); err != nil {
			return err
		}
		if err := check("all-reduce in place", recv, sum); err != nil {
			return err
		}
		root := n - 1
		if err := ringo.Broadcast(ctx, c, send, recv, root); err != nil {
			return err
		}
		if err := check("broadcast", recv, func(i int) float32 { return val(root, i) }); err != nil {
			return err
		}
		if err := ringo.Reduce(ctx, c, send, recv, ringo.OpSum, 0); err != nil {
			return err
		}
		if rank == 0 {
			if err := check("reduce", recv, sum); err != nil {
				return err
			}
		}
	}
	return nil
}

type child struct {
	cmd    *exec.Cmd
	stdout *bufio.Scanner
	stderr strings.Builder
}

// startRanks starts n rank processes of mode on a fresh communicator.
func startRanks(t *testing.T, n int, mode func(rank int) string) (ringo.UniqueID, []*child) {
	t.Helper()
	return startRanksEnv(t, n, mode, func(int) []string { return nil })
}

// startRanksEnv is startRanks with environment variables added per rank.
func startRanksEnv(t *testing.T, n int, mode func(rank int) string, extra func(rank int) []string) (ringo.UniqueID, []*child) {
	t.Helper()
	return startRanksUnder(t, n, mode, extra, nil)
}

// startRanksUnder is startRanksEnv with each rank's process started by the
// command under(rank) (taskset -c 0 …); under nil: none.
func startRanksUnder(t *testing.T, n int, mode func(rank int) string, extra func(rank int) []string, under func(rank int) []string) (ringo.UniqueID, []*child) {
	t.Helper()
	id, err := ringo.NewUniqueID()
	if err != nil {
		t.Fatal(err)
	}
	kids := make([]*child, n)
	for r := range n {
		var args []string
		if under != nil {
			args = append(args, under(r)...)
		}
		args = append(args, os.Args[0], "-test.run=^$")
		cmd := exec.Command(args[0], args[1:]...)
		cmd.Env = append(os.Environ(), envChild+"="+mode(r), envID+"="+id.String(),
			fmt.Sprintf("%s=%d", envRank, r), fmt.Sprintf("%s=%d", envRanks, n))
		cmd.Env = append(cmd.Env, extra(r)...)
		kids[r] = startChild(t, cmd)
	}
	return id, kids
}

// startChild starts cmd, to be killed when the test ends.
func startChild(t testing.TB, cmd *exec.Cmd) *child {
	t.Helper()
	k := &child{cmd: cmd}
	cmd.Stderr = &k.stderr
	out, err := cmd.StdoutPipe()
	if err != nil {
		t.Fatal(err)
	}
	k.stdout = bufio.NewScanner(out)
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() {
		k.cmd.Process.Kill()
		k.cmd.Wait()
	})
	return k
}

// waitExit waits for a child with a deadline and returns its exit error.
// A child built with -race that reported a data race fails the test,
// whatever its exit.
func waitExit(t testing.TB, k *child, d time.Duration) error {
	t.Helper()
	done := make(chan error, 1)
	go func() {
		for k.stdout.Scan() {
		}
		done <- k.cmd.Wait()
	}()
	select {
	case err := <-done:
		if strings.Contains(k.stderr.String(), "WARNING: DATA RACE") {
			t.Errorf("a rank process reported a data race:\n%s", k.stderr.String())
		}
		return err
	case <-time.After(d):
		k.cmd.Process.Kill()
		t.Fatalf("rank process did not exit within %v; stderr: %s", d, k.stderr.String())
		return nil
	}
}

func noLeftovers(t *testing.T, id ringo.UniqueID) {
	t.Helper()
	if left, err := shm.Leftovers(id.Tag()); err != nil || len(left) > 0 {
		t.Fatalf("/dev/shm holds %v (err %v)", left, err)
	}
}

// TestProcessesAnyPeer: ranks in separate processes connect any two of
// them, both ways — a bidirectional ring (every collective) and a schedule
// that is no ring (RunSchedule), each followed by the others on the same
// communicator — through shared memory and through sockets.
func TestProcessesAnyPeer(t *testing.T) {
	for _, tc := range []struct{ name, mode, env string }{
		{"bidirectional shm", "every", "RINGO_VARIANT=bidirectional NCCL_MIN_NCHANNELS=2"},
		{"bidirectional sockets", "every", "RINGO_VARIANT=bidirectional NCCL_SHM_DISABLE=1"},
		{"schedule shm", "schedule", ""},
		{"schedule sockets", "schedule", "NCCL_SHM_DISABLE=1"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			id, kids := startRanksEnv(t, 4, func(int) string { return tc.mode }, func(int) []string { return strings.Fields(tc.env) })
			for r, k := range kids {
				require.NoError(t, waitExit(t, k, 90*time.Second), "rank %d; stderr: %s", r, k.stderr.String())
				require.NotContains(t, k.stderr.String(), "using ring", "rank %d fell back from the variant", r)
			}
			noLeftovers(t, id)
		})
	}
}

// TestProcessesShmFIFO: host ranks in separate processes agree on their
// Simple FIFOs' size from what each says its /dev/shm has free (faked
// through RINGO_TEST_SHM_FREE): 4 MiB where all have room, 1 MiB for
// every rank where one is short, NCCL_BUFFSIZE's whatever the room; every
// collective is right at each. A rank that sets NCCL_BUFFSIZE among ranks
// that leave it open fails them all at once, naming both settings.
func TestProcessesShmFIFO(t *testing.T) {
	const roomy = 1 << 30
	for _, tc := range []struct {
		name string
		env  func(rank int) []string
		want int
	}{
		{"room", func(int) []string { return []string{fmt.Sprintf("%s=%d", envShmFree, roomy)} }, ringo.DefaultLocalBuffSize},
		{"one rank short", func(r int) []string {
			free := roomy
			if r == 1 {
				free = 1 << 20
			}
			return []string{fmt.Sprintf("%s=%d", envShmFree, free)}
		}, ringo.DefaultBuffSize},
		{"NCCL_BUFFSIZE", func(int) []string {
			return []string{fmt.Sprintf("%s=%d", envShmFree, roomy), "NCCL_BUFFSIZE=2M"}
		}, 2 << 20},
	} {
		t.Run(tc.name, func(t *testing.T) {
			id, kids := startRanksEnv(t, 3, func(int) string { return "every-fifo" }, tc.env)
			for r, k := range kids {
				require.NoError(t, waitExit(t, k, 90*time.Second), "rank %d; stderr: %s", r, k.stderr.String())
				require.Contains(t, k.stderr.String(), fmt.Sprintf("fifo=%d\n", tc.want), "rank %d", r)
			}
			noLeftovers(t, id)
		})
	}
	t.Run("NCCL_BUFFSIZE on one rank", func(t *testing.T) {
		id, kids := startRanksEnv(t, 3, func(int) string { return "every-fifo" }, func(r int) []string {
			if r == 0 {
				return []string{"NCCL_BUFFSIZE=1M"}
			}
			return nil
		})
		for r, k := range kids {
			require.Error(t, waitExit(t, k, 90*time.Second), "rank %d; stderr: %s", r, k.stderr.String())
			assert.Contains(t, k.stderr.String(), "buffsize=1048576|4194304 ", "rank %d", r)
		}
		noLeftovers(t, id)
	})
}

func TestProcessesAllReduce(t *testing.T) {
	id, kids := startRanks(t, 3, func(int) string { return "check" })
	for r, k := range kids {
		if err := waitExit(t, k, 30*time.Second); err != nil {
			t.Fatalf("rank %d: %v; stderr: %s", r, err, k.stderr.String())
		}
	}
	noLeftovers(t, id)
}

// TestProcessesHierarchical: 4 ranks, each its own process, with the
// hierarchical variant in groups of 2: each rank makes its group's and its
// column's communicators, and every collective is right (all-reduce
// through them, the others on the flat ring) — through shared memory, and
// through sockets with NCCL_SHM_DISABLE=1.
func TestProcessesHierarchical(t *testing.T) {
	for name, env := range map[string][]string{
		"shm":     nil,
		"sockets": {"NCCL_SHM_DISABLE=1", "NCCL_SOCKET_IFNAME=lo"},
	} {
		t.Run(name, func(t *testing.T) {
			id, kids := startRanksEnv(t, 4, func(int) string { return "every-hier" }, func(int) []string { return env })
			for r, k := range kids {
				require.NoError(t, waitExit(t, k, 90*time.Second), "rank %d; stderr: %s", r, k.stderr.String())
			}
			noLeftovers(t, id)
		})
	}
}

// TestProcessesDirect: 3 ranks in separate processes read each other's
// buffers (RINGO_CMA=1) and every collective is right; with RINGO_CMA=0
// on one rank none does, and every collective is still right.
func TestProcessesDirect(t *testing.T) {
	for _, tc := range []struct {
		name string
		env  func(rank int) []string
		want bool
	}{
		{"on", func(int) []string { return []string{"RINGO_CMA=1"} }, true},
		{"off on one rank", func(r int) []string {
			if r == 2 {
				return []string{"RINGO_CMA=0"}
			}
			return []string{"RINGO_CMA=1"}
		}, false},
	} {
		t.Run(tc.name, func(t *testing.T) {
			id, kids := startRanksEnv(t, 3, func(int) string { return "every-attach" }, tc.env)
			for r, k := range kids {
				require.NoError(t, waitExit(t, k, 90*time.Second), "rank %d; stderr: %s", r, k.stderr.String())
				require.Contains(t, k.stderr.String(), fmt.Sprintf("attached=%v\n", tc.want), "rank %d", r)
			}
			noLeftovers(t, id)
		})
	}
}

// TestProcessesCrowded: 3 ranks in separate processes on one CPU count
// their host crowded, and every collective is right — the all-reduce of
// 100,003 elements through the board's two-shot rounds.
func TestProcessesCrowded(t *testing.T) {
	one := oneCPU(t)
	everyCrowded(t, 3, func(int) []string { return one }, true)
}

// TestProcessesBound: 2 ranks in separate processes, each bound to a CPU
// of its own — as mpirun binds them — run on 2 CPUs together though each
// may run on 1, so they do not count their host crowded (they did, and
// took 3–4× as long an 8-byte all-reduce under mpirun); every collective
// is right.
func TestProcessesBound(t *testing.T) {
	cpus, err := sys.Affinity()
	require.NoError(t, err)
	if len(cpus) < 2 {
		t.Skipf("this test may run on %d CPU: cannot bind 2 ranks to a CPU each", len(cpus))
	}
	oneCPU(t) // skips without taskset
	everyCrowded(t, 2, func(r int) []string { return []string{"taskset", "-c", strconv.Itoa(cpus[r])} }, false)
}

// everyCrowded runs n ranks of "every-crowded", each under under(rank),
// and requires each to succeed and to have counted its host crowded or
// not, as want.
func everyCrowded(t *testing.T, n int, under func(rank int) []string, want bool) {
	id, kids := startRanksUnder(t, n, func(int) string { return "every-crowded" }, func(int) []string { return nil }, under)
	for r, k := range kids {
		require.NoError(t, waitExit(t, k, 90*time.Second), "rank %d; stderr: %s", r, k.stderr.String())
		require.Contains(t, k.stderr.String(), fmt.Sprintf("crowded=%v\n", want), "rank %d", r)
	}
	noLeftovers(t, id)
}

// TestProcessesWindows: 3 ranks in separate processes register a host
// window; every collective on buffers there is right, and those too large
// for the board's one exchange ran on the windows; with rank 0's buffers
// alone there, and with none, every call falls back alike, and is right.
func TestProcessesWindows(t *testing.T) {
	id, kids := startRanks(t, 3, func(int) string { return "every-windows" })
	for r, k := range kids {
		require.NoError(t, waitExit(t, k, 90*time.Second), "rank %d; stderr: %s", r, k.stderr.String())
		var counts []int
		for _, line := range strings.Split(k.stderr.String(), "\n") {
			if v, ok := strings.CutPrefix(line, "windowed="); ok {
				n, err := strconv.Atoi(v)
				require.NoError(t, err)
				counts = append(counts, n)
			}
		}
		require.Len(t, counts, 3, "rank %d; stderr: %s", r, k.stderr.String())
		assert.Equal(t, 12, counts[0], "rank %d: calls on the windows (two sizes of six calls)", r)
		assert.Equal(t, counts[0], counts[1], "rank %d: only rank 0's buffers in its window", r)
		assert.Equal(t, counts[0], counts[2], "rank %d: no buffers in windows", r)
	}
	noLeftovers(t, id)
}

// TestKillMidCollective: kill -9 one rank while all of them are inside
// all-reduces; every survivor must fail promptly, naming it — the ring's;
// with RINGO_CMA=1, the reads of the peers' buffers; with the ranks on
// one CPU, the board's two-shot rounds (the loop's 1-MiB all-reduces);
// and on buffers in host windows, their reads and writes in place.
func TestKillMidCollective(t *testing.T) {
	t.Run("ring", func(t *testing.T) { killMidCollective(t, "loop", "0", nil, "") })
	t.Run("direct", func(t *testing.T) { killMidCollective(t, "loop", "1", nil, "") })
	t.Run("two-shot", func(t *testing.T) { killMidCollective(t, "loop", "0", oneCPU(t), "two-shot") })
	t.Run("windows", func(t *testing.T) { killMidCollective(t, "loop-windows", "0", nil, "windows") })
}

// oneCPU returns the command that runs a rank's process on CPU 0 alone,
// so that 2 or more ranks outnumber their cores (the board's crowded
// paths, host.RunTwoShot); it skips t where util-linux's taskset is
// missing.
func oneCPU(t *testing.T) []string {
	if _, err := exec.LookPath("taskset"); err != nil {
		t.Skip("taskset (util-linux) not found: cannot run ranks on one CPU")
	}
	return []string{"taskset", "-c", "0"}
}

// killMidCollective kills rank 1 of 3 in mode's loop, RINGO_CMA=cma,
// each rank's command under under (nil: none); each survivor's error must
// name it, and path where path is not "".
func killMidCollective(t *testing.T, mode, cma string, under []string, path string) {
	id, kids := startRanksUnder(t, 3, func(int) string { return mode }, func(int) []string { return []string{"RINGO_CMA=" + cma} }, func(int) []string { return under })
	for r, k := range kids {
		if !k.stdout.Scan() || k.stdout.Text() != "ready" {
			t.Fatalf("rank %d did not start: %s", r, k.stderr.String())
		}
	}
	kids[1].cmd.Process.Signal(syscall.SIGKILL)
	start := time.Now()
	for _, r := range []int{0, 2} {
		err := waitExit(t, kids[r], 10*time.Second)
		if err == nil {
			t.Fatalf("rank %d survived the loss of rank 1", r)
		}
		msg := kids[r].stderr.String()
		if !strings.Contains(msg, "rank 1") || !strings.Contains(msg, "peer lost") {
			t.Fatalf("rank %d's error does not name lost rank 1: %s", r, msg)
		}
		if !strings.Contains(msg, path) {
			t.Fatalf("rank %d's error is not the %s path's: %s", r, path, msg)
		}
	}
	if el := time.Since(start); el > 5*time.Second {
		t.Errorf("survivors took %v to notice", el)
	}
	noLeftovers(t, id)
}

// TestKillDuringSetup: a rank joins the bootstrap and dies before the ring
// is connected.
func TestKillDuringSetup(t *testing.T) {
	id, kids := startRanks(t, 3, func(r int) string {
		if r == 2 {
			return "join-then-die"
		}
		return "check"
	})
	for _, r := range []int{0, 1} {
		if err := waitExit(t, kids[r], 30*time.Second); err == nil {
			t.Fatalf("rank %d completed without rank 2", r)
		}
		if msg := kids[r].stderr.String(); !strings.Contains(msg, "rank 2") {
			t.Fatalf("rank %d's error does not name rank 2: %s", r, msg)
		}
	}
	noLeftovers(t, id)
}

func TestRootNeverAppears(t *testing.T) {
	id, err := bootstrap.StartRoot("127.0.0.1:0", [32]byte{1})
	if err != nil {
		t.Fatal(err)
	}
	bootstrap.StopRoot(id)
	// Hold the port with a listener that never answers, so no other test
	// can take it: the "root" accepts TCP connections and says nothing.
	l, err := net.Listen("tcp", id.Addr())
	if err != nil {
		t.Skipf("could not hold the stopped root's port: %v", err)
	}
	defer l.Close()
	ctx, cancel := context.WithTimeout(context.Background(), 300*time.Millisecond)
	defer cancel()
	start := time.Now()
	_, err = ringo.NewComm(ctx, id, 2, 0, nil)
	if err == nil || !strings.Contains(err.Error(), id.Addr()) {
		t.Fatalf("got %v, want an error naming the root's address %s", err, id.Addr())
	}
	if el := time.Since(start); el > 2*time.Second {
		t.Fatalf("took %v", el)
	}
}

func TestBadUniqueID(t *testing.T) {
	id, err := ringo.NewUniqueID()
	if err != nil {
		t.Fatal(err)
	}
	defer bootstrap.StopRoot(id)
	s := id.String()
	flip := "0"
	if s[60] == '0' {
		flip = "1"
	}
	for _, bad := range []string{s[:200], s[:60] + flip + s[61:], "zz" + s[2:]} {
		if _, err := ringo.UniqueIDFromString(bad); err == nil {
			t.Errorf("accepted a damaged unique ID %q", bad[:16])
		}
	}
	if _, err := ringo.NewComm(context.Background(), id, 2, 2, nil); err == nil || !strings.Contains(err.Error(), "rank 2 of a communicator of 2") {
		t.Fatalf("rank 2 of 2: %v", err)
	}
}
