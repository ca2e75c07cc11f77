package ringo_test

import (
	"context"
	"errors"
	"math"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"
	"unsafe"

	"github.com/ringo-ccl/ringo"
	"github.com/ringo-ccl/ringo/bootstrap"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// wantErr checks that err wraps sentinel and mentions every fragment.
func wantErr(t *testing.T, err, sentinel error, fragments ...string) {
	t.Helper()
	if err == nil {
		t.Fatalf("got no error, want %v", sentinel)
	}
	if sentinel != nil && !errors.Is(err, sentinel) {
		t.Fatalf("got %v, want it to wrap %v", err, sentinel)
	}
	for _, f := range fragments {
		if !strings.Contains(err.Error(), f) {
			t.Fatalf("error %q does not mention %q", err, f)
		}
	}
}

// TestBadArguments: every bad argument of a call, collectives' and
// point-to-point's, is refused before anything moves, naming what is
// wrong and the rank.
func TestBadArguments(t *testing.T) {
	comms := newComms(t, 2, nil)
	c := comms[1]
	f32 := make([]float32, 10)
	cases := []struct {
		name string
		call func() error
		want []string
	}{
		{"invalid datatype", func() error {
			return c.Do(bg, ringo.Call{Coll: ringo.CollAllReduce, Send: make([]byte, 8), Recv: make([]byte, 8), Count: 1, Type: 42})
		}, []string{"rank 1", "invalid datatype 42"}},
		{"unknown collective", func() error {
			return c.Do(bg, ringo.Call{Coll: 9, Count: 0, Type: ringo.TypeFloat32})
		}, []string{"unknown collective 9"}},
		{"op of another type", func() error {
			return ringo.AllReduce(bg, c, f32, f32, ringo.PreMul(float64(2)))
		}, []string{"rank 1", "double", "float"}},
		{"a GPU schedule on host ranks", func() error {
			return c.RunScheduleDevice(bg, nil, ringo.DeviceCall{Coll: ringo.CollAllGather, Count: 1, Type: ringo.TypeFloat32}, ringo.Stream{})
		}, []string{"rank 1", "RunScheduleDevice on a host communicator"}},
		{"a schedule of no plans", func() error {
			return c.RunSchedule(bg, nil, ringo.Call{Coll: ringo.CollAllGather, Send: make([]byte, 4), Recv: make([]byte, 8), Count: 1, Type: ringo.TypeFloat32})
		}, []string{"rank 1", "a schedule of 0 plans for a communicator of 2 ranks"}},
		{"nil send", func() error {
			return c.Do(bg, ringo.Call{Coll: ringo.CollAllReduce, Recv: make([]byte, 40), Count: 10, Type: ringo.TypeFloat32})
		}, []string{"send buffer is nil"}},
		{"short recv", func() error {
			return c.Do(bg, ringo.Call{Coll: ringo.CollAllReduce, Send: make([]byte, 40), Recv: make([]byte, 32), Count: 10, Type: ringo.TypeFloat32})
		}, []string{"recv buffer has 32 bytes, need 40"}},
		{"short reduce-scatter input", func() error {
			return ringo.ReduceScatter(bg, c, make([]int32, 10), make([]int32, 10), ringo.OpSum)
		}, []string{"send has 10 elements, need 2 ranks × recv's 10"}},
		{"different lengths", func() error {
			return ringo.AllReduce(bg, c, make([]float32, 10), make([]float32, 12), ringo.OpSum)
		}, []string{"send has 10 elements, recv 12"}},
		{"nil typed buffer", func() error {
			return ringo.AllReduce(bg, c, nil, f32, ringo.OpSum)
		}, []string{"send has 0 elements, recv 10"}},
		{"count overflow", func() error {
			return c.Do(bg, ringo.Call{Coll: ringo.CollAllGather, Send: f32b(), Recv: f32b(), Count: math.MaxInt64 / 2, Type: ringo.TypeFloat32})
		}, []string{"overflows"}},
		{"byte overflow", func() error {
			return c.Do(bg, ringo.Call{Coll: ringo.CollAllReduce, Send: f32b(), Recv: f32b(), Count: math.MaxInt64 / 3, Type: ringo.TypeFloat64})
		}, []string{"overflows"}},
		{"negative count", func() error {
			return c.Do(bg, ringo.Call{Coll: ringo.CollAllReduce, Send: f32b(), Recv: f32b(), Count: -1, Type: ringo.TypeFloat32})
		}, []string{"count -1"}},
		{"root out of range", func() error {
			return ringo.Broadcast(bg, c, f32, f32, 2)
		}, []string{"root 2 outside [0, 2)"}},
		{"negative root", func() error {
			return ringo.Reduce(bg, c, f32, f32, ringo.OpSum, -1)
		}, []string{"root -1 outside"}},
		{"misaligned", func() error {
			b := make([]byte, 44)
			return c.Do(bg, ringo.Call{Coll: ringo.CollAllReduce, Send: b[1:41], Recv: make([]byte, 40), Count: 10, Type: ringo.TypeFloat32})
		}, []string{"not aligned to 4-byte float"}},
		{"partial overlap", func() error {
			b := make([]float32, 20)
			return ringo.AllReduce(bg, c, b[:10], b[5:15], ringo.OpSum)
		}, []string{"overlap without being in place"}},
		// point-to-point (sendrecv.go)
		{"peer out of range", func() error { return ringo.Send(bg, c, f32, 2) }, []string{"send", "rank 1", "peer 2 outside [0, 2)"}},
		{"negative peer", func() error { return ringo.Recv(bg, c, f32, -1) }, []string{"recv", "peer -1 outside"}},
		{"self-send alone", func() error { return ringo.Send(bg, c, f32, 1) }, []string{"send 0 to itself (40 bytes), has no matching receive"}},
		{"self-recv alone", func() error { return ringo.SendRecv(bg, ringo.RecvOp(c, f32, 1)) }, []string{"receive 0 from itself (40 bytes), has no matching send"}},
		{"self sizes differ", func() error {
			return ringo.SendRecv(bg, ringo.SendOp(c, f32, 1), ringo.RecvOp(c, make([]float64, 10), 1))
		}, []string{"send 0 to itself (message 0) has 40 bytes, its receive 0 from itself (message 1) 80"}},
		{"receives overlap", func() error {
			return ringo.SendRecv(bg, ringo.RecvOp(c, f32[:6], 0), ringo.RecvOp(c, f32[4:], 0))
		}, []string{"message 0 (recv from rank 0) and message 1 (recv from rank 0) overlap"}},
		{"receive into a send", func() error {
			return ringo.SendRecv(bg, ringo.SendOp(c, f32[:6], 0), ringo.RecvOp(c, f32[5:], 0))
		}, []string{"message 0 (send to rank 0) and message 1 (recv from rank 0) overlap"}},
		{"alltoall lengths", func() error { return ringo.AllToAll(bg, c, f32, f32[:8]) }, []string{"alltoall", "send has 10 elements, recv 8"}},
		{"alltoall blocks", func() error { return ringo.AllToAll(bg, c, make([]int8, 3), make([]int8, 3)) }, []string{"2 blocks of equal length"}},
		{"alltoall in place", func() error { return ringo.AllToAll(bg, c, f32, f32) }, []string{"overlap", "never in place"}},
		{"alltoallv counts length", func() error {
			return ringo.AllToAllV(bg, c, f32, []int{1}, []int{0, 1}, f32, []int{1, 1}, []int{0, 1})
		}, []string{"alltoallv", "sendCounts has 1 entries, need one per rank (2)"}},
		{"alltoallv displs length", func() error {
			return ringo.AllToAllV(bg, c, f32, []int{1, 1}, []int{0, 1}, f32, []int{1, 1}, []int{0, 1, 2})
		}, []string{"recvDispls has 3 entries"}},
		{"alltoallv negative count", func() error {
			return ringo.AllToAllV(bg, c, f32, []int{1, -1}, []int{0, 1}, make([]float32, 2), []int{1, 1}, []int{0, 1})
		}, []string{"sendCounts[1] = -1 is negative"}},
		{"alltoallv negative displacement", func() error {
			return ringo.AllToAllV(bg, c, f32, []int{1, 1}, []int{0, 1}, make([]float32, 2), []int{1, 1}, []int{-1, 1})
		}, []string{"recvDispls[0] = -1 is negative"}},
		{"alltoallv displacement out of range", func() error {
			return ringo.AllToAllV(bg, c, f32, []int{1, 3}, []int{0, 8}, make([]float32, 2), []int{1, 1}, []int{0, 1})
		}, []string{"sendDispls[1] = 8 + sendCounts[1] = 3 reaches past send's 10 elements"}},
		{"alltoallv nil buffer", func() error {
			return ringo.AllToAllV[float32](bg, c, nil, []int{0, 2}, []int{0, 0}, make([]float32, 2), []int{1, 1}, []int{0, 1})
		}, []string{"send is nil, but sendCounts[1] = 2"}},
		{"gather root", func() error { return ringo.Gather(bg, c, f32, f32, 2) }, []string{"gather", "root 2 outside [0, 2)"}},
		{"gather recv length", func() error { return ringo.Gather(bg, c, f32, make([]float32, 19), 1) }, []string{"root's recv has 19 elements, need 2 ranks × send's 10"}},
		{"scatter root", func() error { return ringo.Scatter(bg, c, f32, f32, -1) }, []string{"scatter", "root -1 outside"}},
		{"scatter send length", func() error { return ringo.Scatter(bg, c, f32, make([]float32, 4), 1) }, []string{"root's send has 10 elements, need 2 ranks × recv's 4"}},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			err := tc.call()
			wantErr(t, err, ringo.ErrInvalidArgument, tc.want...)
			var e *ringo.Error
			if !errors.As(err, &e) || e.Rank != 1 {
				t.Fatalf("error %v does not locate rank 1", err)
			}
		})
	}
	// None of that consumed a collective: the ranks still agree.
	noErrors(t, each(comms, func(r int, c *ringo.Comm) error {
		return ringo.AllReduce(bg, c, []float32{1}, make([]float32, 1), ringo.OpSum)
	}))
}

func f32b() []byte { return make([]byte, 40) }

func TestBadConfig(t *testing.T) {
	cases := []struct {
		n    int
		cfg  *ringo.Config
		want string
	}{
		{0, nil, "communicator of 0 ranks"},
		{-3, nil, "communicator of -3 ranks"},
		{2, &ringo.Config{Channels: 65}, "Channels 65"},
		{2, &ringo.Config{Protocol: "Fast"}, `unknown name "Fast"`},
		{2, &ringo.Config{Protocol: "LL128"}, "leaves no protocol"},
		{2, &ringo.Config{BuffSize: 1000}, "Simple buffer size 1000"},
		{4, &ringo.Config{Ring: []int{0, 1, 2}}, "Ring has 3 ranks"},
		{4, &ringo.Config{Ring: []int{0, 1, 2, 5}}, "rank 5, outside [0, 4)"},
		{3, &ringo.Config{Ring: []int{0, 1, 1}}, "rank 1 twice"},
		{2, &ringo.Config{Variant: "tree"}, `unknown variant "tree"`},
		{3, &ringo.Config{Variant: "oneshot"}, "oneshot needs 2 ranks"},
		{2, &ringo.Config{LL128BuffSize: 8192}, "the host path has no LL128"},
		{2, &ringo.Config{StopGrace: -time.Second}, "StopGrace -1s is negative"},
	}
	for _, c := range cases {
		_, err := ringo.NewLocal(c.n, c.cfg)
		wantErr(t, err, ringo.ErrInvalidArgument, c.want)
	}
}

func TestCancelledContext(t *testing.T) {
	comms := newComms(t, 2, nil)
	ctx, cancel := context.WithCancel(bg)
	cancel()
	err := ringo.AllReduce(ctx, comms[0], []float32{1}, make([]float32, 1), ringo.OpSum)
	wantErr(t, err, context.Canceled, "rank 0", "not started")
	// The rank did not join: the communicator still works.
	noErrors(t, each(comms, func(r int, c *ringo.Comm) error {
		return ringo.AllReduce(bg, c, []float32{1}, make([]float32, 1), ringo.OpSum)
	}))
}

func TestCancelMidCollective(t *testing.T) {
	comms := newComms(t, 3, nil)
	ctx, cancel := context.WithCancel(bg)
	time.AfterFunc(50*time.Millisecond, cancel)
	start := time.Now()
	errs := each(comms, func(r int, c *ringo.Comm) error {
		if r == 0 {
			return ringo.AllReduce(ctx, c, make([]float32, 1000), make([]float32, 1000), ringo.OpSum)
		}
		return ringo.AllReduce(bg, c, make([]float32, 1000), make([]float32, 1000), ringo.OpSum)
	}, 2)
	if el := time.Since(start); el > 2*time.Second {
		t.Fatalf("took %v to cancel", el)
	}
	wantErr(t, errs[0], context.Canceled, "rank 0", "allreduce")
	// Rank 1 was waiting too; the broken ring aborts it.
	wantErr(t, errs[1], ringo.ErrAborted, "rank 1")
	// And the communicator stays failed, without hanging.
	err := ringo.AllReduce(bg, comms[1], []float32{1}, make([]float32, 1), ringo.OpSum)
	wantErr(t, err, ringo.ErrAborted, "not started")
}

// TestAbsentRank: rank 2 never calls in; the others return within their
// deadline with an error that names it.
func TestAbsentRank(t *testing.T) {
	for _, proto := range []string{"Simple", "LL"} {
		t.Run(proto, func(t *testing.T) {
			comms := newComms(t, 3, &ringo.Config{Protocol: proto})
			ctx, cancel := context.WithTimeout(bg, 300*time.Millisecond)
			defer cancel()
			start := time.Now()
			errs := each(comms, func(r int, c *ringo.Comm) error {
				return ringo.AllReduce(ctx, c, make([]float32, 100), make([]float32, 100), ringo.OpSum)
			}, 2)
			if el := time.Since(start); el > 2*time.Second {
				t.Fatalf("took %v, deadline was 300ms", el)
			}
			for r := range 2 {
				wantErr(t, errs[r], ringo.ErrTimeout, "never called it [2]")
			}
		})
	}
}

func TestConfigTimeout(t *testing.T) {
	comms := newComms(t, 2, &ringo.Config{Timeout: 100 * time.Millisecond})
	start := time.Now()
	err := ringo.AllReduce(bg, comms[0], make([]float32, 10), make([]float32, 10), ringo.OpSum)
	if el := time.Since(start); el > 2*time.Second {
		t.Fatalf("took %v, timeout was 100ms", el)
	}
	wantErr(t, err, ringo.ErrTimeout, "after 100ms", "never called it [1]")
}

// TestAbort: Abort from another goroutine ends the other ranks' collective
// (waiting for the aborted rank) promptly: the budget is 100 ms;
// the test allows 500 (a loaded 2-core CI machine under the race detector)
// and logs what it measured.
func TestAbort(t *testing.T) {
	comms := newComms(t, 3, nil)
	var aborted atomic.Int64
	time.AfterFunc(50*time.Millisecond, func() {
		aborted.Store(time.Now().UnixNano())
		comms[2].Abort()
	})
	errs := each(comms, func(r int, c *ringo.Comm) error {
		return ringo.AllReduce(bg, c, make([]float32, 100), make([]float32, 100), ringo.OpSum)
	}, 2)
	el := time.Duration(time.Now().UnixNano() - aborted.Load())
	t.Logf("the other ranks returned %v after Abort", el)
	if el > 500*time.Millisecond {
		t.Fatalf("abort took %v", el)
	}
	for r := range 2 {
		wantErr(t, errs[r], ringo.ErrAborted, "rank 2 called Abort")
	}
}

func TestMismatchedCalls(t *testing.T) {
	comms := newComms(t, 2, nil)
	errs := each(comms, func(r int, c *ringo.Comm) error {
		ctx, cancel := context.WithTimeout(bg, 5*time.Second)
		defer cancel()
		return ringo.AllReduce(ctx, c, make([]float32, 10+r), make([]float32, 10+r), ringo.OpSum)
	})
	for r := range 2 {
		wantErr(t, errs[r], nil, "collective #1 differs between ranks")
	}
}

func TestConcurrentUseOfOneComm(t *testing.T) {
	comms := newComms(t, 2, nil)
	var wg sync.WaitGroup
	results := make(chan error, 2)
	ctx, cancel := context.WithTimeout(bg, 200*time.Millisecond)
	defer cancel()
	for range 2 {
		wg.Add(1)
		go func() {
			defer wg.Done()
			results <- ringo.AllReduce(ctx, comms[0], make([]float32, 10), make([]float32, 10), ringo.OpSum)
		}()
	}
	wg.Wait()
	close(results)
	found := false
	for err := range results {
		found = found || (err != nil && strings.Contains(err.Error(), "another call is running"))
	}
	if !found {
		t.Fatal("a second concurrent call on one Comm was not refused")
	}
}

// TestArgumentsCheckedAgain: a call whose arguments are those of the
// last one that passed the checks skips them (enterHost); every other
// argument — each field of the call, the buffers' address and length — is
// checked again, and the call's state still is: a cancelled context, an
// abort, Close.
func TestArgumentsCheckedAgain(t *testing.T) {
	comms, err := ringo.NewLocal(1, nil)
	require.NoError(t, err)
	c := comms[0]
	mem := make([]byte, 32)
	in, out := mem[:16], make([]byte, 16)
	good := ringo.Call{Coll: ringo.CollAllReduce, Send: in, Recv: out, Count: 4, Type: ringo.TypeFloat32, Op: ringo.OpSum}
	require.NoError(t, c.Do(bg, good))
	with := func(change func(*ringo.Call)) ringo.Call {
		call := good
		change(&call)
		return call
	}
	bad := []struct {
		name string
		call ringo.Call
		want string
	}{
		{"count", with(func(x *ringo.Call) { x.Count = 5 }), "buffer has 16 bytes, need 20"},
		{"recv's length", with(func(x *ringo.Call) { x.Recv = out[:12] }), "recv buffer has 12 bytes, need 16"},
		{"send's address", with(func(x *ringo.Call) { x.Send = make([]byte, 20)[1:17] }), "send buffer is not aligned"},
		{"recv's address", with(func(x *ringo.Call) { x.Recv = mem[4:20] }), "overlap without being in place"},
		{"type", with(func(x *ringo.Call) { x.Type = ringo.TypeFloat64 }), "need 32"},
		{"op", with(func(x *ringo.Call) { x.Op = ringo.PreMul(2.0) }), "double"},
		{"collective", with(func(x *ringo.Call) { x.Coll = 9 }), "unknown collective 9"},
		{"send's length", with(func(x *ringo.Call) { x.Send = in[:8] }), "send buffer has 8 bytes, need 16"},
	}
	for _, tc := range bad {
		require.NoError(t, c.Do(bg, good), tc.name) // the call before passed
		wantErr(t, c.Do(bg, tc.call), ringo.ErrInvalidArgument, tc.want)
	}
	bcast := ringo.Call{Coll: ringo.CollBroadcast, Send: in, Recv: out, Count: 4, Type: ringo.TypeFloat32}
	require.NoError(t, c.Do(bg, bcast))
	bcast.Root = 1
	wantErr(t, c.Do(bg, bcast), ringo.ErrInvalidArgument, "root 1 outside [0, 1)")
	require.NoError(t, c.Do(bg, good))
	ctx, cancel := context.WithCancel(bg)
	cancel()
	wantErr(t, c.Do(ctx, good), context.Canceled, "not started")
	c.Abort()
	wantErr(t, c.Do(bg, good), ringo.ErrAborted, "not started")
	require.NoError(t, c.Close())
	wantErr(t, c.Do(bg, good), ringo.ErrInvalidArgument, "closed")
}

func TestClosedComm(t *testing.T) {
	comms, err := ringo.NewLocal(1, nil)
	if err != nil {
		t.Fatal(err)
	}
	c := comms[0]
	if err := ringo.AllReduce(bg, c, []float32{3}, make([]float32, 1), ringo.OpSum); err != nil {
		t.Fatal(err)
	}
	if err := c.Close(); err != nil {
		t.Fatal(err)
	}
	if err := c.Close(); err != nil {
		t.Fatalf("second Close: %v", err)
	}
	err = ringo.AllReduce(bg, c, []float32{3}, make([]float32, 1), ringo.OpSum)
	wantErr(t, err, ringo.ErrInvalidArgument, "closed")
}

// TestRegisterWindowHost: a host communicator's windows are memory of
// HostAlloc; it refuses any other, and an allocation of no elements, and
// a second free.
func TestRegisterWindowHost(t *testing.T) {
	comms := newComms(t, 2, nil)
	buf := make([]float32, 16)
	_, err := comms[0].RegisterWindow(bg, uintptr(unsafe.Pointer(&buf[0])), 64)
	wantErr(t, err, ringo.ErrInvalidArgument, "are not memory of HostAlloc")
	_, err = ringo.RegisterHostWindow(bg, comms[0], buf)
	wantErr(t, err, ringo.ErrInvalidArgument, "are not memory of HostAlloc")
	shared, err := ringo.HostAlloc[float32](16)
	require.NoError(t, err)
	w, err := ringo.RegisterHostWindow(bg, comms[0], shared) // ranks of one process: checked and kept
	require.NoError(t, err)
	require.NoError(t, w.Deregister())
	require.NoError(t, ringo.HostFree(shared))
	wantErr(t, ringo.HostFree(shared), ringo.ErrInvalidArgument, "freed twice?")
	_, err = ringo.HostAlloc[float32](0)
	wantErr(t, err, ringo.ErrInvalidArgument, "an allocation of 0 bytes")
}

func TestCallsDoNotAllocate(t *testing.T) {
	for _, proto := range []string{"Simple", "LL"} {
		comms := newComms(t, 4, &ringo.Config{Protocol: proto, Channels: 2})
		bufs := make([][]float32, 4)
		for r := range bufs {
			bufs[r] = make([]float32, 10000)
		}
		const runs = 30
		var wg sync.WaitGroup
		for r := 1; r < 4; r++ {
			wg.Add(1)
			go func() {
				defer wg.Done()
				for range runs + 1 {
					if err := ringo.AllReduce(bg, comms[r], bufs[r], bufs[r], ringo.OpSum); err != nil {
						t.Error(err)
						return
					}
				}
			}()
		}
		allocs := testing.AllocsPerRun(runs, func() {
			if err := ringo.AllReduce(bg, comms[0], bufs[0], bufs[0], ringo.OpSum); err != nil {
				t.Fatal(err)
			}
		})
		wg.Wait()
		if allocs != 0 {
			t.Errorf("%s: %v allocations per AllReduce", proto, allocs)
		}
	}
}

// Do itself, the untyped entry the C ABI and the benchmark use, allocates
// nothing either: here an in-place reduce-scatter, whose check computes the
// rank's segment for the overlap rule.
func TestDoDoesNotAllocate(t *testing.T) {
	const n, count, runs = 4, 2500, 30
	comms := newComms(t, n, &ringo.Config{Channels: 2})
	calls := make([]ringo.Call, n)
	for r := range calls {
		buf := make([]byte, n*count*4)
		seg := buf[r*count*4 : (r+1)*count*4]
		calls[r] = ringo.Call{Coll: ringo.CollReduceScatter, Send: buf, Recv: seg, Count: count, Type: ringo.TypeFloat32}
	}
	var wg sync.WaitGroup
	for r := 1; r < n; r++ {
		wg.Go(func() {
			for range runs + 1 { // AllocsPerRun adds a warm-up call
				if !assert.NoError(t, comms[r].Do(bg, calls[r])) {
					return
				}
			}
		})
	}
	allocs := testing.AllocsPerRun(runs, func() {
		require.NoError(t, comms[0].Do(bg, calls[0]))
	})
	wg.Wait()
	assert.Zero(t, allocs, "allocations per Do")
}

// TestSendRecvDoesNotAllocate: a group of sends and receives on one
// communicator seen before (a training step's) allocates nothing either,
// its messages matched with the peers' and its plan kept: 4 ranks, each
// sending to the next and receiving from the one before.
func TestSendRecvDoesNotAllocate(t *testing.T) {
	const n, count, runs, warm = 4, 1000, 30, 3
	comms := newComms(t, n, &ringo.Config{Channels: 2})
	ops := make([][]ringo.P2POp, n)
	for r := range ops {
		send, recv := make([]float32, count), make([]float32, count)
		ops[r] = []ringo.P2POp{ringo.SendOp(comms[r], send, (r+1)%n), ringo.RecvOp(comms[r], recv, (r+n-1)%n)}
	}
	rounds := func(r, k int) {
		for range k {
			if !assert.NoError(t, ringo.SendRecv(bg, ops[r]...)) {
				return
			}
		}
	}
	var wg sync.WaitGroup
	for r := range n { // the first calls plan and connect
		wg.Go(func() { rounds(r, warm) })
	}
	wg.Wait()
	for r := 1; r < n; r++ {
		wg.Go(func() { rounds(r, runs+1) }) // AllocsPerRun adds a warm-up call
	}
	allocs := testing.AllocsPerRun(runs, func() {
		require.NoError(t, ringo.SendRecv(bg, ops[0]...))
	})
	wg.Wait()
	assert.Zero(t, allocs, "allocations per SendRecv")
}

// doubled returns what msg says twice: a segment repeated next to itself
// ("init: init: …") or a prefix said more than once ("ringo:", "invalid
// argument"); "" when there is none.
func doubled(msg string) string {
	parts := strings.Split(msg, ": ")
	for i := 1; i < len(parts); i++ {
		if parts[i] == parts[i-1] {
			return parts[i]
		}
	}
	for _, p := range []string{"ringo:", "invalid argument"} {
		if strings.Count(msg, p) > 1 {
			return p
		}
	}
	return ""
}

// TestOnePrefix: representative failures of each layer — a Config, an
// environment variable, the reduction, the bootstrap, a launcher's
// variables, a unique ID, the interface choice — say each prefix once
// (they once read "ringo: init rank 0: ringo: bootstrap join …" and
// "invalid argument: invalid argument: reduce: …"; the ringo command adds
// its "ringo: " once, TestBadInput there).
func TestOnePrefix(t *testing.T) {
	for _, msg := range []string{"ringo: init rank 0: ringo: bootstrap join rank 0: timed out",
		"allreduce rank 0: invalid argument: invalid argument: reduce: x", "init: init: x"} {
		require.NotEmpty(t, doubled(msg), "the check misses %q", msg)
	}
	cases := []struct {
		name string
		env  []string // NAME=value
		fail func() error
		want string // the error says this
	}{
		{"config", nil, func() error { _, err := ringo.NewLocal(2, &ringo.Config{Channels: 99}); return err },
			"init: invalid argument: config: Channels 99 outside 1…64"},
		{"environment", []string{"NCCL_BUFFSIZE=131"}, func() error { _, err := ringo.NewLocal(2, nil); return err },
			`init: NCCL_BUFFSIZE="131": want a multiple of 128 bytes in [128, 1G]`},
		{"reduction", nil, func() error {
			comms := newComms(t, 1, nil)
			return ringo.AllReduce(bg, comms[0], []float32{1}, make([]float32, 1), ringo.PreMul(float64(2)))
		}, "allreduce rank 0: invalid argument: reduce: premulsum scalar of type"},
		{"bootstrap", nil, func() error {
			id, err := ringo.NewUniqueID()
			require.NoError(t, err)
			defer bootstrap.StopRoot(id)
			ctx, cancel := context.WithTimeout(bg, 200*time.Millisecond)
			defer cancel()
			_, err = ringo.NewComm(ctx, id, 2, 0, nil)
			return err
		}, "init rank 0: bootstrap"},
		{"launcher", []string{"RINGO_RANK=x", "RINGO_NRANKS=2", "RINGO_COMM_ID=127.0.0.1:1"},
			func() error { _, err := ringo.NewCommFromEnv(bg, nil); return err }, `init: launch: RINGO_RANK="x" is not a rank`},
		{"unique ID", nil, func() error { _, err := ringo.UniqueIDFromString("zz"); return err }, "unique ID: "},
		{"interface", []string{"NCCL_SOCKET_IFNAME=no-such-interface"}, func() error { _, err := ringo.NewUniqueID(); return err },
			`NCCL_SOCKET_IFNAME="no-such-interface": matches no interface`},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			for _, kv := range c.env {
				k, v, _ := strings.Cut(kv, "=")
				t.Setenv(k, v)
			}
			err := c.fail()
			require.Error(t, err)
			assert.Contains(t, err.Error(), c.want)
			t.Log(err)
			assert.Empty(t, doubled(err.Error()), "said twice in %q", err)
		})
	}
}
