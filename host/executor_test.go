package host

import (
	"context"
	"errors"
	"fmt"
	"math/bits"
	"math/rand/v2"
	"sync"
	"testing"
	"time"

	"github.com/ringo-ccl/ringo/internal/errs"
	"github.com/ringo-ccl/ringo/internal/mem"
	"github.com/ringo-ccl/ringo/reduce"
	"github.com/ringo-ccl/ringo/ring"
	"github.com/ringo-ccl/ringo/ring/ringtest"
	"github.com/ringo-ccl/ringo/transport"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// world is n executors joined by a loopback transport.
type world struct {
	n, nch int
	sizes  transport.Sizes
	execs  []*Executor
	tr     *transport.Loopback
	abort  transport.Abort
}

func newWorld(t testing.TB, n, nch int, sizes transport.Sizes) *world {
	t.Helper()
	tr, err := transport.NewLoopback(n, nch, sizes)
	if err != nil {
		t.Fatal(err)
	}
	w := &world{n: n, nch: nch, sizes: sizes, tr: tr}
	for r := range n {
		w.execs = append(w.execs, New(r, tr, nch, ring.SlotPayload(ring.LL, sizes.LL)))
	}
	t.Cleanup(func() {
		for _, e := range w.execs {
			e.Close()
		}
		tr.Close()
	})
	return w
}

func (w *world) spec(coll ring.Collective, proto ring.Protocol, count int64, elt int) ring.Spec {
	buff := w.sizes.Simple
	if proto == ring.LL {
		buff = w.sizes.LL
	}
	return ring.Spec{Coll: coll, Ring: ring.Identity(w.n), Count: count, EltSize: elt, Channels: w.nch, Proto: proto, BuffSize: buff}
}

// run executes one collective on every rank (skipping ranks in absent) and
// returns each rank's error.
func (w *world) run(t testing.TB, s ring.Spec, dt reduce.DataType, op reduce.Op, ins, outs [][]byte, timeout time.Duration, absent ...int) []error {
	t.Helper()
	errsOut := make([]error, w.n)
	var wg sync.WaitGroup
	for r := range w.n {
		if contains(absent, r) {
			continue
		}
		s := s
		s.Rank = r
		p, err := ring.New(s)
		if err != nil {
			t.Fatal(err)
		}
		var f *reduce.Func
		if s.Coll.Reduces() {
			if f, err = reduce.New(dt, op, w.n); err != nil {
				t.Fatal(err)
			}
		}
		wg.Add(1)
		go func() {
			defer wg.Done()
			var wt transport.Waiter
			wt.Reset(context.Background(), timeout, &w.abort)
			errsOut[r] = w.execs[r].Run(Job{Plan: p, In: ins[r], Out: outs[r], Func: f, Wait: &wt})
		}()
	}
	wg.Wait()
	return errsOut
}

func contains(s []int, v int) bool {
	for _, x := range s {
		if x == v {
			return true
		}
	}
	return false
}

// expected computes every rank's output for int32 sum from the inputs.
func expected(coll ring.Collective, n int, count int64, root int, ins [][]int32) [][]int32 {
	outLen := count
	if coll == ring.AllGather {
		outLen *= int64(n)
	}
	outs := make([][]int32, n)
	for r := range n {
		o := make([]int32, outLen)
		for i := range o {
			switch coll {
			case ring.AllReduce, ring.Reduce:
				for q := range n {
					o[i] += ins[q][i]
				}
			case ring.ReduceScatter:
				for q := range n {
					o[i] += ins[q][int64(r)*count+int64(i)]
				}
			case ring.AllGather:
				o[i] = ins[int64(i)/count][int64(i)%count]
			case ring.Broadcast:
				o[i] = ins[root][i]
			}
		}
		if coll == ring.Reduce && r != root {
			o = nil
		}
		outs[r] = o
	}
	return outs
}

var smallSizes = transport.Sizes{Simple: ring.NSteps * 256, LL: ring.NSteps * 128}

func TestCollectives(t *testing.T) {
	rng := rand.New(rand.NewPCG(3, 4))
	ns := []int{1, 2, 3, 5}
	counts := []int64{0, 1, 7, 100, 1000, 4099}
	for _, n := range ns {
		for _, nch := range []int{1, 3} {
			w := newWorld(t, n, nch, smallSizes)
			for coll := range ring.Collective(5) {
				for _, proto := range []ring.Protocol{ring.Simple, ring.LL} {
					for _, count := range counts {
						for _, inPlace := range []bool{false, true} {
							name := fmt.Sprintf("n%d/ch%d/%v/%v/%d/inplace=%v", n, nch, coll, proto, count, inPlace)
							s := w.spec(coll, proto, count, 4)
							s.Root = rng.IntN(n)
							checkRun(t, name, w, s, rng, inPlace)
						}
					}
				}
			}
		}
	}
}

// TestCollectivesStreamed: every collective large enough for the executor
// to choose its FIFO stores (stores) is right with each kind, each call
// checked, in and out of place; every rank times its calls of each kind.
func TestCollectivesStreamed(t *testing.T) {
	rng := rand.New(rand.NewPCG(5, 6))
	const count = streamMinBytes/4 + 1001
	class := bits.Len64(count * 4)
	for _, n := range []int{2, 3} {
		w := newWorld(t, n, 2, smallSizes)
		for coll := range ring.Collective(5) {
			for _, inPlace := range []bool{false, true} {
				for _, stream := range []bool{false, true} {
					if mem.HasStream {
						for _, x := range w.execs {
							// A class that has timed only its cached calls streams next.
							x.stores.classes[class] = storeClass{}
							if stream {
								x.stores.classes[class].timed[0] = warmTimes
							}
						}
					}
					s := w.spec(coll, ring.Simple, count, 4)
					s.Root = rng.IntN(n)
					checkRun(t, fmt.Sprintf("n%d/%v/inplace=%v/stream=%v", n, coll, inPlace, stream), w, s, rng, inPlace)
					for r, x := range w.execs {
						assert.Equal(t, stream && mem.HasStream, x.stores.classes[class].last == 2, "n%d rank %d: the call's kind", n, r)
					}
				}
			}
		}
		if mem.HasStream {
			for _, x := range w.execs {
				x.stores.classes[class] = storeClass{}
			}
			for range coldCalls + 2*warmTimes + 1 { // a class's first calls and the first after a change of kind are not timed
				s := w.spec(ring.AllReduce, ring.Simple, count, 4)
				checkRun(t, fmt.Sprintf("n%d/warm", n), w, s, rng, false)
			}
			for r, x := range w.execs {
				assert.Equal(t, [2]uint64{warmTimes, warmTimes}, x.stores.classes[class].timed, "n%d rank %d: calls timed by kind", n, r)
			}
		}
	}
}

func checkRun(t *testing.T, name string, w *world, s ring.Spec, rng *rand.Rand, inPlace bool) {
	t.Helper()
	n := w.n
	ins32 := make([][]int32, n)
	ins, outs := make([][]byte, n), make([][]byte, n)
	inLen, outLen := s.InputLen(), s.OutputLen()
	for r := range n {
		// In-place layouts as NCCL defines them: the same buffer, or the
		// input inside the output (all-gather) / the output inside the
		// input (reduce-scatter) at the rank's segment.
		buf := make([]int32, max(inLen, outLen))
		for i := range buf {
			buf[i] = int32(rng.IntN(2001) - 1000)
		}
		var in, out []int32
		switch {
		case !inPlace:
			in, out = buf[:inLen], make([]int32, outLen)
			for i := range out {
				out[i] = -7
			}
		case s.Coll == ring.AllGather:
			out, in = buf, buf[int64(r)*s.Count:int64(r+1)*s.Count]
		case s.Coll == ring.ReduceScatter:
			in, out = buf, buf[int64(r)*s.Count:int64(r+1)*s.Count]
		default:
			in, out = buf, buf
		}
		ins32[r] = append([]int32(nil), in...)
		ins[r], outs[r] = mem.Bytes(in), mem.Bytes(out)
	}
	want := expected(s.Coll, n, s.Count, s.Root, ins32)
	for r, err := range w.run(t, s, reduce.Int32, reduce.OpSum, ins, outs, 10*time.Second) {
		if err != nil {
			t.Fatalf("%s: rank %d: %v", name, r, err)
		}
	}
	for r := range n {
		if want[r] == nil {
			continue
		}
		got := mem.Slice[int32](outs[r])
		for i := range want[r] {
			if got[i] != want[r][i] {
				t.Fatalf("%s: rank %d element %d = %d, want %d", name, r, i, got[i], want[r][i])
			}
		}
	}
}

// TestStepWrap runs both protocols across the 32-bit LL flag wrap and
// through the LL slot-cleaning window.
func TestStepWrap(t *testing.T) {
	rng := rand.New(rand.NewPCG(5, 6))
	for _, start := range []uint64{1<<32 - 20, 0x7ffffff8 - 12, 0xfffffff8 - 5} {
		w := newWorld(t, 3, 2, smallSizes)
		for _, e := range w.execs {
			e.setSteps(start)
		}
		for i := range 40 {
			proto := ring.LL
			if i%5 == 4 {
				proto = ring.Simple
			}
			s := w.spec(ring.AllReduce, proto, int64(1+rng.IntN(200)), 4)
			checkRun(t, fmt.Sprintf("start %#x call %d %v", start, i, proto), w, s, rng, i%2 == 0)
		}
	}
}

func TestRunDoesNotAllocate(t *testing.T) {
	for _, proto := range []ring.Protocol{ring.Simple, ring.LL} {
		w := newWorld(t, 4, 2, transport.Sizes{Simple: 1 << 16, LL: 1 << 14})
		s := w.spec(ring.AllReduce, proto, streamMinBytes/4, 4) // large enough to choose its stores (stores)
		f, _ := reduce.New(reduce.Float32, reduce.OpSum, 4)
		jobs := make([]Job, 4)
		waiters := make([]transport.Waiter, 4)
		for r := range 4 {
			s.Rank = r
			p, err := ring.New(s)
			if err != nil {
				t.Fatal(err)
			}
			buf := make([]byte, streamMinBytes)
			waiters[r].Reset(context.Background(), 10*time.Second)
			jobs[r] = Job{Plan: p, In: buf, Out: buf, Func: f, Wait: &waiters[r]}
		}
		const runs = 50
		var wg sync.WaitGroup
		for r := 1; r < 4; r++ {
			wg.Add(1)
			go func() {
				defer wg.Done()
				for range runs + 1 { // AllocsPerRun adds one warm-up call
					if err := w.execs[r].Run(jobs[r]); err != nil {
						t.Error(err)
						return
					}
				}
			}()
		}
		allocs := testing.AllocsPerRun(runs, func() {
			if err := w.execs[0].Run(jobs[0]); err != nil {
				t.Fatal(err)
			}
		})
		wg.Wait()
		if allocs != 0 {
			t.Errorf("%v: %v allocations per allreduce", proto, allocs)
		}
	}
}

func TestAbsentRankTimesOut(t *testing.T) {
	for _, proto := range []ring.Protocol{ring.Simple, ring.LL} {
		w := newWorld(t, 3, 1, smallSizes)
		s := w.spec(ring.AllReduce, proto, 1000, 4)
		bufs := [][]byte{make([]byte, 4000), make([]byte, 4000), make([]byte, 4000)}
		start := time.Now()
		errsOut := w.run(t, s, reduce.Float32, reduce.OpSum, bufs, bufs, 200*time.Millisecond, 2)
		if el := time.Since(start); el > 2*time.Second {
			t.Errorf("%v: took %v to time out", proto, el)
		}
		for r := range 2 {
			var e *errs.Error
			if !errors.Is(errsOut[r], errs.ErrTimeout) || !errors.As(errsOut[r], &e) {
				t.Fatalf("%v rank %d: %v, want a timeout *errs.Error", proto, r, errsOut[r])
			}
			if e.Rank != r || e.Channel != 0 || e.Peer < 0 {
				t.Errorf("%v rank %d: error locates rank %d ch %d peer %d", proto, r, e.Rank, e.Channel, e.Peer)
			}
		}
	}
}

func TestAbortStopsWaits(t *testing.T) {
	w := newWorld(t, 2, 1, smallSizes)
	s := w.spec(ring.AllReduce, ring.Simple, 1000, 4)
	bufs := [][]byte{make([]byte, 4000), make([]byte, 4000)}
	cause := errors.New("test abort")
	go func() {
		time.Sleep(50 * time.Millisecond)
		w.abort.Set(cause)
	}()
	errsOut := w.run(t, s, reduce.Float32, reduce.OpSum, bufs, bufs, time.Minute, 1)
	if !errors.Is(errsOut[0], errs.ErrAborted) || !errors.Is(errsOut[0], cause) {
		t.Fatalf("got %v, want ErrAborted wrapping the cause", errsOut[0])
	}
}

// TestAnyPeer: the executor runs plans whose steps name any rank, not only
// ring neighbours — a direct all-gather, every pair connected both ways —
// with both protocols, and ring plans after it on the same connections.
func TestAnyPeer(t *testing.T) {
	rng := rand.New(rand.NewPCG(7, 8))
	for _, proto := range []ring.Protocol{ring.Simple, ring.LL} {
		const n, count = 4, 60
		w := newWorld(t, n, 2, transport.Sizes{Simple: 1 << 16, LL: 1 << 14})
		s := w.spec(ring.AllGather, proto, count, 4)
		plans, err := ringtest.DirectAllGather(s)
		require.NoError(t, err)
		for round := range 3 {
			checkAllGather(t, fmt.Sprintf("%v round %d", proto, round), w, plans, count, rng)
			checkRun(t, fmt.Sprintf("%v ring after direct, round %d", proto, round), w, w.spec(ring.AllReduce, proto, 333, 4), rng, true)
		}
	}
}

// checkAllGather runs every rank's plan of an all-gather of count int32
// elements on random data and checks every output.
func checkAllGather(t *testing.T, name string, w *world, plans []*ring.Plan, count int64, rng *rand.Rand) {
	t.Helper()
	n := w.n
	ins := make([][]int32, n)
	jobs := make([]Job, n)
	for r := range n {
		ins[r] = make([]int32, count)
		for i := range ins[r] {
			ins[r][i] = rng.Int32N(1000)
		}
		jobs[r] = Job{Plan: plans[r], In: mem.Bytes(ins[r]), Out: make([]byte, 4*count*int64(n))}
	}
	errsOut := w.runJobs(jobs, 10*time.Second)
	want := expected(ring.AllGather, n, count, 0, ins)
	for r := range n {
		require.NoError(t, errsOut[r], "%s rank %d", name, r)
		assert.Equal(t, want[r], mem.Slice[int32](jobs[r].Out), "%s rank %d", name, r)
	}
}

// runJobs runs jobs[r] on rank r, every rank on its own goroutine, each
// bounded by timeout, and returns each rank's error.
func (w *world) runJobs(jobs []Job, timeout time.Duration) []error {
	errsOut := make([]error, len(jobs))
	var wg sync.WaitGroup
	for r := range jobs {
		wg.Add(1)
		go func() {
			defer wg.Done()
			var wt transport.Waiter
			wt.Reset(context.Background(), timeout)
			jobs[r].Wait = &wt
			errsOut[r] = w.execs[r].Run(jobs[r])
		}()
	}
	wg.Wait()
	return errsOut
}
