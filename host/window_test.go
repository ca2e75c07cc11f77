package host

import (
	"context"
	"fmt"
	"math/rand/v2"
	"sync"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/ringo-ccl/ringo/internal/errs"
	"github.com/ringo-ccl/ringo/internal/mem"
	"github.com/ringo-ccl/ringo/reduce"
	"github.com/ringo-ccl/ringo/ring"
	"github.com/ringo-ccl/ringo/shm"
	"github.com/ringo-ccl/ringo/transport"
)

// testWindows is the windows of ranks as goroutines of this process: rank
// r's slot k is whatever buffer it last set there (set, before the call
// that publishes it; the board's publications order it before the
// peers' reads). A rank that hides finds none of its buffers.
type testWindows struct {
	mu   sync.Mutex
	wins [][2][]byte // by rank and slot
}

type rankWindows struct {
	all  *testWindows
	rank int
	hide bool
}

func newTestWindows(n int) []*rankWindows {
	all := &testWindows{wins: make([][2][]byte, n)}
	rs := make([]*rankWindows, n)
	for r := range rs {
		rs[r] = &rankWindows{all: all, rank: r}
	}
	return rs
}

// set makes rank's slots in and out.
func (w *rankWindows) set(in, out []byte) {
	w.all.mu.Lock()
	defer w.all.mu.Unlock()
	w.all.wins[w.rank] = [2][]byte{in, out}
}

func (w *rankWindows) Find(p uintptr, n int) (slot, off int, ok bool) {
	w.all.mu.Lock()
	defer w.all.mu.Unlock()
	if w.hide {
		return 0, 0, false
	}
	for k, b := range w.all.wins[w.rank] {
		if a := mem.Addr(b); len(b) > 0 && p >= a && p+uintptr(n) <= a+uintptr(len(b)) {
			return k, int(p - a), true
		}
	}
	return 0, 0, false
}

func (w *rankWindows) Reach(q, slot int) []byte {
	w.all.mu.Lock()
	defer w.all.mu.Unlock()
	if slot < 0 || slot > 1 {
		return nil
	}
	return w.all.wins[q][slot]
}

// TestWindowed: 120 random calls of every collective on buffers in
// windows — sum and max, in and out of place, every root, all-reduces of
// several blocks per part — on 3 ranks, each output checked. In one call
// of eight a random rank's buffers are outside its windows: every rank
// must learn it alike, and the call then takes the one-shot path on the
// same board.
func TestWindowed(t *testing.T) {
	const n, slot = 3, 256 << 10
	bs := oneShotBoards(t, n, slot)
	ws := newTestWindows(n)
	xs := make([]*Windowed, n)
	for r := range n {
		xs[r] = &Windowed{Windows: ws[r]}
	}
	const calls = 120
	rng := rand.New(rand.NewPCG(3, 4))
	hider := make([]int, calls) // the rank whose buffers are outside its windows, or −1
	for k := range hider {
		hider[k] = -1
		if rng.IntN(8) == 0 {
			hider[k] = rng.IntN(n)
		}
	}
	var called [n]int // each rank's calls so far (its own goroutine's, one call at a time)
	fellBack := make([]int, n)
	checkRandomCalls(t, n, calls, 20000, allColls, []reduce.Op{reduce.OpSum, reduce.OpMax}, func(r int, x *OneShot) error {
		k := called[r]
		called[r]++
		ws[r].hide = hider[k] == r
		ws[r].set(x.In, x.Out)
		w := &xs[r]
		*w = &Windowed{Coll: x.Coll, In: x.In, Out: x.Out, Bytes: x.Bytes, Root: x.Root, Func: x.Func, Windows: ws[r]}
		var wt transport.Waiter
		wt.Reset(context.Background(), 30*time.Second)
		ran, err := RunWindowed(bs[r], &wt, r, n, *w)
		if err != nil || ran {
			if err == nil && hider[k] >= 0 {
				err = fmt.Errorf("call %d ran windowed though rank %d's buffers are outside its windows", k, hider[k])
			}
			return err
		}
		if hider[k] < 0 {
			return fmt.Errorf("call %d fell back though every rank's buffers are in windows", k)
		}
		fellBack[r]++
		return RunOneShot(bs[r], &wt, r, n, x)
	})
	assert.Equal(t, fellBack[0], fellBack[1])
	assert.Positive(t, fellBack[0], "no call fell back")
}

// TestWindowedOutside: a peer's post that places its buffer outside the
// windows this rank holds is an error naming the peer, never a read.
func TestWindowedOutside(t *testing.T) {
	bs := oneShotBoards(t, 2, 64)
	ws := newTestWindows(2)
	in, out := make([]byte, 4096), make([]byte, 4096)
	ws[0].set(in, out)
	ws[1].set(in[:1024], out[:1024]) // rank 1's windows are too small for what it posts
	f, err := reduce.New(reduce.Float32, reduce.OpSum, 2)
	require.NoError(t, err)
	x := &Windowed{Coll: ring.AllReduce, In: in, Out: out, Bytes: 4096, Func: f, Windows: ws[0]}
	post := bs[1].Slot(1, bs[1].Next())
	put(ws[0], post, in, 4096) // rank 1 says its input is at offset 0 of slot 0, 4096 bytes
	put(ws[0], post[postBytes:], out, 4096)
	putCall(post[2*postBytes:], x)
	bs[1].Publish(bs[1].Next())
	var w transport.Waiter
	w.Reset(context.Background(), time.Minute)
	ran, err := RunWindowed(bs[0], &w, 0, 2, x)
	assert.False(t, ran)
	require.ErrorIs(t, err, errs.ErrInvalidArgument)
	assert.Contains(t, err.Error(), "rank 1's input of 4096 bytes at offset 0 of window 0 lies outside the windows rank 0 holds")
}

// TestWindowedAbort: a rank whose peer never finishes ends its wait when
// the communicator breaks, naming the peer and the step.
func TestWindowedAbort(t *testing.T) {
	bs := oneShotBoards(t, 2, 64)
	ws := newTestWindows(2)
	buf := make([]byte, 1<<16)
	ws[0].set(buf, nil)
	ws[1].set(buf, nil)
	var w transport.Waiter
	var broken transport.Abort
	w.Reset(context.Background(), time.Minute, &broken)
	f, err := reduce.New(reduce.Float32, reduce.OpSum, 2)
	require.NoError(t, err)
	x := &Windowed{Coll: ring.AllReduce, In: buf, Out: buf, Bytes: len(buf), Func: f, Windows: ws[0]}
	// Rank 1 publishes its windows, then is lost.
	post := bs[1].Slot(1, bs[1].Next())
	put(ws[1], post, buf, len(buf))
	put(ws[1], post[postBytes:], buf, len(buf))
	putCall(post[2*postBytes:], x)
	bs[1].Publish(bs[1].Next())
	time.AfterFunc(20*time.Millisecond, func() { broken.Set(fmt.Errorf("rank 1 lost: %w", errs.ErrPeerLost)) })
	ran, err := RunWindowed(bs[0], &w, 0, 2, x)
	assert.True(t, ran)
	require.ErrorIs(t, err, errs.ErrPeerLost)
	assert.Contains(t, err.Error(), "allreduce rank 0 windows: waiting for the peers to finish (peer rank 1)")
}

// TestWindowedMismatch: ranks whose calls differ — in size, collective or
// root — each return an error naming the other's call, and none waits for
// the rest of the call.
func TestWindowedMismatch(t *testing.T) {
	const n = 2
	bs := oneShotBoards(t, n, 64)
	ws := newTestWindows(n)
	f, err := reduce.New(reduce.Float32, reduce.OpSum, n)
	require.NoError(t, err)
	bufs := [n][]byte{make([]byte, 1<<16), make([]byte, 1<<16)}
	for r := range n {
		ws[r].set(bufs[r], nil)
	}
	for _, c := range []struct {
		calls [n]Windowed
		want  string
	}{
		{[n]Windowed{{Coll: ring.AllReduce, Bytes: 4096}, {Coll: ring.AllReduce, Bytes: 8192}},
			"rank 1 called allreduce of 8192 bytes, root 0, rank 0 allreduce of 4096 bytes, root 0: every rank's call must be the same"},
		{[n]Windowed{{Coll: ring.Broadcast, Bytes: 4096, Root: 1}, {Coll: ring.Broadcast, Bytes: 4096}},
			"rank 1 called broadcast of 4096 bytes, root 0, rank 0 broadcast of 4096 bytes, root 1"},
		{[n]Windowed{{Coll: ring.AllGather, Bytes: 4096}, {Coll: ring.AllReduce, Bytes: 4096}},
			"rank 1 called allreduce of 4096 bytes, root 0, rank 0 allgather of 4096 bytes"},
	} {
		xs := make([]*Windowed, n)
		for r := range n {
			x := c.calls[r]
			x.In, x.Out, x.Func, x.Windows = bufs[r], bufs[r], f, ws[r]
			xs[r] = &x
		}
		fails := runWindowedAll(bs, xs)
		require.ErrorIs(t, fails[0], errs.ErrInvalidArgument)
		assert.Contains(t, fails[0].Error(), c.want)
		require.ErrorIs(t, fails[1], errs.ErrInvalidArgument)
		assert.Contains(t, fails[1].Error(), "(peer rank 0)")
	}
}

// TestWindowedAllocs: a windowed all-reduce does not allocate.
func TestWindowedAllocs(t *testing.T) {
	const n = 2
	bs := oneShotBoards(t, n, 64)
	ws := newTestWindows(n)
	f, err := reduce.New(reduce.Float32, reduce.OpSum, n)
	require.NoError(t, err)
	xs := make([]*Windowed, n)
	for r := range n {
		in, out := make([]byte, 1<<18), make([]byte, 1<<18)
		ws[r].set(in, out)
		xs[r] = &Windowed{Coll: ring.AllReduce, In: in, Out: out, Bytes: 1 << 18, Func: f, Windows: ws[r]}
	}
	assert.Zero(t, twoRankAllocs(t, func(r int, w *transport.Waiter) error { return windowed(bs[r], w, r, n, xs[r]) }))
}

// windowed runs x as rank r of n on b; a call that did not run on the
// windows is an error.
func windowed(b *shm.Board, w *transport.Waiter, r, n int, x *Windowed) error {
	ran, err := RunWindowed(b, w, r, n, x)
	if err == nil && !ran {
		err = fmt.Errorf("rank %d: not windowed", r)
	}
	return err
}

// runWindowedAll runs xs[r] as rank r on bs[r], every rank at once, and
// returns each rank's error (windowed's).
func runWindowedAll(bs []*shm.Board, xs []*Windowed) []error {
	fails := make([]error, len(xs))
	var wg sync.WaitGroup
	for r, x := range xs {
		wg.Go(func() {
			var w transport.Waiter
			w.Reset(context.Background(), 30*time.Second)
			fails[r] = windowed(bs[r], &w, r, len(xs), x)
		})
	}
	wg.Wait()
	return fails
}

// TestWindowedReduceInPlace: a reduce whose root's input is its output
// reads each part of the root's input before anyone writes it there,
// whichever rank the root is.
func TestWindowedReduceInPlace(t *testing.T) {
	const n, count = 3, 3 * windowedBlock
	bs := oneShotBoards(t, n, 64)
	for root := range n {
		ws := newTestWindows(n)
		bufs := make([][]float32, n)
		for r := range n {
			bufs[r] = make([]float32, count)
			for i := range bufs[r] {
				bufs[r][i] = float32(r + 1 + i%7)
			}
			ws[r].set(mem.Bytes(bufs[r]), nil)
		}
		xs := make([]*Windowed, n)
		for r := range n {
			f, err := reduce.New(reduce.Float32, reduce.OpSum, n)
			require.NoError(t, err)
			b := mem.Bytes(bufs[r])
			xs[r] = &Windowed{Coll: ring.Reduce, In: b, Out: b, Bytes: len(b), Root: root, Func: f, Windows: ws[r]}
		}
		for r, err := range runWindowedAll(bs, xs) {
			require.NoError(t, err, "root %d, rank %d", root, r)
		}
		for i, got := range bufs[root] {
			require.Equal(t, float32(6+3*(i%7)), got, "root %d, element %d", root, i)
		}
	}
}

// TestWindowsFirst: calls of 8 KiB and up (their larger buffer) try the
// windows before one exchange, where ranks do not outnumber cores.
func TestWindowsFirst(t *testing.T) {
	assert.True(t, WindowsFirst(ring.AllReduce, WindowsMin, 2, false))
	assert.False(t, WindowsFirst(ring.AllReduce, WindowsMin-4, 2, false))
	assert.False(t, WindowsFirst(ring.AllReduce, WindowsMin, 2, true), "crowded")
	assert.True(t, WindowsFirst(ring.AllGather, WindowsMin/4, 4, false), "the output is the larger buffer")
	assert.True(t, WindowsFirst(ring.ReduceScatter, WindowsMin/2, 2, false), "the input is")
	assert.False(t, WindowsFirst(ring.Broadcast, WindowsMin/2, 4, false))
}
