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
	"github.com/ringo-ccl/ringo/transport/exchangetest"
)

// oneShotBoards makes n ranks' boards, slots of slot bytes.
func oneShotBoards(t *testing.T, n, slot int) []*shm.Board {
	t.Helper()
	f := exchangetest.New(n)
	tag := fmt.Sprintf("oneshot-%d", time.Now().UnixNano())
	bs := make([]*shm.Board, n)
	errors := f.Each(func(r int) (err error) {
		bs[r], err = shm.NewBoard(context.Background(), f.Rank(r), tag, slot)
		return err
	})
	for r, err := range errors {
		require.NoError(t, err, "rank %d", r)
	}
	t.Cleanup(func() {
		for _, b := range bs {
			b.Close()
		}
	})
	return bs
}

// TestOneShot: 200 random calls of every collective the board runs — sum,
// max and avg, in and out of place, every root — on 3 ranks in a row, each
// output checked against values computed here (small integers: exact in
// any order). Broadcasts and reduces, where some ranks read nothing, run
// among the others, so slots are reused while their last readers may lag.
func TestOneShot(t *testing.T) {
	const n, slot = 3, 1024
	bs := oneShotBoards(t, n, slot)
	checkRandomCalls(t, n, 200, slot/4/n, allColls, []reduce.Op{reduce.OpSum, reduce.OpMax, reduce.OpAvg}, func(r int, x *OneShot) error {
		var w transport.Waiter
		w.Reset(context.Background(), 30*time.Second)
		return RunOneShot(bs[r], &w, r, n, x)
	})
}

// allColls is every collective the board runs.
var allColls = []ring.Collective{ring.AllReduce, ring.ReduceScatter, ring.AllGather, ring.Broadcast, ring.Reduce}

// checkRandomCalls runs calls random calls of colls, count at most
// maxCount float32s and op one of ops, in and out of place, every root, on
// n ranks as goroutines, each rank's by run, and checks every output
// against values computed here (small integers: exact in any order).
func checkRandomCalls(t *testing.T, n, calls, maxCount int, colls []ring.Collective, ops []reduce.Op, run func(r int, x *OneShot) error) {
	t.Helper()
	rng := rand.New(rand.NewPCG(1, 2))
	for call := range calls {
		coll := colls[rng.IntN(len(colls))]
		op := ops[rng.IntN(len(ops))]
		count := 1 + rng.IntN(maxCount)
		root := rng.IntN(n)
		inPlace := rng.IntN(2) == 0
		ins := make([][]float32, n)
		for r := range n {
			inLen := count
			if coll == ring.ReduceScatter {
				inLen = count * n
			}
			ins[r] = make([]float32, inLen)
			for i := range ins[r] {
				ins[r][i] = float32(rng.IntN(64) * 3)
			}
		}
		outs := make([][]float32, n)
		errors := make([]error, n)
		var wg sync.WaitGroup
		for r := range n {
			outLen := count
			if coll == ring.AllGather {
				outLen = count * n
			}
			in := ins[r]
			out := make([]float32, outLen)
			switch {
			case !inPlace || coll == ring.Broadcast || coll == ring.Reduce:
			case coll == ring.AllReduce:
				out = append([]float32(nil), in...)
				in = out
			case coll == ring.ReduceScatter: // recv is rank r's part of send
				buf := append([]float32(nil), in...)
				in, out = buf, buf[r*count:(r+1)*count]
			case coll == ring.AllGather: // send is rank r's part of recv
				copy(out[r*count:], in)
				in = out[r*count : (r+1)*count]
			}
			outs[r] = out
			f, err := reduce.New(reduce.Float32, op, n)
			require.NoError(t, err)
			x := &OneShot{Coll: coll, In: mem.Bytes(in), Out: mem.Bytes(out), Bytes: count * 4, Root: root, Func: f}
			wg.Add(1)
			go func() {
				defer wg.Done()
				errors[r] = run(r, x)
			}()
		}
		wg.Wait()
		for r := range n {
			require.NoError(t, errors[r], "call %d (%v): rank %d", call, coll, r)
		}
		combine := func(i int) float32 {
			v := ins[0][i]
			for q := 1; q < n; q++ {
				switch op {
				case reduce.OpMax:
					v = max(v, ins[q][i])
				default:
					v += ins[q][i]
				}
			}
			if op == reduce.OpAvg { // PreMulSum by 1/n rounded to float32, summed in rank order
				s := float32(1) / float32(n)
				v = 0
				for q := range n {
					v += ins[q][i] * s
				}
			}
			return v
		}
		for r := range n {
			for i, got := range outs[r] {
				var want float32
				switch coll {
				case ring.AllReduce:
					want = combine(i)
				case ring.ReduceScatter:
					want = combine(r*count + i)
				case ring.AllGather:
					want = ins[i/count][i%count]
				case ring.Broadcast:
					want = ins[root][i]
				case ring.Reduce:
					if r != root {
						continue
					}
					want = combine(i)
				}
				require.Equal(t, want, got, "call %d: %v %v count %d root %d in place %v: rank %d element %d", call, coll, op, count, root, inPlace, r, i)
			}
		}
	}
}

// TestOneShotAbort: a rank that never comes ends the others' wait when
// the communicator breaks, with an error naming the rank waited for.
func TestOneShotAbort(t *testing.T) {
	bs := oneShotBoards(t, 2, 64)
	var w transport.Waiter
	var broken transport.Abort
	w.Reset(context.Background(), time.Minute, &broken)
	time.AfterFunc(20*time.Millisecond, func() { broken.Set(fmt.Errorf("rank 1 lost: %w", errs.ErrPeerLost)) })
	out := make([]byte, 8)
	err := RunOneShot(bs[0], &w, 0, 2, &OneShot{Coll: ring.AllGather, In: out[:4], Out: out, Bytes: 4})
	require.ErrorIs(t, err, errs.ErrPeerLost)
	assert.Contains(t, err.Error(), "allgather rank 0 one-shot: waiting for data (peer rank 1)")
}
