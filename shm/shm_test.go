package shm

import (
	"context"
	"errors"
	"fmt"
	"sync"
	"testing"
	"time"

	"github.com/ringo-ccl/ringo/internal/mem"
	"github.com/ringo-ccl/ringo/transport"
)

// fakeExchange is an in-process stand-in for the bootstrap: n ranks meet in
// rounds; fail makes a given round fail for everyone.
type fakeExchange struct {
	n        int
	mu       sync.Mutex
	cond     *sync.Cond
	round    map[int][][]byte
	arrived  map[int]int
	failAt   int // round that fails (0: none)
	rankSeen []int
}

func newFake(n int) *fakeExchange {
	f := &fakeExchange{n: n, round: map[int][][]byte{}, arrived: map[int]int{}, rankSeen: make([]int, n)}
	f.cond = sync.NewCond(&f.mu)
	return f
}

type fakeRank struct {
	f    *fakeExchange
	rank int
}

func (r fakeRank) Rank() int { return r.rank }
func (r fakeRank) Size() int { return r.f.n }

func (r fakeRank) AllGather(ctx context.Context, blob []byte) ([][]byte, error) {
	f := r.f
	f.mu.Lock()
	defer f.mu.Unlock()
	f.rankSeen[r.rank]++
	k := f.rankSeen[r.rank]
	if k == f.failAt {
		return nil, errors.New("peer lost (test)")
	}
	if f.round[k] == nil {
		f.round[k] = make([][]byte, f.n)
	}
	f.round[k][r.rank] = append([]byte(nil), blob...)
	f.arrived[k]++
	f.cond.Broadcast()
	for f.arrived[k] < f.n {
		f.cond.Wait()
	}
	return f.round[k], nil
}

func (r fakeRank) Barrier(ctx context.Context) error {
	_, err := r.AllGather(ctx, nil)
	return err
}

var sizes = transport.Sizes{Simple: 8 * 1024, LL: 8 * 256}

func connectAll(t *testing.T, f *fakeExchange, tag string, nch int) ([]*Transport, []error) {
	n := f.n
	ts := make([]*Transport, n)
	errs := make([]error, n)
	var wg sync.WaitGroup
	for r := range n {
		wg.Add(1)
		go func() {
			defer wg.Done()
			ts[r], errs[r] = Connect(context.Background(), fakeRank{f, r}, tag, (r+n-1)%n, (r+1)%n, nch, sizes, true, true)
		}()
	}
	wg.Wait()
	return ts, errs
}

func TestConnectSharesMemoryAndLeavesNothing(t *testing.T) {
	tag := fmt.Sprintf("test%d", time.Now().UnixNano())
	ts, errs := connectAll(t, newFake(3), tag, 2)
	for r, err := range errs {
		if err != nil {
			t.Fatalf("rank %d: %v", r, err)
		}
	}
	defer func() {
		for _, tr := range ts {
			tr.Close()
		}
	}()
	if left, _ := Leftovers(tag); len(left) != 0 {
		t.Fatalf("segments left in /dev/shm after setup: %v", left)
	}
	// Rank 0's send connection on channel 1 is rank 1's receive
	// connection: different mappings of the same bytes.
	ctx := context.Background()
	send, _ := ts[0].Conn(ctx, 0, 1, 1)
	recv, _ := ts[1].Conn(ctx, 0, 1, 1)
	if send == recv {
		t.Fatal("the two ends must be separate views")
	}
	copy(send.SimpleSlots(0, 1), "hello")
	send.PostSimple(0, 1, len("hello"))
	var w transport.Waiter
	w.Reset(ctx, time.Second)
	if err := recv.WaitData(1, &w); err != nil {
		t.Fatal(err)
	}
	if got := string(recv.SimpleSlots(0, 1)[:5]); got != "hello" {
		t.Fatalf("receiver sees %q", got)
	}
	recv.WriteLL(3, []byte("LL data!")) // any direction works on shared bytes
	got := make([]byte, 8)
	if err := send.ReadLL(3, got, &w); err != nil || string(got) != "LL data!" {
		t.Fatalf("LL through shared memory: %q %v", got, err)
	}
	if _, err := ts[0].Conn(ctx, 1, 2, 0); err == nil {
		t.Fatal("rank 0 handed out a connection it does not have")
	}
	if !mem.Aligned(send.SimpleSlots(0, 1), 128) {
		t.Fatal("slots are not aligned")
	}
}

func TestFailedSetupLeavesNothing(t *testing.T) {
	for _, failAt := range []int{1, 2} { // the name exchange, the barrier
		tag := fmt.Sprintf("fail%d-%d", failAt, time.Now().UnixNano())
		f := newFake(3)
		f.failAt = failAt
		_, errs := connectAll(t, f, tag, 1)
		for r, err := range errs {
			if err == nil {
				t.Fatalf("round %d: rank %d succeeded", failAt, r)
			}
		}
		if left, _ := Leftovers(tag); len(left) != 0 {
			t.Fatalf("round %d: segments left in /dev/shm: %v", failAt, left)
		}
	}
}

func TestConnectRejectsBadRing(t *testing.T) {
	if _, err := Connect(context.Background(), fakeRank{newFake(2), 0}, "x", 5, 1, 1, sizes, true, true); err == nil {
		t.Fatal("prev 5 of 2 accepted")
	}
	if _, err := Connect(context.Background(), fakeRank{newFake(2), 0}, "x", 1, 1, 1, transport.Sizes{}, true, true); err == nil {
		t.Fatal("zero sizes accepted")
	}
}
