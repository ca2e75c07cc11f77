//go:build cuda

package ringo_test

import (
	"context"
	"errors"
	"fmt"
	"os"
	"os/exec"
	"slices"
	"strconv"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/ringo-ccl/ringo"
	"github.com/ringo-ccl/ringo/internal/cuda"
)

// Surviving a lost GPU rank: 4 rank processes of NewGPUComm, one killed
// with SIGKILL, the survivors ShrinkAbort and check every collective on
// their GPUs, then a replacement joins with Grow and every collective runs
// on 4 ranks again.

// TestGPUProcessesShrink: the above, on RINGO_TEST_GPUS's GPUs in turn
// (ranks share a GPU when there are fewer than 4), over CUDA IPC, host
// shared memory and sockets; every process gives back what it took of its
// GPU.
func TestGPUProcessesShrink(t *testing.T) {
	for name, env := range allTransports {
		t.Run(name, func(t *testing.T) {
			for _, kv := range env {
				k, v, _ := strings.Cut(kv, "=")
				t.Setenv(k, v)
			}
			gpus := testGPUs(t)
			gpuOf := func(r int) []string { return []string{fmt.Sprintf("RINGO_TEST_GPU=%d", gpus[r%len(gpus)])} }
			id, kids := startRanksEnv(t, 4, func(int) string { return "gpu-shrink" }, gpuOf)
			sk := make([]*shrinkKid, len(kids))
			for r, k := range kids {
				sk[r] = &shrinkKid{child: k}
				if _, ok := sk[r].until("ready"); !ok {
					require.FailNow(t, "a rank did not start", "rank %d: %s", r, k.stderr.String())
				}
			}
			const victim = 2
			killed := time.Now()
			require.NoError(t, kids[victim].cmd.Process.Kill())
			growID, ok := sk[0].until("growid")
			require.True(t, ok, "rank 0 gave no grow id: %s", kids[0].stderr.String())
			cmd := exec.Command(os.Args[0], "-test.run=^$")
			cmd.Env = append(os.Environ(), envChild+"=gpu-grow-join", "RINGO_TEST_GROW_ID="+growID,
				"RINGO_TEST_GROW_RANK=3", "RINGO_TEST_GROW_SIZE=4", gpuOf(victim)[0])
			sk = append(sk, &shrinkKid{child: startChild(t, cmd)})
			for r, k := range sk {
				err := k.finish(t, 120*time.Second)
				if r == victim {
					continue
				}
				require.NoError(t, err, "process %d: %s", r, k.stderr.String())
				assert.Equal(t, fmt.Sprintf("%d 4", map[int]int{0: 0, 1: 1, 3: 2, 4: 3}[r]), k.ok, "process %d", r)
				if r != 4 {
					assert.Equal(t, "[2]", k.lost, "process %d's Lost", r)
					t.Logf("rank %d: from the kill to the first all-reduce on the shrunk communicator: %v", r, time.Unix(0, k.recovered).Sub(killed))
				}
			}
			noLeftovers(t, id)
		})
	}
}

// gpuShrinkMain is a rank process of TestGPUProcessesShrink, on GPU
// RINGO_TEST_GPU. Modes:
//   - "gpu-shrink": "ready" after its first all-reduce; all-reduces until
//     one fails, which must be a lost peer; "lost [L]" (Lost); ShrinkAbort
//     excluding L (again with the new Lost, at most twice more); "recovered
//     NS" once the first all-reduce on the shrunk communicator is right;
//     closes the old one; every collective checked on the shrunk one
//     (checkEveryDevice); then it grows back to 4 ranks, its rank 0
//     printing "growid ID"; every collective checked; "ok R N".
//   - "gpu-grow-join": the replacement: JoinGrowGPU with
//     RINGO_TEST_GROW_ID as rank RINGO_TEST_GROW_RANK of
//     RINGO_TEST_GROW_SIZE; every collective checked; "ok R N".
//
// Either fails (exit status > 0, the error on stderr) if the GPU holds
// more of its allocations at the end than at the start.
func gpuShrinkMain(mode string) int {
	fail := func(code int, format string, a ...any) int {
		fmt.Fprintf(os.Stderr, "child: "+format+"\n", a...)
		return code
	}
	gpu, err := strconv.Atoi(os.Getenv("RINGO_TEST_GPU"))
	if err != nil {
		return fail(2, "RINGO_TEST_GPU: %v", err)
	}
	s, err := ringo.NewStream(gpu)
	if err != nil {
		return fail(3, "%v", err)
	}
	defer s.Close()
	before := cuda.Outstanding()
	ctx, cancel := context.WithTimeout(context.Background(), 100*time.Second)
	defer cancel()
	var gc *ringo.Comm
	if mode == "gpu-grow-join" {
		id, err := ringo.UniqueIDFromString(os.Getenv("RINGO_TEST_GROW_ID"))
		if err != nil {
			return fail(2, "%v", err)
		}
		rank, _ := strconv.Atoi(os.Getenv("RINGO_TEST_GROW_RANK"))
		size, _ := strconv.Atoi(os.Getenv("RINGO_TEST_GROW_SIZE"))
		if gc, err = ringo.JoinGrowGPU(ctx, id, size, rank, gpu, nil); err != nil {
			return fail(11, "%v", err)
		}
	} else {
		code := 0
		if gc, code = gpuShrinkThenGrow(ctx, gpu, s, fail); gc == nil {
			return code
		}
	}
	if err := checkEveryDevice(ctx, gc, gpu, s); err != nil {
		gc.Close()
		return fail(12, "on the grown communicator: %v", err)
	}
	fmt.Printf("ok %d %d\n", gc.Rank(), gc.Size())
	if err := gc.Close(); err != nil {
		return fail(13, "closing the grown communicator: %v", err)
	}
	if after := cuda.Outstanding(); after != before {
		return fail(13, "GPU resources held at the end: %+v before, %+v after", before, after)
	}
	return 0
}

// gpuShrinkThenGrow is gpu-shrink's part up to the grown communicator,
// which it returns (nil and an exit status on failure).
func gpuShrinkThenGrow(ctx context.Context, gpu int, s ringo.Stream, fail func(int, string, ...any) int) (*ringo.Comm, int) {
	id, err := ringo.UniqueIDFromString(os.Getenv(envID))
	if err != nil {
		return nil, fail(2, "%v", err)
	}
	rank, _ := strconv.Atoi(os.Getenv(envRank))
	n, _ := strconv.Atoi(os.Getenv(envRanks))
	c, err := ringo.NewGPUComm(ctx, id, n, rank, gpu, nil)
	if err != nil {
		return nil, fail(3, "%v", err)
	}
	defer c.Close()
	buf, err := ringo.DeviceAlloc[float32](gpu, 1<<18)
	if err != nil {
		return nil, fail(3, "%v", err)
	}
	defer buf.Free()
	for i := 0; err == nil; i++ {
		if err = ringo.AllReduceDevice(context.Background(), c, buf, buf, ringo.OpMax, s); err == nil {
			err = c.Wait(context.Background(), s)
		}
		if err == nil && i == 0 {
			fmt.Println("ready")
		}
	}
	if !errors.Is(err, ringo.ErrPeerLost) {
		return nil, fail(6, "not a lost peer: %v", err)
	}
	fmt.Fprintln(os.Stderr, "child:", err)
	nc, err := shrinkLost(ctx, c)
	if err != nil {
		return nil, fail(7, "%v", err)
	}
	defer nc.Close()
	one, err := ringo.DeviceAlloc[float32](gpu, 1)
	if err != nil {
		return nil, fail(8, "%v", err)
	}
	defer one.Free()
	got := []float32{1}
	if err := one.CopyFrom(got); err != nil {
		return nil, fail(8, "%v", err)
	}
	if err = ringo.AllReduceDevice(ctx, nc, one, one, ringo.OpSum, s); err == nil {
		if err = nc.Wait(ctx, s); err == nil {
			err = one.CopyTo(got)
		}
	}
	if err != nil || got[0] != float32(nc.Size()) {
		return nil, fail(8, "first all-reduce after the shrink: %v, %v", got, err)
	}
	fmt.Printf("recovered %d\n", time.Now().UnixNano())
	if err := c.Close(); err != nil {
		fmt.Fprintln(os.Stderr, "child: closing the old communicator:", err) // it lost a rank: said, not fatal
	}
	if err := checkEveryDevice(ctx, nc, gpu, s); err != nil {
		return nil, fail(9, "on the shrunk communicator: %v", err)
	}
	var gid *ringo.UniqueID
	if nc.Rank() == 0 {
		x, err := nc.GrowID()
		if err != nil {
			return nil, fail(10, "%v", err)
		}
		fmt.Printf("growid %s\n", x)
		gid = &x
	}
	gc, err := nc.Grow(ctx, n, gid, nil)
	if err != nil {
		return nil, fail(11, "%v", err)
	}
	return gc, 0
}

// checkCounts are the sizes checkEveryDevice runs: LL's and Simple's.
var checkCounts = []int{13, 1<<16 + 3}

// checkEveryDevice runs every collective on c, rank r's data r+1+i%7 at
// checkCounts' sizes, and checks the results exactly, in buffers it
// allocates on GPU gpu.
func checkEveryDevice(ctx context.Context, c *ringo.Comm, gpu int, s ringo.Stream) error {
	send, recv, err := checkBuffers(gpu, c.Size())
	if err != nil {
		return err
	}
	defer send.Free()
	defer recv.Free()
	return checkEveryIn(ctx, c, s, send, recv)
}

// checkBuffers allocates checkEveryIn's buffers for n ranks on GPU gpu.
func checkBuffers(gpu, n int) (send, recv ringo.DevPtr[float32], err error) {
	most := slices.Max(checkCounts)
	if send, err = ringo.DeviceAlloc[float32](gpu, n*most); err != nil {
		return send, recv, err
	}
	if recv, err = ringo.DeviceAlloc[float32](gpu, n*most); err != nil {
		send.Free()
	}
	return send, recv, err
}

// checkEveryIn is checkEveryDevice in buffers send and recv of
// checkBuffers. Ranks of one process sharing a GPU allocate them all
// first and free them once all are done: a rank's cuMemFree waits for
// every kernel on the GPU, a peer's among them, which waits for the
// freeing rank's next launch (seen on one H200: TestGPULocalShrinkSplitGrow
// hung so).
func checkEveryIn(ctx context.Context, c *ringo.Comm, s ringo.Stream, send, recv ringo.DevPtr[float32]) error {
	n, rank := c.Size(), c.Rank()
	val := func(r, i int) float32 { return float32(r + 1 + i%7) }
	sum := func(i int) float32 { return float32(n*(n+1)/2 + n*(i%7)) }
	for _, count := range checkCounts {
		err := checkCollectives(ctx, c, s, send.Slice(0, n*count), recv.Slice(0, n*count), count, func(coll string, got []float32) error {
			for i, v := range got {
				var want float32
				switch coll {
				case "allreduce", "reduce":
					want = sum(i)
				case "reducescatter":
					want = sum(rank*count + i)
				case "allgather":
					want = val(i/count, i%count)
				case "broadcast":
					want = val(n-1, i)
				}
				if v != want {
					return fmt.Errorf("%s of %d elements on %d ranks: element %d = %v, want %v", coll, count, n, i, v, want)
				}
			}
			return nil
		}, val)
		if err != nil {
			return err
		}
	}
	return nil
}

// checkCollectives runs all-reduce, reduce-scatter, all-gather, broadcast
// (from the last rank) and reduce (to rank 0) of count elements on c, send
// holding val(rank, i), and hands each result to check.
func checkCollectives(ctx context.Context, c *ringo.Comm, s ringo.Stream, send, recv ringo.DevPtr[float32], count int,
	check func(coll string, got []float32) error, val func(r, i int) float32) error {
	n, rank := c.Size(), c.Rank()
	host := make([]float32, n*count)
	for i := range host {
		host[i] = val(rank, i)
	}
	if err := send.CopyFrom(host); err != nil {
		return err
	}
	one, all := send.Slice(0, count), recv.Slice(0, count)
	for _, run := range []struct {
		coll string
		do   func() error
		out  ringo.DevPtr[float32]
		on   bool // whether this rank's result is checked
	}{
		{"allreduce", func() error { return ringo.AllReduceDevice(ctx, c, one, all, ringo.OpSum, s) }, all, true},
		{"reducescatter", func() error { return ringo.ReduceScatterDevice(ctx, c, send, all, ringo.OpSum, s) }, all, true},
		{"allgather", func() error { return ringo.AllGatherDevice(ctx, c, one, recv, s) }, recv, true},
		{"broadcast", func() error { return ringo.BroadcastDevice(ctx, c, one, all, n-1, s) }, all, true},
		{"reduce", func() error { return ringo.ReduceDevice(ctx, c, one, all, ringo.OpSum, 0, s) }, all, rank == 0},
	} {
		if err := run.do(); err != nil {
			return fmt.Errorf("%s: %w", run.coll, err)
		}
		if err := c.Wait(ctx, s); err != nil {
			return fmt.Errorf("%s: %w", run.coll, err)
		}
		if !run.on {
			continue
		}
		got := make([]float32, run.out.Len())
		if err := run.out.CopyTo(got); err != nil {
			return err
		}
		if err := check(run.coll, got); err != nil {
			return err
		}
	}
	return nil
}

// TestGPULocalShrinkSplitGrow: GPU ranks of one process (NewLocalGPUs)
// shrink (a rank excluded, as one whose goroutine hung), split (two colors,
// ordered by key) and grow (a new rank joining with JoinGrowGPU), each on
// RINGO_TEST_GPUS's GPUs, and every collective is checked on each new
// communicator, every rank on its GPU.
func TestGPULocalShrinkSplitGrow(t *testing.T) {
	g := testGPUs(t)
	gpus := []int{g[0], g[1%len(g)], g[2%len(g)]}
	comms := localGPUs(t, gpus, nil)
	ctx, cancel := context.WithTimeout(context.Background(), 2*time.Minute)
	defer cancel()
	// Every rank's buffers and stream exist before any collective and go
	// after the last (checkEveryIn says why).
	checkAll := func(t *testing.T, cs []*ringo.Comm) {
		t.Helper()
		streams := make([]ringo.Stream, len(cs))
		sends, recvs := make([]ringo.DevPtr[float32], len(cs)), make([]ringo.DevPtr[float32], len(cs))
		for r, c := range cs {
			var err error
			streams[r], err = ringo.NewStream(c.GPU())
			require.NoError(t, err)
			defer streams[r].Close()
			sends[r], recvs[r], err = checkBuffers(c.GPU(), c.Size())
			require.NoError(t, err)
			defer sends[r].Free()
			defer recvs[r].Free()
		}
		noErrors(t, each(cs, func(r int, c *ringo.Comm) error {
			return checkEveryIn(ctx, c, streams[r], sends[r], recvs[r])
		}))
	}

	shrunk := make([]*ringo.Comm, 3)
	noErrors(t, each(comms, func(r int, c *ringo.Comm) (err error) {
		shrunk[r], err = c.Shrink(ctx, []int{1}, nil)
		return err
	}, 1))
	closeAll(t, shrunk)
	survivors := []*ringo.Comm{shrunk[0], shrunk[2]}
	for i, c := range survivors {
		require.Equal(t, [3]int{i, 2, gpus[2*i]}, [3]int{c.Rank(), c.Size(), c.GPU()})
	}
	checkAll(t, survivors)

	subs := make([]*ringo.Comm, 3)
	noErrors(t, each(comms, func(r int, c *ringo.Comm) (err error) {
		subs[r], err = c.Split(ctx, r%2, -r, nil)
		return err
	}))
	closeAll(t, subs)
	for r, want := range map[int][2]int{2: {0, 2}, 0: {1, 2}, 1: {0, 1}} {
		assert.Equal(t, want, [2]int{subs[r].Rank(), subs[r].Size()}, "rank %d", r)
		assert.Equal(t, gpus[r], subs[r].GPU(), "rank %d", r)
	}
	checkAll(t, []*ringo.Comm{subs[2], subs[0]})
	checkAll(t, []*ringo.Comm{subs[1]})

	id, err := comms[0].GrowID()
	require.NoError(t, err)
	grown := make([]*ringo.Comm, 4)
	errs := make([]error, 4)
	done := make(chan struct{})
	for r := range 4 {
		go func() {
			defer func() { done <- struct{}{} }()
			switch r {
			case 3:
				grown[r], errs[r] = ringo.JoinGrowGPU(ctx, id, 4, 3, g[0], nil)
			case 0:
				grown[r], errs[r] = comms[r].Grow(ctx, 4, &id, nil)
			default:
				grown[r], errs[r] = comms[r].Grow(ctx, 4, nil, nil)
			}
		}()
	}
	for range 4 {
		<-done
	}
	closeAll(t, grown)
	noErrors(t, errs)
	for r, c := range grown {
		require.Equal(t, [2]int{r, 4}, [2]int{c.Rank(), c.Size()})
	}
	checkAll(t, grown)
	checkAll(t, comms) // the old communicator still works
}

// BenchmarkGPUShrunkAllReduce: the all-reduce bus bandwidth, at 64 MiB, of
// the communicator a shrink made (three of NewLocalGPUs's four ranks on
// RINGO_TEST_GPUS's GPUs) against a freshly made one of the same GPUs —
// issue 21's "within 5 %". Run with -count to alternate them.
func BenchmarkGPUShrunkAllReduce(b *testing.B) {
	g := testGPUs(b)
	gpus := []int{g[0], g[1%len(g)], g[2%len(g)], g[3%len(g)]}
	ctx, cancel := context.WithTimeout(context.Background(), 5*time.Minute)
	defer cancel()
	comms := localGPUs(b, gpus, nil)
	shrunk := make([]*ringo.Comm, len(comms))
	noErrors(b, each(comms, func(r int, c *ringo.Comm) (err error) {
		shrunk[r], err = c.Shrink(ctx, []int{1}, nil)
		return err
	}, 1))
	survivors := []*ringo.Comm{shrunk[0], shrunk[2], shrunk[3]}
	b.Cleanup(func() {
		for _, c := range survivors {
			c.Close()
		}
	})
	fresh := localGPUs(b, []int{gpus[0], gpus[2], gpus[3]}, nil)
	const count = 16 << 20 // 64 MiB of float32
	for _, run := range []struct {
		name  string
		comms []*ringo.Comm
	}{{"shrunk", survivors}, {"fresh", fresh}} {
		b.Run(run.name, func(b *testing.B) {
			n := len(run.comms)
			var start time.Time
			var ready sync.WaitGroup
			ready.Add(n)
			errs := each(run.comms, func(r int, c *ringo.Comm) error {
				s, err := ringo.NewStream(c.GPU())
				if err != nil {
					return err
				}
				defer s.Close()
				buf, err := ringo.DeviceAlloc[float32](c.GPU(), count)
				if err != nil {
					return err
				}
				defer buf.Free()
				for range 3 { // warm-up: connections, plans
					if err := ringo.AllReduceDevice(ctx, c, buf, buf, ringo.OpSum, s); err != nil {
						return err
					}
				}
				if err := c.Wait(ctx, s); err != nil {
					return err
				}
				ready.Done()
				ready.Wait()
				if r == 0 {
					b.ResetTimer()
					start = time.Now()
				}
				for range b.N {
					if err := ringo.AllReduceDevice(ctx, c, buf, buf, ringo.OpSum, s); err != nil {
						return err
					}
				}
				return c.Wait(ctx, s)
			})
			b.StopTimer()
			noErrors(b, errs)
			secs := time.Since(start).Seconds() / float64(b.N)
			b.ReportMetric(float64(2*(n-1))/float64(n)*count*4/secs/1e9, "busbw-GB/s")
		})
	}
}
