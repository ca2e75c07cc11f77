//go:build cuda

package ringo_test

import (
	"context"
	"errors"
	"fmt"
	"math"
	"math/rand/v2"
	"os"
	"runtime"
	"slices"
	"strconv"
	"strings"
	"sync"
	"sync/atomic"
	"syscall"
	"testing"
	"time"
	"unsafe"

	"github.com/ringo-ccl/ringo"
	"github.com/ringo-ccl/ringo/bench"
	"github.com/ringo-ccl/ringo/device"
	"github.com/ringo-ccl/ringo/internal/config"
	"github.com/ringo-ccl/ringo/internal/cuda"
	"github.com/ringo-ccl/ringo/internal/cuda/nvtx/nvtxtest"
	"github.com/ringo-ccl/ringo/internal/direct"
	"github.com/ringo-ccl/ringo/kernels"
	"github.com/ringo-ccl/ringo/reduce"
	"github.com/ringo-ccl/ringo/ring"
	"github.com/ringo-ccl/ringo/ring/ringtest"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
	"gorgonia.org/cu"
)

// These tests need GPUs: build with -tags cuda and run on the GPU machine
// (make gpu-bundle). RINGO_TEST_GPUS lists the ordinals (default 0,1).

func testGPUs(t testing.TB) []int {
	t.Helper()
	s := os.Getenv("RINGO_TEST_GPUS")
	if s == "" {
		s = "0,1"
	}
	var gpus []int
	for _, f := range strings.Split(s, ",") {
		g, err := strconv.Atoi(f)
		if err != nil {
			t.Fatalf("RINGO_TEST_GPUS=%q", s)
		}
		gpus = append(gpus, g)
	}
	return gpus
}

// sweepGPUs runs the benchmark harness's checked sweep on one GPU
// communicator and fails on any wrong element.
func sweepGPUs(t *testing.T, gpus []int, cfg *ringo.Config, o bench.Options) []bench.Row {
	t.Helper()
	comms, err := ringo.NewLocalGPUs(gpus, cfg)
	if err != nil {
		t.Fatal(err)
	}
	aggs, err := ringo.NewLocal(len(gpus), nil)
	if err != nil {
		t.Fatal(err)
	}
	defer func() {
		for r := range comms {
			comms[r].Close()
			aggs[r].Close()
		}
	}()
	ctx, cancel := context.WithTimeout(context.Background(), sweepDeadline())
	defer cancel()
	rows := make([][]bench.Row, len(comms))
	errs := make([]error, len(comms))
	var wg sync.WaitGroup
	for r := range comms {
		wg.Add(1)
		go func() {
			defer wg.Done()
			rows[r], errs[r] = bench.RunGPURank(ctx, comms[r], aggs[r], o, nil)
			if errs[r] != nil {
				comms[r].Abort()
				aggs[r].Abort()
			}
		}()
	}
	wg.Wait()
	if err := errors.Join(errs...); err != nil {
		t.Fatal(err)
	}
	for _, r := range rows[0] {
		if r.OutOfPlace.Wrong != 0 || r.InPlace.Wrong != 0 {
			t.Errorf("GPUs %v: %s %s %s count %d: %d wrong out of place, %d in place",
				gpus, r.Coll, r.Type, r.Op, r.Count, r.OutOfPlace.Wrong, r.InPlace.Wrong)
		}
	}
	return rows[0]
}

// localGPUs makes NewLocalGPUs's communicator, closed when tb ends.
func localGPUs(tb testing.TB, gpus []int, cfg *ringo.Config) []*ringo.Comm {
	tb.Helper()
	comms, err := ringo.NewLocalGPUs(gpus, cfg)
	if err != nil {
		tb.Fatal(err)
	}
	tb.Cleanup(func() {
		for _, c := range comms {
			c.Close()
		}
	})
	return comms
}

// sweepDeadline bounds one sweepGPUs: RINGO_TEST_SWEEP (a duration), else
// 90 s.
func sweepDeadline() time.Duration {
	if d, err := time.ParseDuration(os.Getenv("RINGO_TEST_SWEEP")); err == nil && d > 0 {
		return d
	}
	return 90 * time.Second
}

func checkedOptions(counts ...int64) bench.Options {
	o := bench.Defaults()
	o.Colls, _ = bench.ParseColls("all")
	o.Types, _ = bench.ParseTypes("all")
	o.Ops, _ = bench.ParseOps("all")
	o.Iters, o.Warmup, o.Check, o.Root = 1, 0, 1, 1
	o.Counts = counts
	return o
}

// TestGPUAllCollectives: every collective, datatype and op, counts from 0
// through primes, in and out of place, 2 ranks on 2 GPUs and 4 ranks on 2
// GPUs.
func TestGPUAllCollectives(t *testing.T) {
	g := testGPUs(t)
	counts := []int64{0, 1, 2, 3, 7, 13, 97, 1021, 4099, 65537}
	for _, proto := range []string{"Simple", "LL", "LL128"} {
		for _, gpus := range [][]int{g, append(append([]int{}, g...), g...)} {
			t.Run(fmt.Sprint(proto, gpus), func(t *testing.T) {
				sweepGPUs(t, gpus, &ringo.Config{Protocol: proto}, checkedOptions(counts...))
			})
		}
	}
}

// TestGPUBidirectional: the bidirectional variant (odd channels run the
// ring backwards) on 2 ranks and on 4 ranks over 2 GPUs, every collective,
// protocol, type and op.
func TestGPUBidirectional(t *testing.T) {
	g := testGPUs(t)
	o := checkedOptions(0, 1, 7, 1021, 65537)
	for _, proto := range []string{"Simple", "LL", "LL128"} {
		for _, gpus := range [][]int{g, append(append([]int{}, g...), g...)} {
			t.Run(fmt.Sprint(proto, gpus), func(t *testing.T) {
				sweepGPUs(t, gpus, &ringo.Config{Protocol: proto, Variant: "bidirectional", Channels: 4}, o)
			})
		}
	}
}

// TestGPUBackToBack: calls enqueued back to back, each reading what the
// one before it wrote, with no wait between — where a kernel's blocks are
// placed while the kernel before it ends (device.New's overlap), each must
// still see all of its predecessor's writes. Per size (one shot, two shots,
// the ring), on 2 and 4 ranks (RINGO_TEST_GPUS, twice over): rounds
// in-place all-reduces, a send to the next rank, an all-gather of what came
// in, then one wait; with the overlap and without (RINGO_PDL_DISABLE=1).
// Every value is a small integer times a power of two, exact in float32.
func TestGPUBackToBack(t *testing.T) {
	g := testGPUs(t)
	for _, off := range []string{"", "1"} {
		for _, gpus := range [][]int{g, append(slices.Clone(g), g...)} {
			t.Run(fmt.Sprintf("pdl_disable=%q/%d ranks", off, len(gpus)), func(t *testing.T) {
				t.Setenv("RINGO_PDL_DISABLE", off)
				backToBack(t, gpus)
			})
		}
	}
}

func backToBack(t *testing.T, gpus []int) {
	n := len(gpus)
	comms := localGPUs(t, gpus, nil)
	const rounds = 8
	ctx, cancel := context.WithTimeout(context.Background(), 60*time.Second)
	defer cancel()
	sum := float32(n * (n + 1) / 2) // of the ranks' r+1
	for _, count := range []int{1021, 1<<18 + 3, 1<<22 + 5} {
		errs := make([]error, n)
		got := make([][]float32, n)
		var wg sync.WaitGroup
		for r := range n {
			wg.Add(1)
			go func() {
				defer wg.Done()
				got[r], errs[r] = backToBackRank(ctx, comms[r], gpus[r], count, rounds)
			}()
		}
		wg.Wait()
		require.NoError(t, errors.Join(errs...), "count %d", count)
		// After the all-reduces every rank holds sum·n^(rounds−1)·(1+i%7)
		// at i; each rank received that from its previous and gathered it.
		want := sum * float32(math.Pow(float64(n), rounds-1))
		for r := range n {
			for q := range n {
				for i := range count {
					if v := got[r][q*count+i]; v != want*float32(1+i%7) {
						t.Fatalf("count %d: rank %d's segment %d element %d = %v, want %v", count, r, q, i, v, want*float32(1+i%7))
					}
				}
			}
		}
	}
}

func backToBackRank(ctx context.Context, c *ringo.Comm, gpu, count, rounds int) ([]float32, error) {
	n, r := c.Size(), c.Rank()
	s, err := ringo.NewStream(gpu)
	if err != nil {
		return nil, err
	}
	defer s.Close()
	var bufs [3]ringo.DevPtr[float32] // the all-reduces', the received, the gathered
	for i, m := range []int{count, count, n * count} {
		if bufs[i], err = ringo.DeviceAlloc[float32](gpu, m); err != nil {
			return nil, err
		}
		defer bufs[i].Free()
	}
	in := make([]float32, count)
	for i := range in {
		in[i] = float32((r + 1) * (1 + i%7))
	}
	if err := bufs[0].CopyFrom(in); err != nil {
		return nil, err
	}
	for range rounds {
		if err := ringo.AllReduceDevice(ctx, c, bufs[0], bufs[0], ringo.OpSum, s); err != nil {
			return nil, err
		}
	}
	if err := ringo.SendRecv(ctx, ringo.SendOpDevice(c, bufs[0], (r+1)%n, s), ringo.RecvOpDevice(c, bufs[1], (r+n-1)%n, s)); err != nil {
		return nil, err
	}
	if err := ringo.AllGatherDevice(ctx, c, bufs[1], bufs[2], s); err != nil {
		return nil, err
	}
	if err := c.Wait(ctx, s); err != nil {
		return nil, err
	}
	out := make([]float32, n*count)
	return out, bufs[2].CopyTo(out)
}

// TestGPUOneShot: the one-shot variant (all-reduce of two ranks in one
// exchange) gives the ring's results, every protocol, type and op.
func TestGPUOneShot(t *testing.T) {
	g := testGPUs(t)
	if len(g) != 2 {
		t.Skip("the one-shot variant needs 2 ranks")
	}
	o := checkedOptions(0, 1, 7, 1021, 65537, 1048583)
	o.Colls = []bench.Coll{bench.AllReduce}
	for _, proto := range []string{"Simple", "LL", "LL128"} {
		t.Run(proto, func(t *testing.T) {
			sweepGPUs(t, g, &ringo.Config{Protocol: proto, Variant: "oneshot"}, o)
		})
	}
}

// TestGPUPrecisionVariants: the precision variants' kernels on 2 ranks and
// on 4 over 2 GPUs, with random inputs: every element is the sum of one
// rotation of the ring as the variant computes it (the same check as the
// host executor's, TestPrecisionVariants), every other collective, type
// and op exact (bench's exact check), and the errors against the exact sum
// ordered as the wire types say (fp32wire's equal to the plain ring's on
// two ranks, where an all-reduce is one addition rounded once either way).
func TestGPUPrecisionVariants(t *testing.T) {
	g := testGPUs(t)
	counts := []int64{1, 7, 1021, 65537, 1048583}
	for _, gpus := range [][]int{g, append(append([]int{}, g...), g...)} {
		relErr := func(variant string, dt ringo.DataType) float64 {
			o := bench.Options{Colls: []bench.Coll{bench.AllReduce}, Types: []ringo.DataType{dt},
				Ops: []reduce.OpKind{reduce.Sum}, Counts: counts, StepFactor: 2, Iters: 1, Check: 2, Error: true}
			rows := sweepGPUs(t, gpus, &ringo.Config{Variant: variant}, o)
			return rows[len(rows)-1].OutOfPlace.RelErr
		}
		t.Run(fmt.Sprint(gpus), func(t *testing.T) {
			if exact, bf16 := relErr("ring", ringo.TypeFloat32), relErr("bf16wire", ringo.TypeFloat32); !(bf16 > 1e3*exact && bf16 < 4*0x1p-9) {
				t.Errorf("bf16wire: relative error %g, float32 ring %g", bf16, exact)
			}
			// On two ranks an all-reduce is one addition, rounded once
			// either way; from three on the plain ring rounds every hop.
			for _, dt := range []ringo.DataType{ringo.TypeFloat16, ringo.TypeBFloat16} {
				plain, wide := relErr("ring", dt), relErr("fp32wire", dt)
				ok := wide < 0.8*plain
				if len(gpus) == 2 {
					ok = math.Abs(wide-plain) <= 1e-9*plain
				}
				if !ok {
					t.Errorf("fp32wire %v on %d ranks: relative error %g, the plain ring's %g", dt, len(gpus), wide, plain)
				}
			}
			for _, v := range []string{"bf16wire", "fp32wire"} {
				sweepGPUs(t, gpus, &ringo.Config{Variant: v}, checkedOptions(0, 1, 7, 1021, 65537))
			}
		})
	}
}

// TestGPUHierarchical: the hierarchical variant on 4 ranks over 2 GPUs, in
// groups of 2 (each group one rank per GPU, the columns one GPU's two
// ranks) and in groups of 4 (a single group): every collective, type and op
// exact, and with random inputs every all-reduce element the variant's own
// sum order gives (the bench's -error check).
func TestGPUHierarchical(t *testing.T) {
	g := testGPUs(t)
	gpus := append(append([]int{}, g...), g...)
	for _, group := range []int{2, 4} {
		t.Run(fmt.Sprint("groups of ", group), func(t *testing.T) {
			cfg := &ringo.Config{Variant: "hierarchical", Group: group}
			sweepGPUs(t, gpus, cfg, checkedOptions(0, 1, 7, 1021, 65537))
			o := bench.Options{Colls: []bench.Coll{bench.AllReduce}, Types: []ringo.DataType{ringo.TypeFloat32},
				Ops: []reduce.OpKind{reduce.Sum}, Counts: []int64{5, 65537, 1048583}, StepFactor: 2, Iters: 1, Check: 2, Error: true}
			sweepGPUs(t, gpus, cfg, o)
		})
	}
}

// TestGPUTunerChoice: with nothing forced, the tuner's choices (LL for
// small messages, Simple for large, channel counts by size) give right
// results across the crossover.
func TestGPUTunerChoice(t *testing.T) {
	o := checkedOptions(1, 255, 4099, 65537, 262147, 1048583, 4194319)
	o.Types = []ringo.DataType{ringo.TypeFloat32, ringo.TypeBFloat16, ringo.TypeInt32}
	o.Ops = []reduce.OpKind{reduce.Sum, reduce.Min}
	sweepGPUs(t, testGPUs(t), nil, o)
}

// TestGPUUnaligned: buffers shifted off 16-byte alignment still work.
func TestGPUUnaligned(t *testing.T) {
	o := checkedOptions(13, 1021, 65537, 1048583)
	o.Types = []ringo.DataType{ringo.TypeFloat32, ringo.TypeFloat16, ringo.TypeInt8, ringo.TypeFloat64}
	o.Ops = []reduce.OpKind{reduce.Sum, reduce.Max}
	for _, proto := range []string{"Simple", "LL", "LL128"} {
		for _, u := range []int64{1, 3} {
			o.Unalign = u
			sweepGPUs(t, testGPUs(t), &ringo.Config{Protocol: proto}, o)
		}
	}
}

// TestGPULarge: counts up to 2^30 elements.
func TestGPULarge(t *testing.T) {
	o := checkedOptions(1<<20+7, 1<<24+43)
	o.Types = []ringo.DataType{ringo.TypeFloat32, ringo.TypeBFloat16}
	o.Ops = []reduce.OpKind{reduce.Sum}
	sweepGPUs(t, testGPUs(t), nil, o)
	o = checkedOptions(1 << 30)
	o.Colls = []bench.Coll{bench.AllReduce}
	o.Types = []ringo.DataType{ringo.TypeInt8}
	o.Ops = []reduce.OpKind{reduce.Sum}
	sweepGPUs(t, testGPUs(t), nil, o)
}

// TestGPUChannelsAndBuffers: other channel counts and FIFO sizes, P2P read.
// The most channels asked for is 64, or as many as fit when ranks share a
// GPU (more is refused: TestGPUSharedGPU).
func TestGPUChannelsAndBuffers(t *testing.T) {
	o := checkedOptions(1, 4099, 1<<20+7)
	o.Types = []ringo.DataType{ringo.TypeFloat32, ringo.TypeFloat16}
	o.Ops = []reduce.OpKind{reduce.Sum, reduce.Avg}
	most := 64
	gpus := testGPUs(t)
	for _, g := range gpus {
		res, err := device.Resident(g)
		require.NoError(t, err)
		most = min(most, res/max(1, countOf(gpus, g)))
	}
	for _, cfg := range []*ringo.Config{{Channels: 1}, {Channels: 3, BuffSize: 1 << 16}, {Channels: most},
		{Channels: 2, Protocol: "LL128", LL128BuffSize: 8 << 10}} { // LL128 slots of 8 lines
		sweepGPUs(t, testGPUs(t), cfg, o)
	}
	t.Setenv("NCCL_P2P_READ_ENABLE", "1")
	sweepGPUs(t, testGPUs(t), &ringo.Config{Channels: 4}, o)
}

// countOf returns how many times v appears in s.
func countOf(s []int, v int) int {
	n := 0
	for _, x := range s {
		if x == v {
			n++
		}
	}
	return n
}

func wantGPUError(t *testing.T, err error, sentinel error, frag string) {
	t.Helper()
	if err == nil || (sentinel != nil && !errors.Is(err, sentinel)) || !strings.Contains(err.Error(), frag) {
		t.Fatalf("got %v, want an error (%v) mentioning %q", err, sentinel, frag)
	}
}

func TestGPUBadInput(t *testing.T) {
	g := testGPUs(t)
	comms := localGPUs(t, g, nil)
	c := comms[0]
	ctx := context.Background()
	s0, err := ringo.NewStream(g[0])
	if err != nil {
		t.Fatal(err)
	}
	defer s0.Close()
	s1, err := ringo.NewStream(g[1])
	if err != nil {
		t.Fatal(err)
	}
	defer s1.Close()
	buf0, err := ringo.DeviceAlloc[float32](g[0], 1024)
	if err != nil {
		t.Fatal(err)
	}
	defer buf0.Free()
	buf1, err := ringo.DeviceAlloc[float32](g[1], 1024)
	if err != nil {
		t.Fatal(err)
	}
	defer buf1.Free()
	host := make([]float32, 1024)

	hostPtr := ringo.DevicePointer[float32](g[0], uintptr(0x1000)+uintptr(len(host)), 1024)
	wantGPUError(t, ringo.AllReduceDevice(ctx, c, hostPtr, buf0, ringo.OpSum, s0), ringo.ErrInvalidArgument, "host memory")
	if g[0] != g[1] { // another GPU's memory and streams
		wantGPUError(t, ringo.AllReduceDevice(ctx, c, buf1, buf0, ringo.OpSum, s0), ringo.ErrInvalidArgument, "memory of GPU")
		wantGPUError(t, ringo.AllReduceDevice(ctx, c, buf0, buf0, ringo.OpSum, s1), ringo.ErrInvalidArgument, "stream of GPU")
		foreign := ringo.StreamHandle(g[0], s1.Handle())
		wantGPUError(t, ringo.AllReduceDevice(ctx, c, buf0, buf0, ringo.OpSum, foreign), ringo.ErrInvalidArgument, "does not belong")
	}
	wantGPUError(t, c.DoDevice(ctx, ringo.DeviceCall{Coll: ringo.CollAllGather, Send: buf0.Addr(), Recv: buf0.Addr(), Count: 1 << 62, Type: ringo.TypeFloat32}, s0),
		ringo.ErrInvalidArgument, "overflows")
	wantGPUError(t, c.DoDevice(ctx, ringo.DeviceCall{Coll: ringo.CollAllReduce, Send: buf0.Addr(), Recv: buf0.Addr(), Count: 2048, Type: ringo.TypeFloat32}, s0),
		ringo.ErrInvalidArgument, "past the end")
	wantGPUError(t, ringo.AllReduce(ctx, c, host, host, ringo.OpSum), ringo.ErrInvalidArgument, "use DoDevice")

	if g[0] != g[1] {
		t.Setenv("NCCL_P2P_DISABLE", "1")
		_, err = ringo.NewLocalGPUs(g, nil)
		wantGPUError(t, err, nil, "NCCL_P2P_DISABLE")
	}
}

// TestGPUAbsentRank: rank 1 never enqueues its part; rank 0's Wait ends
// at its deadline with ErrTimeout, its kernel aborted, and the
// communicator refuses further work — on the ring (16 MiB) and in direct
// all-reduces in two shots (4 MiB) and in one (1 Ki floats), whose blocks
// wait for the absent rank's flags: the error says so.
func TestGPUAbsentRank(t *testing.T) {
	g := testGPUs(t)
	for _, tc := range []struct{ count, shots int }{{1 << 22, 0}, {1 << 20, 2}, {1 << 10, 1}} {
		count := tc.count
		t.Run(fmt.Sprint(count), func(t *testing.T) {
			comms := localGPUs(t, g, nil)
			require.Equal(t, tc.shots, ringo.ReadsPeers(comms[0], int64(count)*4))
			s, _ := ringo.NewStream(g[0])
			defer s.Close()
			buf, _ := ringo.DeviceAlloc[float32](g[0], count)
			defer buf.Free()
			if err := ringo.AllReduceDevice(context.Background(), comms[0], buf, buf, ringo.OpSum, s); err != nil {
				t.Fatal(err)
			}
			ctx, cancel := context.WithTimeout(context.Background(), 500*time.Millisecond)
			defer cancel()
			start := time.Now()
			err := comms[0].Wait(ctx, s)
			wantGPUError(t, err, ringo.ErrTimeout, "did not finish")
			if tc.shots > 0 { // the stall names the absent rank and what rank 0 waited for
				assert.Contains(t, err.Error(), "direct collective, rank 0: block 0 at epoch 1 waits for the start of rank 1 (at 0)")
			}
			if el := time.Since(start); el > 5*time.Second {
				t.Fatalf("abort took %v", el)
			}
			err = ringo.AllReduceDevice(context.Background(), comms[0], buf, buf, ringo.OpSum, s)
			wantGPUError(t, err, ringo.ErrAborted, "")
		})
	}
}

// TestGPUDirectAllReduce: all-reduces up to RINGO_DIRECT_MAX read the
// peers' inputs directly in one shot, and above it up to RINGO_TWOSHOT_MAX
// in two (kernels/src/direct.cu) — every datatype and op, counts across
// the kernels' pack, block and segment boundaries up to one shot's 1-MiB
// limit (two shots: to 8 MiB, all of them in two shots here), in and out
// of place, unaligned buffers, 2 and 4 ranks (on the test's GPUs, twice
// over), a ring order that is not the identity (the sum follows it: the
// random-input check wants one rotation of the ring), and CUDA graphs,
// whose replays count the blocks' epochs on, with calls of one shot and of
// two between; the ring runs the same calls with both limits 0.
func TestGPUDirectAllReduce(t *testing.T) {
	g := testGPUs(t)
	for _, mode := range []struct {
		name, directMax, twoShotMax string
		shots                       int
		counts                      []int64
	}{
		{"one shot", "1M", "0", 1, []int64{1, 2, 3, 7, 13, 97, 1021, 4099, 8193, 65537, 131071, 262143, 1 << 18}},
		{"two shots", "0", "8M", 2, []int64{1, 2, 3, 7, 13, 97, 1021, 4099, 8193, 65537, 262143, 1<<19 + 7, 1 << 21}},
	} {
		t.Run(mode.name, func(t *testing.T) {
			t.Setenv("RINGO_DIRECT_MAX", mode.directMax)
			t.Setenv("RINGO_TWOSHOT_MAX", mode.twoShotMax)
			most := int64(1 << 20)
			if mode.shots == 2 {
				most = 8 << 20
			}
			o := checkedOptions(mode.counts...)
			o.Colls = []bench.Coll{bench.AllReduce}
			for _, gpus := range [][]int{g, append(append([]int{}, g...), g...)} {
				t.Run(fmt.Sprint(gpus), func(t *testing.T) {
					comms := localGPUs(t, gpus, nil)
					require.Equal(t, mode.shots, ringo.ReadsPeers(comms[0], 8))
					require.Equal(t, mode.shots, ringo.ReadsPeers(comms[0], most), "a direct all-reduce of its limit")
					require.Zero(t, ringo.ReadsPeers(comms[0], most+1), "the ring above it")
					sweepGPUs(t, gpus, nil, o)

					unalignedSweeps(t, gpus, o)

					order := make([]int, len(gpus)) // backwards: from 3 ranks on no rotation of the identity
					for i := range order {
						order[i] = len(gpus) - 1 - i
					}
					e := bench.Options{Colls: []bench.Coll{bench.AllReduce}, Types: []ringo.DataType{ringo.TypeFloat32, ringo.TypeBFloat16},
						Ops: []reduce.OpKind{reduce.Sum}, Counts: []int64{5, 4099, 65537}, StepFactor: 2, Iters: 1, Check: 2, Error: true}
					sweepGPUs(t, gpus, &ringo.Config{Ring: order}, e)
				})
			}
		})
	}
	directGraphsAndRing(t, g, bench.AllReduce)
}

// directGraphsAndRing runs colls' direct calls, and all-reduces of one
// shot (to 256 KiB) and of two (above), captured in CUDA graphs and
// replayed, so the blocks' epochs count on across replays; then colls
// with both direct limits 0, on the ring.
func directGraphsAndRing(t *testing.T, g []int, colls ...bench.Coll) {
	t.Run("graphs", func(t *testing.T) {
		t.Setenv("RINGO_DIRECT_MAX", "256K")
		t.Setenv("RINGO_TWOSHOT_MAX", "4M")
		gr := checkedOptions(7, 4099, 65537, 1<<18, 1<<20)
		gr.Colls = slices.Compact(append([]bench.Coll{bench.AllReduce}, colls...))
		gr.Types = []ringo.DataType{ringo.TypeFloat32, ringo.TypeInt64}
		gr.Iters, gr.Check, gr.Graph = 2, 3, 3
		sweepGPUs(t, g, nil, gr)
	})
	t.Run("ring", func(t *testing.T) {
		t.Setenv("RINGO_DIRECT_MAX", "0")
		t.Setenv("RINGO_TWOSHOT_MAX", "0")
		comms := localGPUs(t, g, nil)
		for _, coll := range []ringo.Collective{ringo.CollAllReduce, ringo.CollReduceScatter, ringo.CollAllGather} {
			require.Equal(t, kernels.NotDirect, ringo.DirectKindOf(comms[0], coll, 8), "%v", coll)
		}
		p := checkedOptions(1, 1021, 65537)
		p.Colls = colls
		sweepGPUs(t, g, nil, p)
	})
}

// TestGPUDirectGatherScatter: reduce-scatters and all-gathers whose whole
// buffer is at least RINGO_GATHER_DIRECT_MIN (0 here) and at most the
// staging size (max of RINGO_DIRECT_MAX and RINGO_TWOSHOT_MAX) read the
// peers' inputs directly (kernels/src/direct.cu) — every datatype and
// op, counts across the kernels' pack, block and share boundaries up to
// that limit, in and out of place, unaligned buffers, 2 and 4 ranks, a ring order that is not the identity (the
// reduce-scatter sums in it), CUDA graphs (replays count the epochs on,
// between all-reduces of one and two shots); the ring runs the same calls
// above the limit and with both limits 0.
func TestGPUDirectGatherScatter(t *testing.T) {
	g := testGPUs(t)
	t.Setenv("RINGO_DIRECT_MAX", "256K")
	t.Setenv("RINGO_TWOSHOT_MAX", "8M")
	t.Setenv("RINGO_GATHER_DIRECT_MIN", "0") // 4 ranks too, from the first byte
	counts := []int64{1, 2, 3, 7, 13, 97, 1021, 4099, 8193, 65537, 131071, 262143, 1<<19 + 7}
	o := checkedOptions(counts...)
	o.Colls = []bench.Coll{bench.ReduceScatter, bench.AllGather}
	for _, gpus := range [][]int{g, append(append([]int{}, g...), g...)} {
		t.Run(fmt.Sprint(gpus), func(t *testing.T) {
			n := int64(len(gpus))
			comms := localGPUs(t, gpus, nil)
			require.Equal(t, kernels.DirectReduceScatter, ringo.DirectKindOf(comms[0], ringo.CollReduceScatter, 1))
			require.Equal(t, kernels.DirectAllGather, ringo.DirectKindOf(comms[0], ringo.CollAllGather, (8<<20)/n), "the whole buffer at the limit")
			require.Equal(t, kernels.NotDirect, ringo.DirectKindOf(comms[0], ringo.CollAllGather, (8<<20)/n+1), "the ring above it")
			require.Equal(t, kernels.NotDirect, ringo.DirectKindOf(comms[0], ringo.CollBroadcast, 8))
			sweepGPUs(t, gpus, nil, o)

			unalignedSweeps(t, gpus, o)

			order := make([]int, len(gpus))
			for i := range order {
				order[i] = len(gpus) - 1 - i
			}
			e := checkedOptions(5, 4099, 65537)
			e.Colls = []bench.Coll{bench.ReduceScatter}
			e.Types = []ringo.DataType{ringo.TypeFloat32, ringo.TypeBFloat16}
			sweepGPUs(t, gpus, &ringo.Config{Ring: order}, e)
		})
	}
	directGraphsAndRing(t, g, bench.ReduceScatter, bench.AllGather)
}

// unalignedSweeps runs o's collectives again on a few counts, types and
// ops with every buffer shifted off alignment by 1 and by 3 elements.
func unalignedSweeps(t *testing.T, gpus []int, o bench.Options) {
	t.Helper()
	o.Counts = []int64{13, 1021, 65537}
	o.Types = []ringo.DataType{ringo.TypeFloat32, ringo.TypeFloat16, ringo.TypeInt8, ringo.TypeFloat64}
	o.Ops = []reduce.OpKind{reduce.Sum, reduce.Max}
	for _, shift := range []int64{1, 3} {
		o.Unalign = shift
		sweepGPUs(t, gpus, nil, o)
	}
}

// TestGPUStreams: each rank's calls alternate between two streams with no
// wait between them — a ring all-reduce (16 MiB) and an all-gather on one,
// a direct all-reduce and a reduce-scatter on the other, ten rounds after
// a first on one stream, each call of it waited for or not, as
// FSDP puts all-gathers and reduce-scatters on streams of their own — and
// every result is right: a rank's kernels run one at a time, in the order
// they were enqueued (device.Rank's Streams). 2 and 4 ranks.
func TestGPUStreams(t *testing.T) {
	g := testGPUs(t)
	twice := append(append([]int{}, g...), g...)
	for _, v := range []struct {
		gpus  []int
		waits bool
	}{{g, true}, {twice, true}, {g, false}, {twice, false}} {
		gpus := v.gpus
		t.Run(fmt.Sprintf("%v/first round waited %v", gpus, v.waits), func(t *testing.T) {
			n := len(gpus)
			comms := localGPUs(t, gpus, nil)
			const big, small, part = 1 << 22, 1000, 4099
			val := func(r, i int) float32 { return float32(r + 1 + i%5) }
			sum := func(i int) float32 { return float32(n*(n+1)/2 + n*(i%5)) }
			type rank struct {
				s                        [2]ringo.Stream
				in, out, sin, sout       ringo.DevPtr[float32]
				agIn, agOut, rsIn, rsOut ringo.DevPtr[float32]
			}
			ranks := make([]*rank, n)
			alloc := func(r, count int, fill bool) ringo.DevPtr[float32] {
				p, err := ringo.DeviceAlloc[float32](gpus[r], count)
				require.NoError(t, err)
				t.Cleanup(func() { p.Free() })
				if fill {
					h := make([]float32, count)
					for i := range h {
						h[i] = val(r, i)
					}
					require.NoError(t, p.CopyFrom(h))
				}
				return p
			}
			for r := range ranks { // every buffer before any launch (ranks sharing a GPU)
				k := &rank{}
				for i := range k.s {
					var err error
					k.s[i], err = ringo.NewStream(gpus[r])
					require.NoError(t, err)
					t.Cleanup(func() { k.s[i].Close() })
				}
				k.in, k.out, k.sin, k.sout = alloc(r, big, true), alloc(r, big, false), alloc(r, small, true), alloc(r, small, false)
				k.agIn, k.agOut, k.rsIn, k.rsOut = alloc(r, part, true), alloc(r, n*part, false), alloc(r, n*part, true), alloc(r, part, false)
				ranks[r] = k
			}
			ctx, cancel := context.WithTimeout(context.Background(), sweepDeadline())
			defer cancel()
			var wg sync.WaitGroup
			errs := make([]error, n)
			for r, k := range ranks {
				wg.Add(1)
				go func() {
					defer wg.Done()
					c := comms[r]
					// Round 0 on one stream. Without its waits 2 ranks hung (in
					// its first round or later) in 7 runs of 8 (BENCHMARKS,
					// issue 20, eighth session) until calls.Table kept the
					// ranks of a GPU from enqueueing a call before the others
					// had enqueued the one before.
					for round := range 11 {
						a, b := k.s[0], k.s[1]
						if round == 0 {
							b = a
						}
						calls := []func() error{
							func() error { return ringo.AllReduceDevice(ctx, c, k.in, k.out, ringo.OpSum, a) },
							func() error { return ringo.AllReduceDevice(ctx, c, k.sin, k.sout, ringo.OpSum, b) },
							func() error { return ringo.AllGatherDevice(ctx, c, k.agIn, k.agOut, a) },
							func() error { return ringo.ReduceScatterDevice(ctx, c, k.rsIn, k.rsOut, ringo.OpSum, b) },
						}
						for _, call := range calls {
							err := call()
							if err == nil && round == 0 && v.waits {
								err = c.Wait(ctx, a)
							}
							if err != nil {
								errs[r] = err
								c.Abort()
								return
							}
						}
					}
					errs[r] = errors.Join(c.Wait(ctx, k.s[0]), c.Wait(ctx, k.s[1]))
				}()
			}
			wg.Wait()
			require.NoError(t, errors.Join(errs...))
			for r, k := range ranks {
				check := func(p ringo.DevPtr[float32], want func(i int) float32, what string) {
					h := make([]float32, p.Len())
					require.NoError(t, p.CopyTo(h))
					for i, v := range h {
						if v != want(i) {
							t.Fatalf("rank %d, %s: element %d of %d = %v, want %v", r, what, i, len(h), v, want(i))
						}
					}
				}
				check(k.out, sum, "ring all-reduce")
				check(k.sout, sum, "direct all-reduce")
				check(k.agOut, func(i int) float32 { return val(i/part, i%part) }, "all-gather")
				check(k.rsOut, func(i int) float32 { return sum(r*part + i) }, "reduce-scatter")
			}
		})
	}
}

// TestGPUAbortLatency: Abort from another goroutine stops a kernel that
// waits for an absent peer, and Wait returns, within 100 ms.
func TestGPUAbortLatency(t *testing.T) {
	g := testGPUs(t)
	comms := localGPUs(t, g, nil)
	s, _ := ringo.NewStream(g[0])
	defer s.Close()
	buf, _ := ringo.DeviceAlloc[float32](g[0], 1<<20)
	defer buf.Free()
	if err := ringo.AllReduceDevice(context.Background(), comms[0], buf, buf, ringo.OpSum, s); err != nil {
		t.Fatal(err)
	}
	var aborted atomic.Int64
	time.AfterFunc(100*time.Millisecond, func() {
		aborted.Store(time.Now().UnixNano())
		comms[0].Abort()
	})
	err := comms[0].Wait(context.Background(), s)
	el := time.Duration(time.Now().UnixNano() - aborted.Load())
	t.Logf("Wait returned %v after Abort: %v", el, err)
	if err == nil || el > 100*time.Millisecond {
		t.Fatalf("Wait returned %v after Abort, error %v", el, err)
	}
}

// TestGPUKernels: every kernel the Go side may launch is in the modules.
func TestGPUKernels(t *testing.T) {
	d, err := cuda.Open(testGPUs(t)[0])
	if err != nil {
		t.Fatal(err)
	}
	if err := device.LoadKernels(d); err != nil {
		t.Fatal(err)
	}
	for _, n := range kernels.Names() {
		if _, err := d.Func(n); err != nil {
			t.Errorf("kernel %s: %v", n, err)
		}
	}
}

// TestGPUGraphCapture: collectives captured into a CUDA graph (the first of
// their shape seen only during the capture) replay many times with right
// results.
func TestGPUGraphCapture(t *testing.T) {
	g := testGPUs(t)
	comms := localGPUs(t, g, nil)
	const count, reps = 100003, 50
	type rank struct {
		d      *cuda.Device
		s      ringo.Stream
		buf    ringo.DevPtr[float32]
		graph  cuda.Graph
		result []float32
	}
	ranks := make([]*rank, len(g))
	for r := range ranks {
		d, _ := cuda.Open(g[r])
		s, err := ringo.NewStream(g[r])
		if err != nil {
			t.Fatal(err)
		}
		buf, err := ringo.DeviceAlloc[float32](g[r], count)
		if err != nil {
			t.Fatal(err)
		}
		ranks[r] = &rank{d: d, s: s, buf: buf, result: make([]float32, count)}
		defer s.Close()
		defer buf.Free()
	}
	// A global-mode capture (PyTorch's) must end on the OS thread that
	// began it, as a Python thread would: the goroutine keeps its thread.
	runtime.LockOSThread()
	defer runtime.UnlockOSThread()
	// Capture: each rank's stream records two all-reduces (LL and Simple
	// sizes) of its buffer in place.
	for r, rk := range ranks {
		if err := rk.d.BeginCapture(cuda.Stream(rk.s.Handle()), cuda.CaptureGlobal); err != nil {
			t.Fatal(err)
		}
		if err := ringo.AllReduceDevice(context.Background(), comms[r], rk.buf.Slice(0, 7), rk.buf.Slice(0, 7), ringo.OpSum, rk.s); err != nil {
			t.Fatal(err)
		}
		if err := ringo.AllReduceDevice(context.Background(), comms[r], rk.buf, rk.buf, ringo.OpSum, rk.s); err != nil {
			t.Fatal(err)
		}
		var err error
		if rk.graph, err = rk.d.EndCapture(cuda.Stream(rk.s.Handle())); err != nil {
			t.Fatal(err)
		}
		defer rk.d.DestroyGraph(rk.graph)
	}
	// Collectives of many other shapes make the ranks evict plans: not
	// the captured ones, which the graphs still launch.
	streams, bufs := make([]ringo.Stream, len(ranks)), make([]ringo.DevPtr[float32], len(ranks))
	for r, rk := range ranks {
		streams[r], bufs[r] = rk.s, rk.buf
	}
	if err := churnPlans(comms, streams, bufs, 2*device.PlanCache+1); err != nil {
		t.Fatal(err)
	}
	// Replay: buffers start at 1; each replay doubles every element (twice
	// for the first 7, which two all-reduces of 2 ranks touch).
	one := make([]float32, count)
	for i := range one {
		one[i] = 1
	}
	for _, rk := range ranks {
		if err := rk.buf.CopyFrom(one); err != nil {
			t.Fatal(err)
		}
	}
	const replays = 10
	for range replays {
		for _, rk := range ranks {
			if err := rk.d.LaunchGraph(rk.graph, cuda.Stream(rk.s.Handle())); err != nil {
				t.Fatal(err)
			}
		}
	}
	for r, rk := range ranks {
		ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
		err := comms[r].Wait(ctx, rk.s)
		cancel()
		if err != nil {
			t.Fatal(err)
		}
		if err := rk.buf.CopyTo(rk.result); err != nil {
			t.Fatal(err)
		}
	}
	n := float32(len(g))
	want := float32(1)
	wantHead := float32(1)
	for range replays {
		want *= n
		wantHead *= n * n
	}
	for r, rk := range ranks {
		for i, v := range rk.result {
			w := want
			if i < 7 {
				w = wantHead
			}
			if v != w {
				t.Fatalf("rank %d element %d = %v after %d replays, want %v", r, i, v, replays, w)
			}
		}
	}
}

// TestGPUGraphReplays: each replay of a graph of ringo's collectives
// (CaptureGraph) is a call of its communicator: two ranks replaying, each
// from its goroutine with nothing between its replays (the case that hung
// now and then when replays were not ordered: BENCHMARKS "The graph hang
// outside ringo"), come out right; a collective after the replays is
// numbered after them on both ranks; a replay once the communicator is
// closed is refused.
func TestGPUGraphReplays(t *testing.T) {
	g := testGPUs(t)
	if len(g) < 2 {
		t.Skip("needs two ranks (RINGO_TEST_GPUS=0,0 shares one GPU)")
	}
	comms := localGPUs(t, g[:2], nil)
	ctx := context.Background()
	const count, replays = 1000, 20
	type rank struct {
		s     ringo.Stream
		buf   ringo.DevPtr[float32]
		graph *ringo.Graph
	}
	ones := make([]float32, count)
	for i := range ones {
		ones[i] = 1
	}
	ranks := make([]rank, 2)
	for r := range ranks {
		rk := &ranks[r]
		var err error
		rk.s, err = ringo.NewStream(g[r])
		require.NoError(t, err)
		defer rk.s.Close()
		rk.buf, err = ringo.DeviceAlloc[float32](g[r], count)
		require.NoError(t, err)
		defer rk.buf.Free()
		require.NoError(t, rk.buf.CopyFrom(ones))
		rk.graph, err = ringo.CaptureGraph(rk.s, func() error {
			return ringo.AllReduceDevice(ctx, comms[r], rk.buf, rk.buf, ringo.OpSum, rk.s)
		})
		require.NoError(t, err)
		defer rk.graph.Close()
	}
	var wg sync.WaitGroup
	for r := range ranks {
		wg.Go(func() {
			for range replays {
				if !assert.NoError(t, ranks[r].graph.Launch(ranks[r].s)) {
					return
				}
			}
		})
	}
	wg.Wait()
	for r := range ranks {
		require.NoError(t, ringo.AllReduceDevice(ctx, comms[r], ranks[r].buf, ranks[r].buf, ringo.OpSum, ranks[r].s))
	}
	want := float32(1 << (replays + 1)) // each replay and the call double every element
	got := make([]float32, count)
	for r := range ranks {
		wctx, cancel := context.WithTimeout(ctx, 30*time.Second)
		err := comms[r].Wait(wctx, ranks[r].s)
		cancel()
		require.NoError(t, err, "rank %d", r)
		require.NoError(t, ranks[r].buf.CopyTo(got))
		for i, v := range got {
			require.Equal(t, want, v, "rank %d element %d", r, i)
		}
	}
	require.NoError(t, comms[1].Close())
	err := ranks[1].graph.Launch(ranks[1].s)
	require.ErrorIs(t, err, ringo.ErrInvalidArgument)
	assert.ErrorContains(t, err, "graph replay")
	assert.ErrorContains(t, err, "communicator is closed")
}

// BenchmarkGPULaunch measures the driver's part of a call's host side on
// RINGO_TEST_GPUS's first GPU: "kernel" is one launch of a kernel that
// does nothing (the scaling kernel over 0 elements) through the cgo
// crossing a collective's launch takes (cuCtxSetCurrent, cuLaunchKernel);
// "graph" is the replay of a graph of that one kernel (cuGraphLaunch).
// BenchmarkGPUEnqueue's calls cost this plus ringo's own work.
func BenchmarkGPULaunch(b *testing.B) {
	d, err := cuda.Open(testGPUs(b)[0])
	require.NoError(b, err)
	require.NoError(b, device.LoadKernels(d))
	name, err := kernels.ScaleName(reduce.Float32)
	require.NoError(b, err)
	fn, err := d.Func(name)
	require.NoError(b, err)
	s, err := d.NewStream()
	require.NoError(b, err)
	defer d.DestroyStream(s)
	var args [cuda.MaxArgs]uint64 // in, out, bytes 0, factor
	launch := func() error { return d.Launch(fn, 1, kernels.ScaleThreads, s, &args, 4) }
	b.Run("kernel", func(b *testing.B) {
		for b.Loop() {
			if err := launch(); err != nil {
				b.Fatal(err)
			}
		}
		require.NoError(b, d.Sync(s))
	})
	b.Run("graph", func(b *testing.B) {
		runtime.LockOSThread() // a global-mode capture ends on the thread that began it
		defer runtime.UnlockOSThread()
		require.NoError(b, d.BeginCapture(s, cuda.CaptureGlobal))
		require.NoError(b, launch())
		g, err := d.EndCapture(s)
		require.NoError(b, err)
		defer d.DestroyGraph(g)
		for b.Loop() {
			if err := d.LaunchGraph(g, s); err != nil {
				b.Fatal(err)
			}
		}
		require.NoError(b, d.Sync(s))
	})
}

// BenchmarkGPUEnqueue measures the host-side cost of one call: argument
// checks, planning, the launch (one cgo crossing), with the kernels running
// behind it, on RINGO_TEST_GPUS's first two GPUs. Each rank enqueues from
// its own goroutine, except in "sendrecv-one-goroutine", where one
// goroutine drives both ranks in each SendRecv (as one thread does under
// nccl-tests' -g 2), and in the "-waited" ones, where each call is waited
// for (Wait) before the next: its whole latency.
func BenchmarkGPUEnqueue(b *testing.B) {
	g := testGPUs(b)[:2]
	comms := localGPUs(b, g, nil)
	streams := make([]ringo.Stream, len(g))
	bufs := make([]ringo.DevPtr[float32], len(g))
	for r := range g {
		streams[r], _ = ringo.NewStream(g[r])
		bufs[r], _ = ringo.DeviceAlloc[float32](g[r], 4)
		defer streams[r].Close()
		defer bufs[r].Free()
	}
	ctx := context.Background()
	half := func(r int) (ringo.DevPtr[float32], ringo.DevPtr[float32]) {
		return bufs[r].Slice(0, 2), bufs[r].Slice(2, 4)
	}
	exchange := func(r int) []ringo.P2POp {
		send, recv := half(r)
		return []ringo.P2POp{ringo.SendOpDevice(comms[r], send, 1-r, streams[r]), ringo.RecvOpDevice(comms[r], recv, 1-r, streams[r])}
	}
	each := func(b *testing.B, call func(r int) error) {
		var wg sync.WaitGroup
		b.ResetTimer()
		for r := range g {
			wg.Add(1)
			go func() {
				defer wg.Done()
				for range b.N {
					if err := call(r); err != nil {
						b.Error(err)
						return
					}
				}
			}()
		}
		wg.Wait()
		b.StopTimer()
	}
	b.Run("allreduce", func(b *testing.B) {
		each(b, func(r int) error {
			return ringo.AllReduceDevice(ctx, comms[r], bufs[r], bufs[r], ringo.OpSum, streams[r])
		})
	})
	b.Run("sendrecv", func(b *testing.B) {
		each(b, func(r int) error { return ringo.SendRecv(ctx, exchange(r)...) })
	})
	// Waited: each call waited for before the next, at 8 B, 32 KiB and
	// 256 KiB — a call's whole latency, host and GPU, the all-reduce's
	// against the send/recv pair's (issue 20 asks send/recv no slower).
	for _, n := range []int{2, 8 << 10, 64 << 10} {
		big := make([]ringo.DevPtr[float32], len(g))
		for r := range g {
			var err error
			big[r], err = ringo.DeviceAlloc[float32](g[r], 2*n)
			require.NoError(b, err)
			defer big[r].Free()
		}
		b.Run(fmt.Sprintf("allreduce-waited/%dB", 4*n), func(b *testing.B) {
			each(b, func(r int) error {
				in := big[r].Slice(0, n)
				if err := ringo.AllReduceDevice(ctx, comms[r], in, in, ringo.OpSum, streams[r]); err != nil {
					return err
				}
				return comms[r].Wait(ctx, streams[r])
			})
		})
		b.Run(fmt.Sprintf("sendrecv-waited/%dB", 4*n), func(b *testing.B) {
			each(b, func(r int) error {
				ops := []ringo.P2POp{ringo.SendOpDevice(comms[r], big[r].Slice(0, n), 1-r, streams[r]),
					ringo.RecvOpDevice(comms[r], big[r].Slice(n, 2*n), 1-r, streams[r])}
				if err := ringo.SendRecv(ctx, ops...); err != nil {
					return err
				}
				return comms[r].Wait(ctx, streams[r])
			})
		})
	}
	b.Run("sendrecv-one-goroutine", func(b *testing.B) {
		ops := append(exchange(0), exchange(1)...)
		for range b.N {
			if err := ringo.SendRecv(ctx, ops...); err != nil {
				b.Fatal(err)
			}
		}
	})
	for r := range g {
		if err := comms[r].Wait(ctx, streams[r]); err != nil {
			b.Fatal(err)
		}
	}
}

// gpuChildMain is one GPU rank process (TestGPUProcesses): rank r on GPU
// r % (number of GPUs). Modes:
//   - "gpu-check": all-reduce and all-gather known data, verify, exit 0;
//   - "gpu-register-waiting": TestGPURegisterWhilePeerWaits's
//     (registerWhilePeerWaits);
//   - "gpu-loop": report "ready", then all-reduce until an error;
//   - "gpu-grace": TestGPUProcessStopGrace's (rank 1 leaves without
//     closing after three all-reduces; rank 0 checks its fourth);
//   - "gpu-shrink", "gpu-grow-join": TestGPUProcessesShrink's
//     (gpuShrinkMain).
//
// A mode ending in "-hier" uses the hierarchical variant in groups of 2.
func gpuChildMain(mode string) int {
	if mode == "gpu-shrink" || mode == "gpu-grow-join" {
		return gpuShrinkMain(mode)
	}
	fail := func(code int, err error) int {
		fmt.Fprintln(os.Stderr, "child:", err)
		return code
	}
	id, err := ringo.UniqueIDFromString(os.Getenv(envID))
	if err != nil {
		return fail(2, err)
	}
	rank, _ := strconv.Atoi(os.Getenv(envRank))
	n, _ := strconv.Atoi(os.Getenv(envRanks))
	ngpu, _ := cuda.Count()
	gpu := rank % max(ngpu, 1)
	s, err := ringo.NewStream(gpu)
	if err != nil {
		return fail(3, err)
	}
	defer s.Close()
	const count = 1<<20 + 7
	buf, err := ringo.DeviceAlloc[float32](gpu, count)
	if err != nil {
		return fail(3, err)
	}
	defer buf.Free()
	host := make([]float32, count)
	for i := range host {
		host[i] = float32(rank*3 + i%1000)
	}
	if err := buf.CopyFrom(host); err != nil {
		return fail(3, err)
	}
	before := cuda.Outstanding() // the communicator must give back all it takes
	ctx, cancel := context.WithTimeout(context.Background(), 60*time.Second)
	defer cancel()
	var cfg *ringo.Config
	if m, ok := strings.CutSuffix(mode, "-hier"); ok {
		mode, cfg = m, &ringo.Config{Variant: "hierarchical", Group: 2}
	}
	if mode == "gpu-grace" {
		cfg = &ringo.Config{StopGrace: time.Hour}
	}
	c, err := ringo.NewGPUComm(ctx, id, n, rank, gpu, cfg)
	if err != nil {
		return fail(3, err)
	}
	defer c.Close()
	closed := func() error {
		c.Close()
		if after := cuda.Outstanding(); after != before {
			return fmt.Errorf("the closed communicator holds GPU resources: %+v before it, %+v after", before, after)
		}
		return nil
	}
	switch mode {
	case "gpu-check":
		for _, m := range []int{7, 4099, count} { // LL and Simple sizes
			if err := ringo.AllReduceDevice(ctx, c, buf.Slice(0, m), buf.Slice(0, m), ringo.OpSum, s); err != nil {
				return fail(4, err)
			}
		}
		if err := c.Wait(ctx, s); err != nil {
			return fail(4, err)
		}
		if err := buf.CopyTo(host); err != nil {
			return fail(4, err)
		}
		for i, v := range host {
			// Elements below 7 went through three all-reduces, below 4099 two.
			reps := 1
			if i < 7 {
				reps = 3
			} else if i < 4099 {
				reps = 2
			}
			want := float32(0)
			for r := range n {
				want += float32(r*3 + i%1000)
			}
			for range reps - 1 {
				want *= float32(n)
			}
			if v != want {
				return fail(5, fmt.Errorf("element %d = %v, want %v", i, v, want))
			}
		}
		if err := closed(); err != nil {
			return fail(7, err)
		}
		fmt.Println("ok")
		return 0
	case "gpu-direct":
		if err := runDirectDevice(ctx, c, s); err != nil {
			return fail(4, err)
		}
		if err := closed(); err != nil {
			return fail(7, err)
		}
		fmt.Println("ok")
		return 0
	case "gpu-window":
		if os.Getenv("NCCL_P2P_DISABLE") == "" && ringo.ReadsPeers(c, 8) == 0 {
			return fail(4, fmt.Errorf("rank %d: no direct all-reduce over CUDA IPC", rank))
		}
		alloc := ringo.DeviceAlloc[float32]
		if os.Getenv("RINGO_TEST_SHARED_WINDOWS") == "1" {
			alloc = ringo.DeviceAllocShared[float32]
		}
		if err := runWindows(ctx, c, s, true, alloc); err != nil {
			return fail(4, err)
		}
		if err := closed(); err != nil {
			return fail(7, err)
		}
		fmt.Println("ok")
		return 0
	case "gpu-register-waiting":
		if err := registerWhilePeerWaits(ctx, c, s, buf.Slice(0, 1<<16)); err != nil {
			return fail(4, err)
		}
		if err := closed(); err != nil {
			return fail(7, err)
		}
		fmt.Println("ok")
		return 0
	case "gpu-p2p":
		if err := runP2PDevice(ctx, c, s); err != nil {
			return fail(4, err)
		}
		if err := closed(); err != nil {
			return fail(7, err)
		}
		fmt.Println("ok")
		return 0
	case "gpu-grace":
		if err := gpuGraceRank(ctx, c, rank, buf, s); err != nil {
			return fail(5, err)
		}
		if err := closed(); err != nil {
			return fail(7, err)
		}
		fmt.Println("ok")
		return 0
	case "gpu-loop":
		for i := 0; ; i++ {
			if err := ringo.AllReduceDevice(context.Background(), c, buf, buf, ringo.OpMax, s); err != nil {
				if err := closed(); err != nil {
					return fail(7, err)
				}
				return fail(6, fmt.Errorf("%w; closed, nothing held", err))
			}
			if err := c.Wait(context.Background(), s); err != nil {
				if err := closed(); err != nil {
					return fail(7, err)
				}
				return fail(6, fmt.Errorf("%w; closed, nothing held", err))
			}
			if i == 0 {
				fmt.Println("ready")
			}
		}
	}
	return 2
}

// TestGPUProcesses: one process per GPU, through CUDA IPC and, with
// NCCL_P2P_DISABLE=1, through host shared memory registered with CUDA;
// LL128 forced through CUDA IPC, and refused (with a warning, LL and
// Simple instead) over host memory.
func TestGPUProcesses(t *testing.T) {
	for name, env := range map[string][]string{
		"P2P":       nil,
		"P2P-LL128": {"NCCL_PROTO=LL128"},
		"SHM":       {"NCCL_P2P_DISABLE=1"},
		"SHM-LL128": {"NCCL_P2P_DISABLE=1", "NCCL_PROTO=LL128"},
		"NET":       {"NCCL_P2P_DISABLE=1", "NCCL_SHM_DISABLE=1", "NCCL_SOCKET_IFNAME=lo"}, // sockets and proxies
	} {
		t.Run(name, func(t *testing.T) {
			for _, kv := range env {
				k, v, _ := strings.Cut(kv, "=")
				t.Setenv(k, v)
			}
			id, kids := startRanks(t, 2, func(int) string { return "gpu-check" })
			for r, k := range kids {
				if err := waitExit(t, k, 90*time.Second); err != nil {
					t.Fatalf("rank %d: %v; stderr: %s", r, err, k.stderr.String())
				}
				if name == "SHM-LL128" && !strings.Contains(k.stderr.String(), "NCCL_PROTO selects only LL128") {
					t.Errorf("rank %d did not warn that LL128 cannot run over shared memory: %s", r, k.stderr.String())
				}
			}
			noLeftovers(t, id)
		})
	}
}

// TestGPUProcessesBidirectional: 4 GPU ranks, each its own process (on
// one GPU, ranks share it), run the bidirectional ring — odd channels
// backwards, so every rank is connected both ways — over CUDA IPC, shared
// memory and sockets, without falling back to the ring.
func TestGPUProcessesBidirectional(t *testing.T) {
	gpuProcesses(t, "gpu-check", []string{"RINGO_VARIANT=bidirectional", "NCCL_MIN_NCHANNELS=2"}, allTransports, func(t *testing.T, r int, stderr string) {
		assert.NotContains(t, stderr, "using ring", "rank %d", r)
	})
}

// The GPU processes' transports, by the environment that chooses them.
var (
	allTransports = map[string][]string{
		"P2P": nil,
		"SHM": {"NCCL_P2P_DISABLE=1"},
		"NET": {"NCCL_P2P_DISABLE=1", "NCCL_SHM_DISABLE=1", "NCCL_SOCKET_IFNAME=lo"},
	}
	ipcAndNet = map[string][]string{"P2P": allTransports["P2P"], "NET": allTransports["NET"]}
)

// gpuProcesses runs 4 GPU ranks, each its own process in mode, with env
// and, in a subtest each, every transport's environment: every rank must
// succeed (check, if not nil, looks at what it wrote to stderr) and leave
// nothing behind.
func gpuProcesses(t *testing.T, mode string, env []string, transports map[string][]string, check func(t *testing.T, r int, stderr string)) {
	for name, tenv := range transports {
		t.Run(name, func(t *testing.T) {
			env := append(slices.Clone(env), tenv...)
			id, kids := startRanksEnv(t, 4, func(int) string { return mode }, func(int) []string { return env })
			for r, k := range kids {
				assert.NoError(t, waitExit(t, k, 120*time.Second), "rank %d; stderr: %s", r, k.stderr.String()) // every rank's failure reported
				if check != nil {
					check(t, r, k.stderr.String())
				}
			}
			noLeftovers(t, id)
		})
	}
}

// TestGPUProcessesAnyPeer: 4 GPU ranks, each its own process (on one
// GPU, ranks share it), run a schedule in which every rank sends to every
// other (RunScheduleDevice), so connections beyond the ring are made after
// init, over CUDA IPC, shared memory and sockets; the ring's collectives
// still run after the connection tables grew.
func TestGPUProcessesAnyPeer(t *testing.T) {
	gpuProcesses(t, "gpu-direct", nil, allTransports, nil)
}

// TestGPUProcessesPointToPoint: 4 GPU ranks, each its own process (on
// one GPU, ranks share it), run every point-to-point call (runP2PDevice)
// over CUDA IPC, shared memory and sockets — Send and Recv between two
// ranks the others take no part in among them.
func TestGPUProcessesPointToPoint(t *testing.T) {
	gpuProcesses(t, "gpu-p2p", nil, allTransports, nil)
}

// TestGPUPointToPoint: the same on 4 ranks of one process
// (RINGO_TEST_GPUS's GPUs in turn), twice: with large messages in whole
// parts (RINGO_P2P_STRIPE=0) and, where the four ranks share one GPU, in
// tiles (RINGO_P2P_STRIPE=128K: tiles of 2 KiB, a quarter over 16 parts,
// so the 1-MiB messages go in them).
func TestGPUPointToPoint(t *testing.T) {
	for _, tc := range []struct{ name, stripe string }{{"whole", "0"}, {"tiles", "128K"}} {
		t.Run(tc.name, func(t *testing.T) {
			t.Setenv("RINGO_P2P_STRIPE", tc.stripe)
			gpus := testGPUs(t)
			comms := fourLocalRanks(t, runP2PDevice)
			tiled := 0
			for _, c := range comms {
				tiled += ringo.TiledP2PPlans(c)
			}
			if tc.stripe == "0" || slices.ContainsFunc(gpus, func(g int) bool { return g != gpus[0] }) {
				assert.Zero(t, tiled, "plans in tiles")
			} else {
				assert.Positive(t, tiled, "plans in tiles")
			}
		})
	}
}

// fourLocalRanks runs each of 4 GPU ranks of one process (on
// RINGO_TEST_GPUS's GPUs in turn) through do on a stream of its own, at
// once, fails the test unless all succeed, and returns them.
func fourLocalRanks(t *testing.T, do func(ctx context.Context, c *ringo.Comm, s ringo.Stream) error) []*ringo.Comm {
	gpus := testGPUs(t)
	on := make([]int, 4)
	for r := range on {
		on[r] = gpus[r%len(gpus)]
	}
	comms := localGPUs(t, on, nil)
	ctx, cancel := context.WithTimeout(context.Background(), 90*time.Second)
	defer cancel()
	errc := make(chan error, len(comms))
	for r, c := range comms {
		go func() {
			s, err := ringo.NewStream(on[r])
			if err == nil {
				err = do(ctx, c, s)
				s.Close()
			}
			errc <- err
		}()
	}
	for range comms {
		require.NoError(t, <-errc)
	}
	return comms
}

// runP2PDevice runs, on rank c of a 4-rank GPU communicator, at a small
// size and at one that spreads over channels and FIFO rounds: AllToAll,
// AllToAllV (unequal counts, zeros among them, small messages by LL beside
// large ones by Simple), Gather, Scatter, a group
// of sends and receives (around the ring, and to itself), a lone Send from
// rank 0 to rank 3 that ranks 1 and 2 take no part in; then an all-reduce
// on the ring. Every element is checked.
func runP2PDevice(ctx context.Context, c *ringo.Comm, s ringo.Stream) error {
	n, r, gpu := c.Size(), c.Rank(), c.GPU()
	val := func(rank, i int) int32 { return int32(rank*1_000_000 + i) }
	// One pair of buffers for every call, freed at the end: in one process,
	// cuMemFree waits for every kernel on the GPU — another rank's, which
	// may be waiting for this rank's next call.
	const most = 1<<18 + 5
	send, err := ringo.DeviceAlloc[int32](gpu, 2*n*most)
	if err != nil {
		return err
	}
	defer send.Free()
	recv, err := ringo.DeviceAlloc[int32](gpu, 2*n*most)
	if err != nil {
		return err
	}
	defer recv.Free()
	host := make([]int32, 2*n*most)
	for _, m := range []int{7, most} {
		// run enqueues call on buffers of sendLen and recvLen elements,
		// the first filled with val(r, i), and checks the second against want
		// (-1: not written).
		run := func(what string, sendLen, recvLen int, call func(send, recv ringo.DevPtr[int32]) error, want func(i int) int32) error {
			for i := range host {
				host[i] = val(r, i)
			}
			if err := send.CopyFrom(host); err != nil {
				return err
			}
			for i := range host {
				host[i] = -1
			}
			if err := recv.CopyFrom(host); err != nil {
				return err
			}
			if err := call(send.Slice(0, sendLen), recv.Slice(0, recvLen)); err != nil {
				return fmt.Errorf("%s of %d: %w", what, m, err)
			}
			if err := c.Wait(ctx, s); err != nil {
				return fmt.Errorf("%s of %d: %w", what, m, err)
			}
			if err := recv.CopyTo(host); err != nil {
				return err
			}
			for i := range recvLen {
				if host[i] != want(i) {
					return fmt.Errorf("%s of %d: rank %d's element %d = %d, want %d", what, m, r, i, host[i], want(i))
				}
			}
			return nil
		}
		if err := run("alltoall", n*m, n*m, func(send, recv ringo.DevPtr[int32]) error {
			return ringo.AllToAllDevice(ctx, c, send, recv, s)
		}, func(i int) int32 { return val(i/m, r*m+i%m) }); err != nil {
			return err
		}
		// AllToAllV: rank x sends sizes[(x+q) mod 3] elements to q, packed:
		// none, a few (by LL), or m (by Simple at the larger m), so that
		// steps send by one protocol and receive by the other.
		sizes := [3]int{0, 5, m}
		counts := func(x int) (cnt, displ []int, total int) {
			for q := range n {
				cnt, displ = append(cnt, sizes[(x+q)%3]), append(displ, total)
				total += sizes[(x+q)%3]
			}
			return cnt, displ, total
		}
		cnt, displ, total := counts(r)
		from := make([]int, total) // element i of recv: (sender, its index)
		idx := make([]int, total)
		for q := range n {
			_, qd, _ := counts(q)
			for i := range cnt[q] {
				from[displ[q]+i], idx[displ[q]+i] = q, qd[r]+i
			}
		}
		if err := run("alltoallv", total, total, func(send, recv ringo.DevPtr[int32]) error {
			return ringo.AllToAllVDevice(ctx, c, send, cnt, displ, recv, cnt, displ, s)
		}, func(i int) int32 { return val(from[i], idx[i]) }); err != nil {
			return err
		}
		gatherLen := 0
		if r == 1 {
			gatherLen = n * m
		}
		if err := run("gather", m, gatherLen, func(send, recv ringo.DevPtr[int32]) error {
			return ringo.GatherDevice(ctx, c, send, recv, 1, s)
		}, func(i int) int32 { return val(i/m, i%m) }); err != nil {
			return err
		}
		scatterLen := 0
		if r == 2 {
			scatterLen = n * m
		}
		if err := run("scatter", scatterLen, m, func(send, recv ringo.DevPtr[int32]) error {
			return ringo.ScatterDevice(ctx, c, send, recv, 2, s)
		}, func(i int) int32 { return val(2, r*m+i) }); err != nil {
			return err
		}
		// A group: to the successor and from the predecessor, and to and
		// from itself (the second half of each buffer).
		next, prev := (r+1)%n, (r+n-1)%n
		if err := run("sendrecv", 2*m, 2*m, func(send, recv ringo.DevPtr[int32]) error {
			return ringo.SendRecv(ctx,
				ringo.SendOpDevice(c, send.Slice(0, m), next, s), ringo.RecvOpDevice(c, recv.Slice(0, m), prev, s),
				ringo.SendOpDevice(c, send.Slice(m, 2*m), r, s), ringo.RecvOpDevice(c, recv.Slice(m, 2*m), r, s))
		}, func(i int) int32 {
			if i < m {
				return val(prev, i)
			}
			return val(r, i)
		}); err != nil {
			return err
		}
		switch r {
		case 0:
			if err := run("send", m, 0, func(send, _ ringo.DevPtr[int32]) error {
				return ringo.SendDevice(ctx, c, send, 3, s)
			}, nil); err != nil {
				return err
			}
		case 3:
			if err := run("recv", 0, m, func(_, recv ringo.DevPtr[int32]) error {
				return ringo.RecvDevice(ctx, c, recv, 0, s)
			}, func(i int) int32 { return val(0, i) }); err != nil {
				return err
			}
		}
	}
	const count = 1000
	return run1AllReduce(ctx, c, s, count)
}

// run1AllReduce runs an all-reduce of count elements on c's ring and
// checks it.
func run1AllReduce(ctx context.Context, c *ringo.Comm, s ringo.Stream, count int) error {
	buf, err := ringo.DeviceAlloc[int32](c.GPU(), count)
	if err != nil {
		return err
	}
	defer buf.Free()
	host := make([]int32, count)
	for i := range host {
		host[i] = int32(c.Rank()*count + i)
	}
	if err := buf.CopyFrom(host); err != nil {
		return err
	}
	if err := ringo.AllReduceDevice(ctx, c, buf, buf, ringo.OpSum, s); err != nil {
		return err
	}
	if err := c.Wait(ctx, s); err != nil {
		return err
	}
	if err := buf.CopyTo(host); err != nil {
		return err
	}
	for i, v := range host {
		want := int32(0)
		for q := range c.Size() {
			want += int32(q*count + i)
		}
		if v != want {
			return fmt.Errorf("all-reduce: element %d = %d, want %d", i, v, want)
		}
	}
	return nil
}

// TestGPUScheduleAnyPeer: the same schedule on 4 ranks of one process
// (RINGO_TEST_GPUS's GPUs in turn).
func TestGPUScheduleAnyPeer(t *testing.T) { fourLocalRanks(t, runDirectDevice) }

// runDirectDevice runs a schedule that is no ring — a direct all-gather,
// every rank sending to every other — through RunScheduleDevice with both
// protocols, twice each (the second time on the connections the first
// made), then an all-reduce on the ring, and checks what arrives.
func runDirectDevice(ctx context.Context, c *ringo.Comm, s ringo.Stream) error {
	n, rank := c.Size(), c.Rank()
	const count = 500
	send, err := ringo.DeviceAlloc[int32](c.GPU(), count)
	if err != nil {
		return err
	}
	defer send.Free()
	recv, err := ringo.DeviceAlloc[int32](c.GPU(), count*n)
	if err != nil {
		return err
	}
	defer recv.Free()
	host := make([]int32, count*n)
	for i := range count {
		host[i] = int32(rank*count + i)
	}
	if err := send.CopyFrom(host[:count]); err != nil {
		return err
	}
	// The FIFOs are the communicator's (over the net transport they must
	// be: its proxies forward whole slots).
	buff := map[ring.Protocol]int{ring.Simple: config.DefaultGPUBuffSize, ring.LL: config.DefaultGPULLBuffSize}
	for _, proto := range []ring.Protocol{ring.Simple, ring.LL, ring.Simple, ring.LL} {
		plans, err := ringtest.DirectAllGather(ring.Spec{Coll: ring.AllGather, Ring: ring.Identity(n), Count: count,
			EltSize: 4, Channels: 1, Proto: proto, BuffSize: buff[proto]})
		if err != nil {
			return err
		}
		for i := range host {
			host[i] = -1
		}
		if err := recv.CopyFrom(host); err != nil {
			return err
		}
		call := ringo.DeviceCall{Coll: ringo.CollAllGather, Send: send.Addr(), Recv: recv.Addr(), Count: count, Type: ringo.TypeInt32}
		if err := c.RunScheduleDevice(ctx, plans, call, s); err != nil {
			return fmt.Errorf("%v: %w", proto, err)
		}
		if err := c.Wait(ctx, s); err != nil {
			return fmt.Errorf("%v: %w", proto, err)
		}
		if err := recv.CopyTo(host); err != nil {
			return err
		}
		for i, v := range host {
			if v != int32(i) {
				return fmt.Errorf("%v: element %d = %d, want %d", proto, i, v, i)
			}
		}
	}
	// Smaller FIFOs than the communicator's fit its connections, except
	// over the net transport, where they are refused before anything runs.
	plans, err := ringtest.DirectAllGather(ring.Spec{Coll: ring.AllGather, Ring: ring.Identity(n), Count: count,
		EltSize: 4, Channels: 1, Proto: ring.Simple, BuffSize: 8 * 4096})
	if err != nil {
		return err
	}
	call := ringo.DeviceCall{Coll: ringo.CollAllGather, Send: send.Addr(), Recv: recv.Addr(), Count: count, Type: ringo.TypeInt32}
	err = c.RunScheduleDevice(ctx, plans, call, s)
	if net := os.Getenv("NCCL_SHM_DISABLE") == "1"; net != (err != nil) || net && !strings.Contains(err.Error(), "net transport") {
		return fmt.Errorf("a schedule with 32 KiB FIFOs (net transport: %v): %v", net, err)
	}
	return run1AllReduce(ctx, c, s, count)
}

// TestGPUProcessesHierarchical: 4 GPU ranks, each its own process (on
// one GPU, ranks share it), with the hierarchical variant in groups of 2:
// each rank makes its group's and its column's communicators on its GPU,
// the all-reduces through them are right, and closing gives back all
// they took — through CUDA IPC and through sockets.
func TestGPUProcessesHierarchical(t *testing.T) {
	gpuProcesses(t, "gpu-check-hier", nil, ipcAndNet, nil)
}

// TestGPUProcessKilled: kill -9 one GPU rank while the other is inside
// all-reduces; the survivor's Wait fails naming it, its kernel aborted.
func TestGPUProcessKilled(t *testing.T) {
	t.Run("P2P", testGPUProcessKilled)
	t.Run("NET", func(t *testing.T) {
		t.Setenv("NCCL_P2P_DISABLE", "1")
		t.Setenv("NCCL_SHM_DISABLE", "1")
		t.Setenv("NCCL_SOCKET_IFNAME", "lo")
		testGPUProcessKilled(t)
	})
}

// testGPUProcessKilled: 5 trials (10 with TestGPUProcessKilled's two
// transports) of kill -9 on a random rank at a random moment of a stream of
// GPU all-reduces: the survivor fails naming it within 10 s, and nothing of
// the communicator stays in /dev/shm.
func testGPUProcessKilled(t *testing.T) {
	rng := rand.New(rand.NewPCG(uint64(time.Now().UnixNano()), 2))
	for trial := range 5 {
		victim, delay := rng.IntN(2), time.Duration(rng.IntN(50))*time.Millisecond
		id, kids := startRanks(t, 2, func(int) string { return "gpu-loop" })
		for r, k := range kids {
			if !k.stdout.Scan() || k.stdout.Text() != "ready" {
				t.Fatalf("trial %d: rank %d did not start: %s", trial, r, k.stderr.String())
			}
		}
		time.Sleep(delay)
		kids[victim].cmd.Process.Kill()
		kids[victim].cmd.Wait()
		start := time.Now()
		s := kids[1-victim]
		if err := waitExit(t, s, 30*time.Second); err == nil {
			t.Fatalf("trial %d: rank %d survived the loss of rank %d", trial, 1-victim, victim)
		}
		if msg := s.stderr.String(); !strings.Contains(msg, fmt.Sprintf("rank %d", victim)) {
			t.Fatalf("trial %d: rank %d's error does not name rank %d: %s", trial, 1-victim, victim, msg)
		}
		if el := time.Since(start); el > 10*time.Second {
			t.Errorf("trial %d: took %v to notice", trial, el)
		}
		if msg := s.stderr.String(); !strings.Contains(msg, "closed, nothing held") {
			t.Fatalf("trial %d: rank %d's communicator did not give back its GPU resources: %s", trial, 1-victim, msg)
		}
		noLeftovers(t, id)
	}
}

// TestGPUProcessStopGrace: under Config.StopGrace (the C ABI's setting)
// the kernels that a lost rank leaves waiting stop only once Err has
// reported the loss — never before, so that an application polling its
// collective's completion and the communicator's error in turn (PyTorch)
// cannot take a collective the lost rank never joined for a success — and
// then at once.
func TestGPUProcessStopGrace(t *testing.T) {
	id, kids := startRanks(t, 2, func(int) string { return "gpu-grace" })
	for r, k := range kids {
		err := waitExit(t, k, 90*time.Second)
		require.NoError(t, err, "rank %d: %s", r, k.stderr.String())
	}
	noLeftovers(t, id)
}

// gpuGraceRank is a rank of TestGPUProcessStopGrace: three all-reduces
// together; then rank 1 exits without closing, and rank 0's fourth
// all-reduce must still be running 300 ms after the bootstrap named rank 1
// lost, end with an error once Err returned the loss, and its stream
// drain within 10 s.
func gpuGraceRank(ctx context.Context, c *ringo.Comm, rank int, buf ringo.DevPtr[float32], s ringo.Stream) error {
	for range 3 {
		if err := ringo.AllReduceDevice(ctx, c, buf, buf, ringo.OpMax, s); err != nil {
			return err
		}
		if err := c.Wait(ctx, s); err != nil {
			return err
		}
	}
	if rank == 1 {
		os.Exit(0) // lost: no Close
	}
	if err := ringo.AllReduceDevice(ctx, c, buf, buf, ringo.OpMax, s); err != nil {
		return err
	}
	synced := make(chan error, 1)
	go func() { synced <- s.Sync() }()
	for !slices.Contains(c.Lost(), 1) {
		if ctx.Err() != nil {
			return fmt.Errorf("rank 1 was never named lost: %w", ctx.Err())
		}
		time.Sleep(time.Millisecond)
	}
	select {
	case err := <-synced:
		return fmt.Errorf("the all-reduce rank 1 never joined ended (%v) before Err reported the loss", err)
	case <-time.After(300 * time.Millisecond):
	}
	lost := c.Err()
	if lost == nil || !strings.Contains(lost.Error(), "rank 1") {
		return fmt.Errorf("Err after rank 1 was lost: %v, want it named", lost)
	}
	select {
	case <-synced:
	case <-time.After(10 * time.Second):
		return fmt.Errorf("the kernels did not stop within 10 s of Err reporting the loss")
	}
	if err := c.Wait(ctx, s); err == nil {
		return fmt.Errorf("Wait after the loss returned nil")
	}
	return nil
}

// TestGPUSharedLateRank: 4 ranks of one process share a GPU, and one is
// late: the others' all-reduce kernels already wait for it when they make
// their first all-to-all, whose connections off the ring are made then —
// GPU memory allocated between launches in the context the ranks share.
// Everything completes, right, within the deadline.
func TestGPUSharedLateRank(t *testing.T) {
	gpu := testGPUs(t)[0]
	const n, m = 4, 1 << 16
	comms := localGPUs(t, slices.Repeat([]int{gpu}, n), nil)
	val := func(r, j int) int32 { return int32(r*n*m + j) }
	type rankBufs struct {
		s               ringo.Stream
		sum, send, recv ringo.DevPtr[int32]
	}
	bufs := make([]rankBufs, n)
	for r := range bufs { // every buffer before the first launch
		b := &bufs[r]
		var err error
		if b.s, err = ringo.NewStream(gpu); err != nil {
			t.Fatal(err)
		}
		t.Cleanup(func() { b.s.Close() })
		for _, d := range []struct {
			p   *ringo.DevPtr[int32]
			len int
		}{{&b.sum, m}, {&b.send, n * m}, {&b.recv, n * m}} {
			if *d.p, err = ringo.DeviceAlloc[int32](gpu, d.len); err != nil {
				t.Fatal(err)
			}
			t.Cleanup(func() { d.p.Free() })
		}
		host := make([]int32, n*m)
		for j := range host {
			host[j] = val(r, j)
		}
		if err := b.send.CopyFrom(host); err != nil {
			t.Fatal(err)
		}
	}
	ctx, cancel := context.WithTimeout(context.Background(), 60*time.Second)
	defer cancel()
	errs := each(comms, func(r int, c *ringo.Comm) error {
		b := &bufs[r]
		if r == n-1 {
			time.Sleep(300 * time.Millisecond)
		}
		return errors.Join(ringo.AllReduceDevice(ctx, c, b.sum, b.sum, ringo.OpSum, b.s),
			ringo.AllToAllDevice(ctx, c, b.send, b.recv, b.s), c.Wait(ctx, b.s))
	})
	for r, err := range errs {
		if err != nil {
			t.Fatalf("rank %d: %v", r, err)
		}
	}
	for r := range n {
		host := make([]int32, n*m)
		if err := bufs[r].recv.CopyTo(host); err != nil {
			t.Fatal(err)
		}
		for q := range n {
			for i := range m {
				if host[q*m+i] != val(q, r*m+i) {
					t.Fatalf("rank %d: element %d from rank %d = %d, want %d", r, i, q, host[q*m+i], val(q, r*m+i))
				}
			}
		}
	}
}

// TestGPUSharedGPU: ranks of NewGPUComm on one GPU (2 and 4, as a
// process that drives one GPU with several ranks does, or ranks of
// several processes do) form a ring that works, which NCCL refuses
// ("Duplicate GPU"): their channels are capped so that every rank's
// kernel is resident at once. Asking for more channels than fit is an
// error saying how many do.
func TestGPUSharedGPU(t *testing.T) {
	gpu := testGPUs(t)[0]
	for _, n := range []int{2, 4} {
		t.Run(fmt.Sprint(n, " ranks"), func(t *testing.T) {
			id, err := ringo.NewUniqueID()
			if err != nil {
				t.Fatal(err)
			}
			ctx, cancel := context.WithTimeout(context.Background(), 60*time.Second)
			defer cancel()
			const count = 1<<20 + 7
			errs := make([]error, n)
			var wg sync.WaitGroup
			for r := range n {
				wg.Add(1)
				go func() {
					defer wg.Done()
					errs[r] = sharedRank(ctx, id, n, r, gpu, count)
				}()
			}
			wg.Wait()
			for r, err := range errs {
				if err != nil {
					t.Fatalf("rank %d: %v", r, err)
				}
			}
		})
	}
	res, err := device.Resident(gpu)
	if err != nil {
		t.Fatal(err)
	}
	n := res/64 + 1 // more ranks than 64 channels each fit
	_, err = ringo.NewLocalGPUs(slices.Repeat([]int{gpu}, n), &ringo.Config{Channels: 64})
	wantGPUError(t, err, ringo.ErrInvalidArgument, fmt.Sprintf("%d ranks share GPU %d, which holds %d blocks", n, gpu, res))
	t.Logf("GPU %d holds %d blocks of ringo's kernels at once", gpu, res)

	// Two ranks on one stream would wait for each other forever: the
	// second is refused, and the first's kernel is aborted.
	comms := localGPUs(t, []int{gpu, gpu}, nil)
	s, err := ringo.NewStream(gpu)
	if err != nil {
		t.Fatal(err)
	}
	defer s.Close()
	buf, err := ringo.DeviceAlloc[float32](gpu, 1024)
	if err != nil {
		t.Fatal(err)
	}
	defer buf.Free()
	ctx := context.Background()
	if err := ringo.AllReduceDevice(ctx, comms[0], buf, buf, ringo.OpSum, s); err != nil {
		t.Fatal(err)
	}
	err = ringo.AllReduceDevice(ctx, comms[1], buf, buf, ringo.OpSum, s)
	wantGPUError(t, err, ringo.ErrInvalidArgument, "on the same stream")
	wctx, cancel := context.WithTimeout(ctx, 30*time.Second)
	defer cancel()
	if err := comms[0].Wait(wctx, s); err == nil || errors.Is(err, ringo.ErrTimeout) {
		t.Fatalf("rank 0's kernel was not aborted: %v", err)
	}
}

// sharedRank is rank r of n of communicator id on GPU gpu: an all-reduce
// of count elements, checked.
func sharedRank(ctx context.Context, id ringo.UniqueID, n, r, gpu, count int) error {
	c, err := ringo.NewGPUComm(ctx, id, n, r, gpu, nil)
	if err != nil {
		return err
	}
	defer c.Close()
	s, err := ringo.NewStream(gpu)
	if err != nil {
		return err
	}
	defer s.Close()
	return run1AllReduce(ctx, c, s, count)
}

// TestGPUWorldOfOne: a communicator of one rank (NewLocalGPUs and
// NewGPUComm) runs every collective, type and op with the checked sweep,
// in and out of place, as a copy (the driver's) or, for PreMulSum, the
// scaling kernel; captured into a CUDA graph, an out-of-place copy replays
// and an in-place call records nothing and still replays.
func TestGPUWorldOfOne(t *testing.T) {
	gpu := testGPUs(t)[0]
	o := checkedOptions(0, 1, 7, 1021, 65537, 1<<20+7)
	o.Root = 0
	sweepGPUs(t, []int{gpu}, nil, o)

	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	defer cancel()
	id, err := ringo.NewUniqueID()
	if err != nil {
		t.Fatal(err)
	}
	c, err := ringo.NewGPUComm(ctx, id, 1, 0, gpu, nil)
	if err != nil {
		t.Fatal(err)
	}
	defer c.Close()
	d, err := cuda.Open(gpu)
	if err != nil {
		t.Fatal(err)
	}
	s, err := ringo.NewStream(gpu)
	if err != nil {
		t.Fatal(err)
	}
	defer s.Close()
	const count = 1<<20 + 3
	send, err := ringo.DeviceAlloc[float32](gpu, count)
	if err != nil {
		t.Fatal(err)
	}
	defer send.Free()
	recv, err := ringo.DeviceAlloc[float32](gpu, count)
	if err != nil {
		t.Fatal(err)
	}
	defer recv.Free()
	host := make([]float32, count)
	for i := range host {
		host[i] = float32(i % 1000)
	}
	if err := send.CopyFrom(host); err != nil {
		t.Fatal(err)
	}
	// A global-mode capture (PyTorch's) must end on the OS thread that
	// began it, as a Python thread would: the goroutine keeps its thread.
	runtime.LockOSThread()
	defer runtime.UnlockOSThread()
	// The graph: scale send by 2 in place, copy it to recv.
	if err := d.BeginCapture(cuda.Stream(s.Handle()), cuda.CaptureGlobal); err != nil {
		t.Fatal(err)
	}
	if err := ringo.AllReduceDevice(ctx, c, send, send, ringo.PreMul[float32](2), s); err != nil {
		t.Fatal(err)
	}
	if err := ringo.AllReduceDevice(ctx, c, send, send, ringo.OpSum, s); err != nil { // nothing to record
		t.Fatal(err)
	}
	if err := ringo.AllGatherDevice(ctx, c, send, recv, s); err != nil {
		t.Fatal(err)
	}
	graph, err := d.EndCapture(cuda.Stream(s.Handle()))
	if err != nil {
		t.Fatal(err)
	}
	defer d.DestroyGraph(graph)
	const replays = 3
	for range replays {
		if err := d.LaunchGraph(graph, cuda.Stream(s.Handle())); err != nil {
			t.Fatal(err)
		}
	}
	if err := c.Wait(ctx, s); err != nil {
		t.Fatal(err)
	}
	got := make([]float32, count)
	if err := recv.CopyTo(got); err != nil {
		t.Fatal(err)
	}
	for i, v := range got {
		if want := host[i] * (1 << replays); v != want {
			t.Fatalf("element %d = %v after %d replays, want %v", i, v, replays, want)
		}
	}
}

// TestGPUTrace: with RINGO_TRACE set, the kernels record every step's start
// and end on the GPU, and the file written at Close holds one gpu-step
// event per step of every channel of every rank's launches, in order and
// with the plan's primitives.
func TestGPUTrace(t *testing.T) {
	g := testGPUs(t)
	path := t.TempDir() + "/gpu.json"
	t.Setenv("RINGO_TRACE", path)
	comms, err := ringo.NewLocalGPUs(g, &ringo.Config{Channels: 4, Protocol: "Simple"})
	if err != nil {
		t.Fatal(err)
	}
	if err := allReduceEach(comms, g, 1<<20, 3); err != nil {
		t.Fatal(err)
	}
	events := closeAndReadTrace(t, comms, path)
	steps := map[[2]int]int{}
	for _, e := range events {
		if e.Cat != "gpu-step" {
			continue
		}
		if e.Dur < 0 || e.Dur > 1e6 || e.Args.Seq < 1 || e.Args.Seq > 3 {
			t.Fatalf("event %+v", e)
		}
		steps[[2]int{e.Pid, e.Tid}]++
	}
	// Two ranks, 4 MiB in 4 channels of Simple: 3 launches × (2(n−1)+1)
	// steps per chunk, at least one chunk per channel.
	for r := range comms {
		for ch := 1; ch <= 4; ch++ {
			if n := steps[[2]int{r, ch}]; n < 9 || n%3 != 0 {
				t.Errorf("rank %d channel %d: %d gpu-step events", r, ch-1, n)
			}
		}
	}
	t.Logf("%d events", len(events))
}

// TestGPUNVTX: with an NVTX tool attached (a recorder loaded through
// NVTX_INJECTION64_PATH, as Nsight Systems loads its own), every GPU
// collective of each rank process is a range in the domain "ringo", named
// for the call, in the category "rank N", with the call's bytes as payload,
// and ended.
func TestGPUNVTX(t *testing.T) {
	env, log := nvtxtest.Env(t)
	_, kids := startRanksEnv(t, 2, func(int) string { return "gpu-check" }, func(r int) []string {
		return append(env, fmt.Sprintf("RINGO_NVTX_LOG=%s.%d", log, r))
	})
	for r, k := range kids {
		if err := waitExit(t, k, 90*time.Second); err != nil {
			t.Fatalf("rank %d: %v; stderr: %s", r, err, k.stderr.String())
		}
	}
	for r := range kids {
		ranges, err := nvtxtest.Read(fmt.Sprintf("%s.%d", log, r))
		if err != nil {
			t.Fatalf("rank %d: %v", r, err)
		}
		var got []uint64
		for _, x := range ranges {
			if x.Domain != "ringo" || x.Message != "allreduce float sum" || x.Category != fmt.Sprintf("rank %d", r) || !x.Ended {
				t.Errorf("rank %d: range %+v", r, x)
			}
			got = append(got, x.Payload)
		}
		if want := []uint64{7 * 4, 4099 * 4, (1<<20 + 7) * 4}; fmt.Sprint(got) != fmt.Sprint(want) {
			t.Errorf("rank %d: ranges of %v bytes, want %v", r, got, want)
		}
	}
}

// TestGPUCloseGivesBack: communicators in one process, after collectives
// (and after an Abort), give back every GPU resource they took when
// closed: device memory, mapped host memory, IPC mappings, registrations,
// streams and events.
func TestGPUCloseGivesBack(t *testing.T) {
	g := testGPUs(t)
	for _, abort := range []bool{false, true} {
		before := cuda.Outstanding()
		comms, err := ringo.NewLocalGPUs(g, &ringo.Config{Channels: 2})
		if err != nil {
			t.Fatal(err)
		}
		if during := cuda.Outstanding(); during == before {
			t.Fatalf("the communicators hold nothing the ledger counts: %+v", during)
		}
		if err := allReduceEach(comms, g, 1<<20, 1); err != nil {
			t.Fatal(err)
		}
		for _, c := range comms {
			if abort {
				c.Abort()
			}
			c.Close()
		}
		if after := cuda.Outstanding(); after != before {
			t.Errorf("abort %v: %+v held before the communicators, %+v after they closed", abort, before, after)
		}
	}
}

// allReduceEach runs reps in-place all-reduces of count floats on every
// rank of comms (rank r on GPU g[r], a stream and buffer of its own), then
// waits for them.
func allReduceEach(comms []*ringo.Comm, g []int, count, reps int) error {
	errs := make([]error, len(comms))
	var wg sync.WaitGroup
	for r, c := range comms {
		wg.Add(1)
		go func() {
			defer wg.Done()
			s, err := ringo.NewStream(g[r])
			if err != nil {
				errs[r] = err
				return
			}
			defer s.Close()
			buf, err := ringo.DeviceAlloc[float32](g[r], count)
			if err != nil {
				errs[r] = err
				return
			}
			defer buf.Free()
			for range reps {
				if errs[r] = ringo.AllReduceDevice(context.Background(), c, buf, buf, ringo.OpSum, s); errs[r] != nil {
					return
				}
			}
			errs[r] = c.Wait(context.Background(), s)
		}()
	}
	wg.Wait()
	return errors.Join(errs...)
}

// churnPlans runs shapes in-place max all-reduces of distinct counts (1 to
// shapes elements of bufs[r]) on every rank of comms, rank r on
// streams[r], waiting every 16, so that the ranks make and evict plans.
func churnPlans(comms []*ringo.Comm, streams []ringo.Stream, bufs []ringo.DevPtr[float32], shapes int) error {
	errs := make([]error, len(comms))
	var wg sync.WaitGroup
	for r, c := range comms {
		wg.Add(1)
		go func() {
			defer wg.Done()
			ctx := context.Background()
			for i := 1; i <= shapes && errs[r] == nil; i++ {
				b := bufs[r].Slice(0, i)
				errs[r] = ringo.AllReduceDevice(ctx, c, b, b, ringo.OpMax, streams[r])
				if errs[r] == nil && (i%16 == 0 || i == shapes) {
					errs[r] = c.Wait(ctx, streams[r])
				}
			}
		}()
	}
	wg.Wait()
	return errors.Join(errs...)
}

// TestGPUPlanCacheBounded: collectives of ever new shapes (three times
// device.PlanCache counts) leave each rank holding at most 2×PlanCache
// plans' memory and markers (the cache, and evicted plans' memory kept for
// new ones; by internal/cuda's ledger), and compute right while plans are
// evicted and made again.
// Also with two ranks on each GPU: a rank must not wait for its whole
// device (cuMemFree does), where another rank's kernel waits for it.
func TestGPUPlanCacheBounded(t *testing.T) {
	g := testGPUs(t)
	for _, gs := range [][]int{g, append(slices.Clone(g), g...)} {
		t.Run(fmt.Sprint(gs), func(t *testing.T) { testPlanCacheBounded(t, gs) })
	}
}

func testPlanCacheBounded(t *testing.T, g []int) {
	comms := localGPUs(t, g, nil)
	shapes := 3 * device.PlanCache
	streams, bufs := make([]ringo.Stream, len(g)), make([]ringo.DevPtr[float32], len(g))
	var err error
	for r := range g {
		if streams[r], err = ringo.NewStream(g[r]); err != nil {
			t.Fatal(err)
		}
		defer streams[r].Close()
		if bufs[r], err = ringo.DeviceAlloc[float32](g[r], shapes); err != nil {
			t.Fatal(err)
		}
		defer bufs[r].Free()
		init := make([]float32, shapes)
		for i := range init {
			init[i] = float32(r + 1)
		}
		if err := bufs[r].CopyFrom(init); err != nil {
			t.Fatal(err)
		}
	}
	if err := churnPlans(comms, streams, bufs, 1); err != nil { // the communicators' own allocations, made
		t.Fatal(err)
	}
	before := cuda.Outstanding()
	if err := churnPlans(comms, streams, bufs, shapes); err != nil {
		t.Fatal(err)
	}
	after := cuda.Outstanding()
	limit := int64(len(comms) * 2 * device.PlanCache)
	if after.Allocs-before.Allocs > limit || after.Events-before.Events > limit {
		t.Errorf("after %d shapes: %+v held, %+v before: more than %d plans per rank", shapes, after, before, 2*device.PlanCache)
	}
	t.Logf("after %d shapes on %d ranks: %d more allocations, %d more markers than after the first", shapes, len(comms), after.Allocs-before.Allocs, after.Events-before.Events)
	for r := range comms {
		got := make([]float32, shapes)
		if err := bufs[r].CopyTo(got); err != nil {
			t.Fatal(err)
		}
		for i, v := range got {
			if v != float32(len(comms)) {
				t.Fatalf("rank %d element %d = %v, want %d (the max over ranks)", r, i, v, len(comms))
			}
		}
	}
}

// TestGPUWindows: windows on 4 ranks of one process (runWindows), of
// cuMemAlloc's memory and of shareable memory (ncclMemAlloc's), where
// every all-reduce up to RINGO_DIRECT_MAX reads the inputs in place.
func TestGPUWindows(t *testing.T) {
	for name, alloc := range map[string]func(dev, n int) (ringo.DevPtr[float32], error){
		"cuMemAlloc": ringo.DeviceAlloc[float32], "shareable": ringo.DeviceAllocShared[float32],
	} {
		t.Run(name, func(t *testing.T) {
			fourLocalRanks(t, func(ctx context.Context, c *ringo.Comm, s ringo.Stream) error {
				if ringo.ReadsPeers(c, 8) == 0 || ringo.ReadFrom(c, 0, 8) != kernels.DirectRaw {
					return fmt.Errorf("rank %d: all-reduces of ranks of one process do not read the inputs in place", c.Rank())
				}
				return runWindows(ctx, c, s, false, alloc)
			})
		})
	}
}

// TestGPUSharedWithoutContext: shareable memory is queried (its mapping,
// its buffer ID), exported and freed from an OS thread with no CUDA
// context current, as a goroutine may find itself on (the services that
// map peers' windows run so): call m2 of the thirteenth session failed
// "query the mapping holding …: invalid device context" there.
func TestGPUSharedWithoutContext(t *testing.T) {
	g := testGPUs(t)
	d, err := cuda.Open(g[0])
	require.NoError(t, err)
	p, err := d.AllocShared(1 << 20)
	require.NoError(t, err)
	steps := []func() error{
		func() error {
			ok, base, size, ord, err := cuda.SharedBounds(p)
			if err == nil && (!ok || base != p || size < 1<<20 || ord != g[0]) {
				err = fmt.Errorf("SharedBounds(%#x) = %v, %#x, %d, GPU %d", uintptr(p), ok, uintptr(base), size, ord)
			}
			return err
		},
		func() error { _, err := d.BufferID(p); return err },
		func() error {
			fd, _, err := cuda.ExportShared(p)
			if err == nil {
				syscall.Close(fd)
			}
			return err
		},
		func() error { return d.FreeShared(p) },
	}
	errc := make(chan error, 1)
	go func() {
		runtime.LockOSThread() // not unlocked: the thread ends with the goroutine
		errc <- func() error {
			for _, step := range steps {
				if err := cu.SetCurrentContext(cu.CUContext{}); err != nil { // no context current
					return err
				}
				if err := step(); err != nil {
					return err
				}
			}
			return nil
		}()
	}()
	require.NoError(t, <-errc)
}

// TestGPUAllocShared: memory of CUDA's virtual memory API (ncclMemAlloc's,
// DeviceAllocShared) is the GPU's memory to every argument check; an
// all-reduce of ranks sharing its GPU reads and writes it in place and out
// of place; Free gives back all of it; freeing it from its middle, or
// twice, is an error.
func TestGPUAllocShared(t *testing.T) {
	g := testGPUs(t)
	before := cuda.Outstanding()
	comms := localGPUs(t, g, nil)
	const count = 300000 // floats: 1.2 MB, a two-shot all-reduce's size
	bufs := make([]ringo.DevPtr[float32], len(comms))
	for r, c := range comms {
		p, err := ringo.DeviceAllocShared[float32](c.GPU(), 2*count)
		require.NoError(t, err)
		bufs[r] = p
		host := make([]float32, 2*count)
		for i := range host {
			host[i] = float32(r + i%17)
		}
		require.NoError(t, p.CopyFrom(host))
	}
	assert.Equal(t, int64(len(comms)), cuda.Outstanding().Shared-before.Shared)
	ctx, cancel := context.WithTimeout(context.Background(), time.Minute)
	defer cancel()
	n := float32(len(comms))
	sum := func(i int) float32 { return n*float32(i%17) + n*(n-1)/2 } // over ranks r of r + i%17
	// check waits for c's calls and checks p's first m elements.
	check := func(ctx context.Context, c *ringo.Comm, s ringo.Stream, p ringo.DevPtr[float32], m int, what string) error {
		if err := c.Wait(ctx, s); err != nil {
			return err
		}
		host := make([]float32, m)
		if err := p.Slice(0, m).CopyTo(host); err != nil {
			return err
		}
		for i, v := range host {
			if v != sum(i) {
				return fmt.Errorf("rank %d, %d floats %s: element %d = %v, want %v", c.Rank(), m, what, i, v, sum(i))
			}
		}
		return nil
	}
	errc := make(chan error, len(comms))
	for r, c := range comms {
		go func() {
			errc <- func() error {
				s, err := ringo.NewStream(c.GPU())
				if err != nil {
					return err
				}
				defer s.Close()
				in, out := bufs[r].Slice(0, count), bufs[r].Slice(count, 2*count)
				for _, m := range []int{7, 4099, count} {
					if err := ringo.AllReduceDevice(ctx, c, in.Slice(0, m), out.Slice(0, m), ringo.OpSum, s); err != nil {
						return err
					}
					if err := check(ctx, c, s, out, m, "out of place"); err != nil {
						return err
					}
				}
				if err := ringo.AllReduceDevice(ctx, c, in, in, ringo.OpSum, s); err != nil {
					return err
				}
				return check(ctx, c, s, in, count, "in place")
			}()
		}()
	}
	for range comms {
		require.NoError(t, <-errc)
	}
	err := bufs[0].Slice(1, 2).Free()
	require.Error(t, err)
	assert.Contains(t, err.Error(), "not the start of shareable memory")
	for _, p := range bufs {
		require.NoError(t, p.Free())
	}
	require.Error(t, bufs[0].Free(), "a second Free")
	for _, c := range comms {
		require.NoError(t, c.Close())
	}
	assert.Equal(t, before, cuda.Outstanding(), "what the process holds after the communicator and the memory are gone")
}

// TestGPUProcessesWindows: windows on 4 GPU ranks, each its own process,
// over CUDA IPC (direct all-reduces: inputs in a window read there, others
// staged; in one shot, and again in two; windows of shareable memory,
// whose file descriptors the ranks lend each other) and over shared memory
// and sockets (the ring: windows checked and kept).
func TestGPUProcessesWindows(t *testing.T) {
	t.Setenv("RINGO_GATHER_DIRECT_MIN", "0") // the ranks' small reduce-scatters and all-gathers read directly too
	gpuProcesses(t, "gpu-window", nil, allTransports, nil)
	t.Run("two shots", func(t *testing.T) {
		gpuProcesses(t, "gpu-window", []string{"RINGO_DIRECT_MAX=0"}, map[string][]string{"P2P": nil}, nil)
	})
	t.Run("shareable", func(t *testing.T) { // windows of ncclMemAlloc's memory: file descriptors lent, not CUDA IPC
		gpuProcesses(t, "gpu-window", []string{"RINGO_TEST_SHARED_WINDOWS=1"}, map[string][]string{"P2P": nil}, nil)
	})
}

// TestGPURegisterWhilePeerWaits: 2 GPU ranks, each its own process (on
// one GPU, ranks share it). Rank 0 registers a buffer (ncclCommRegister:
// its call alone; rank 1's process maps it) while rank 1's all-reduce
// waits on the GPU for rank 0's, and deregisters it while rank 1's next
// one waits the same way. Neither may wait for rank 1's kernel (it waits
// for rank 0: a deadlock until the service's 10-s timeout), and both
// all-reduces must be right. The buffer is cuMemAlloc's (CUDA IPC), then
// ncclMemAlloc's (its file descriptor lent).
func TestGPURegisterWhilePeerWaits(t *testing.T) {
	for name, env := range map[string][]string{"ipc": nil, "shareable": {"RINGO_TEST_SHARED_WINDOWS=1"}} {
		t.Run(name, func(t *testing.T) {
			id, kids := startRanksEnv(t, 2, func(int) string { return "gpu-register-waiting" }, func(int) []string { return env })
			for r, k := range kids {
				require.NoError(t, waitExit(t, k, 120*time.Second), "rank %d; stderr: %s", r, k.stderr.String())
				t.Logf("rank %d: %s", r, strings.TrimSpace(k.stderr.String()))
			}
			noLeftovers(t, id)
		})
	}
}

// registerWhilePeerWaits is TestGPURegisterWhilePeerWaits's rank c (of
// 2), all-reducing in (which holds rank×3 + i%1000 at i) twice in place.
func registerWhilePeerWaits(ctx context.Context, c *ringo.Comm, s ringo.Stream, in ringo.DevPtr[float32]) error {
	r, n := c.Rank(), c.Size()
	alloc := ringo.DeviceAlloc[float32]
	if os.Getenv("RINGO_TEST_SHARED_WINDOWS") == "1" {
		alloc = ringo.DeviceAllocShared[float32]
	}
	other, err := alloc(c.GPU(), in.Len())
	if err != nil {
		return err
	}
	defer other.Free()
	var reg *ringo.Registration
	for round, what := range []string{"register", "deregister"} {
		if r == 0 {
			time.Sleep(time.Second) // rank 1's kernel waits for this rank's by now (if not, the test proves less, and passes)
			start := time.Now()
			if round == 0 {
				reg, err = c.Register(ctx, other.Addr(), int64(other.Len())*4)
			} else {
				err = reg.Deregister()
			}
			took := time.Since(start)
			fmt.Fprintf(os.Stderr, "%s while rank 1 waited: %v\n", what, took)
			if err != nil {
				return fmt.Errorf("%s while rank 1 waited: %w", what, err)
			}
			if took > 5*time.Second {
				return fmt.Errorf("%s took %v while rank 1 waited: it waited for rank 1's kernel", what, took)
			}
		}
		if err := ringo.AllReduceDevice(ctx, c, in, in, ringo.OpSum, s); err != nil {
			return err
		}
		if err := c.Wait(ctx, s); err != nil {
			return fmt.Errorf("the all-reduce after the %s: %w", what, err)
		}
	}
	host := make([]float32, in.Len())
	if err := in.CopyTo(host); err != nil {
		return err
	}
	for i, v := range host {
		want := float32(0)
		for q := range n {
			want += float32(q*3 + i%1000)
		}
		if want *= float32(n); v != want {
			return fmt.Errorf("rank %d: element %d = %v, want %v", r, i, v, want)
		}
	}
	return nil
}

// runWindows, on rank c of a GPU communicator: a window over a buffer
// (RegisterWindow), all-reduces in place inside it, out of place from it
// into memory outside and back, reduce-scatters and all-gathers from it and
// from outside, each element checked; where all-reduces
// read peers' memory across processes, that the inputs inside the window
// are read there and the others staged. Then what is refused, on every
// rank alike in processes (every rank checks every window there; ranks of
// one process only their own buffer): a size that differs by rank, host
// memory, a second Deregister. Across processes, a window whose buffer is
// freed and made again is staged, not read. A registration (Register:
// this rank's alone, its size its own) is read in place across processes,
// staged once deregistered. All-reduces run again after the window is
// gone.
func runWindows(ctx context.Context, c *ringo.Comm, s ringo.Stream, processes bool, alloc func(dev, n int) (ringo.DevPtr[float32], error)) error {
	n, r, gpu := c.Size(), c.Rank(), c.GPU()
	const count = 60000 // floats: 240 KiB, under RINGO_DIRECT_MAX
	win, err := alloc(gpu, 2*count)
	if err != nil {
		return err
	}
	defer win.Free()
	other, err := alloc(gpu, count)
	if err != nil {
		return err
	}
	defer other.Free()
	val := func(rank, i, k int) float32 { return float32(rank*7 + (i+k)%100) }
	host := make([]float32, count)
	fill := func(p ringo.DevPtr[float32], k int) error {
		for i := range host[:p.Len()] {
			host[i] = val(r, i, k)
		}
		return p.CopyFrom(host[:p.Len()])
	}
	// expect waits for the calls and checks p's element i against want(i).
	expect := func(p ringo.DevPtr[float32], what string, want func(i int) float32) error {
		if err := c.Wait(ctx, s); err != nil {
			return err
		}
		if err := p.CopyTo(host[:p.Len()]); err != nil {
			return err
		}
		for i, v := range host[:p.Len()] {
			if w := want(i); v != w {
				return fmt.Errorf("rank %d, %s: element %d of %d = %v, want %v", r, what, i, p.Len(), v, w)
			}
		}
		return nil
	}
	// sum is element i of the ranks' inputs of fill(…, k), summed.
	sum := func(i, k int) float32 {
		total := float32(0)
		for q := range n {
			total += val(q, i, k)
		}
		return total
	}
	check := func(p ringo.DevPtr[float32], k int, what string) error {
		return expect(p, what, func(i int) float32 { return sum(i, k) })
	}
	w, err := c.RegisterWindow(ctx, win.Addr(), int64(2*count*4))
	if err != nil {
		return err
	}
	if processes && ringo.ReadsPeers(c, 8) > 0 {
		if got := ringo.ReadFrom(c, win.Slice(count, 2*count).Addr(), count*4); got != kernels.DirectWindow {
			return fmt.Errorf("rank %d: an input inside the window is read from %d, not the window", r, got)
		}
		if got := ringo.ReadFrom(c, other.Addr(), count*4); got != kernels.DirectStaged {
			return fmt.Errorf("rank %d: an input outside the window is read from %d, not staged", r, got)
		}
	}
	for k, m := range []int{1, 1021, count} {
		for j, call := range []struct {
			in, out ringo.DevPtr[float32]
			what    string
		}{
			{win.Slice(count, count+m), win.Slice(count, count+m), "in place in the window"},
			{win.Slice(0, m), other.Slice(0, m), "from the window"},
			{other.Slice(0, m), win.Slice(0, m), "into the window"},
		} {
			if err := fill(call.in, k+j); err != nil {
				return err
			}
			if err := ringo.AllReduceDevice(ctx, c, call.in, call.out, ringo.OpSum, s); err != nil {
				return err
			}
			if err := check(call.out, k+j, fmt.Sprintf("%s, %d floats", call.what, m)); err != nil {
				return err
			}
		}
	}

	// Reduce-scatters and all-gathers: read in the window, and staged.
	const m = 1021
	if processes && ringo.ReadsPeers(c, 8) > 0 && ringo.DirectKindOf(c, ringo.CollReduceScatter, m*4) != kernels.DirectReduceScatter {
		return fmt.Errorf("rank %d: a reduce-scatter of %d floats a rank runs the ring", r, m)
	}
	for k, call := range []struct {
		in, out ringo.DevPtr[float32]
		what    string
	}{
		{win.Slice(0, n*m), other.Slice(0, m), "a reduce-scatter from the window"},
		{other.Slice(0, n*m), win.Slice(count, count+m), "a staged reduce-scatter"},
	} {
		if err := fill(call.in, 20+k); err != nil {
			return err
		}
		if err := ringo.ReduceScatterDevice(ctx, c, call.in, call.out, ringo.OpSum, s); err != nil {
			return err
		}
		if err := expect(call.out, call.what, func(i int) float32 { return sum(r*m+i, 20+k) }); err != nil {
			return err
		}
	}
	for k, call := range []struct {
		in, out ringo.DevPtr[float32]
		what    string
	}{
		{win.Slice(count, count+m), other.Slice(0, n*m), "an all-gather from the window"},
		{other.Slice(0, m), win.Slice(0, n*m), "a staged all-gather"},
	} {
		if err := fill(call.in, 30+k); err != nil {
			return err
		}
		if err := ringo.AllGatherDevice(ctx, c, call.in, call.out, s); err != nil {
			return err
		}
		if err := expect(call.out, call.what, func(i int) float32 { return val(i/m, i%m, 30+k) }); err != nil {
			return err
		}
	}

	// A window's buffer freed and another allocated (at its address, as
	// cuMemAlloc tends to): the others' mappings show the freed memory, so
	// the new buffer's calls must be staged, and right.
	if processes && ringo.ReadsPeers(c, 8) > 0 {
		tmp, err := alloc(gpu, count)
		if err != nil {
			return err
		}
		w2, err := c.RegisterWindow(ctx, tmp.Addr(), count*4)
		if err != nil {
			return err
		}
		old := tmp.Addr()
		if err := tmp.Free(); err != nil {
			return err
		}
		again, err := alloc(gpu, count)
		if err != nil {
			return err
		}
		defer again.Free()
		if got := ringo.ReadFrom(c, again.Addr(), count*4); got != kernels.DirectStaged {
			return fmt.Errorf("rank %d: a buffer made after its window's was freed (same address: %v) is read from %d, not staged", r, again.Addr() == old, got)
		}
		if err := fill(again, 5); err != nil {
			return err
		}
		if err := ringo.AllReduceDevice(ctx, c, again, again, ringo.OpSum, s); err != nil {
			return err
		}
		if err := check(again, 5, fmt.Sprintf("in a buffer made where a window's was freed (same address: %v)", again.Addr() == old)); err != nil {
			return err
		}
		if err := w2.Deregister(); err != nil {
			return err
		}
	}

	// A registration (ncclCommRegister's): this rank's alone, of a size of
	// its own; across processes its inputs inside are then read there, and
	// after Deregister staged again.
	reg, err := c.Register(ctx, other.Addr(), int64(count-100*r)*4)
	if err != nil {
		return err
	}
	if err := reg.Unshared(); err != nil {
		return fmt.Errorf("rank %d: a registration the others do not read: %w", r, err)
	}
	inReg := func() uint64 { return ringo.ReadFrom(c, other.Slice(100, 1200).Addr(), 1100*4) }
	if processes && ringo.ReadsPeers(c, 8) > 0 && inReg() < kernels.DirectWindow+uint64(direct.MaxWindows) {
		return fmt.Errorf("rank %d: an input inside a registered buffer is read from %d, not the registration", r, inReg())
	}
	for k, deregistered := range []bool{false, true} {
		if err := fill(other.Slice(100, 1200), 40+k); err != nil {
			return err
		}
		if err := ringo.AllReduceDevice(ctx, c, other.Slice(100, 1200), win.Slice(0, 1100), ringo.OpSum, s); err != nil {
			return err
		}
		if err := check(win.Slice(0, 1100), 40+k, fmt.Sprintf("from a registered buffer (deregistered: %v)", deregistered)); err != nil {
			return err
		}
		if !deregistered {
			if err := reg.Deregister(); err != nil {
				return err
			}
			if processes && ringo.ReadsPeers(c, 8) > 0 && inReg() != kernels.DirectStaged {
				return fmt.Errorf("rank %d: a deregistered buffer is read from %d, not staged", r, inReg())
			}
		}
	}
	if err := reg.Deregister(); err == nil || !strings.Contains(err.Error(), "deregistered already") {
		return fmt.Errorf("rank %d: a second Deregister of a registration: %v", r, err)
	}

	// Refused: sizes that differ by rank (checked where ranks are
	// processes), host memory.
	if processes {
		_, err := c.RegisterWindow(ctx, win.Addr(), 4096+16*int64(r))
		if err == nil || !errors.Is(err, ringo.ErrInvalidArgument) || !strings.Contains(err.Error(), "every rank's must be the same size") {
			return fmt.Errorf("rank %d: windows of different sizes: %v", r, err)
		}
	}
	addr := win.Addr()
	if r == 1 {
		addr = uintptr(unsafe.Pointer(&host[0]))
	}
	bad, err := c.RegisterWindow(ctx, addr, 4096)
	switch {
	case r == 1 && (err == nil || !strings.Contains(err.Error(), "not GPU memory")):
		return fmt.Errorf("rank 1: a window of host memory: %v", err)
	case r != 1 && processes && (err == nil || !strings.Contains(err.Error(), "rank 1 could not register its window")):
		return fmt.Errorf("rank %d: rank 1's window of host memory: %v", r, err)
	case r != 1 && !processes:
		if err != nil {
			return err
		}
		if err := bad.Deregister(); err != nil {
			return err
		}
	}
	if err := w.Deregister(); err != nil {
		return err
	}
	if err := w.Deregister(); err == nil || !strings.Contains(err.Error(), "deregistered already") {
		return fmt.Errorf("rank %d: a second Deregister: %v", r, err)
	}
	if processes && ringo.ReadsPeers(c, 8) > 0 && ringo.ReadFrom(c, win.Addr(), 64) != kernels.DirectStaged {
		return fmt.Errorf("rank %d: a deregistered window is still read", r)
	}
	if err := fill(win.Slice(0, count), 9); err != nil {
		return err
	}
	if err := ringo.AllReduceDevice(ctx, c, win.Slice(0, count), win.Slice(0, count), ringo.OpSum, s); err != nil {
		return err
	}
	return check(win.Slice(0, count), 9, "after the window")
}
