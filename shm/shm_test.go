package shm

import (
	"context"
	"errors"
	"fmt"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/ringo-ccl/ringo/internal/mem"
	"github.com/ringo-ccl/ringo/ring"
	"github.com/ringo-ccl/ringo/transport"
	"github.com/ringo-ccl/ringo/transport/exchangetest"
)

var sizes = transport.Sizes{Simple: 8 * 1024, LL: 8 * 256}

// connectAll connects every rank of f on the edges of a bidirectional ring
// of nch channels (each pair of neighbours both ways) through meshes over
// the shared-memory connector.
func connectAll(t *testing.T, f *exchangetest.Fake, tag string, nch int) ([]*transport.Mesh, []error) {
	n := f.Size()
	edges := transport.RingEdges(ring.Identity(n), ring.Bidirectional, nch)
	ms := make([]*transport.Mesh, n)
	for r := range n {
		c, err := NewConnector(tag, sizes, func(int, int) bool { return true })
		require.NoError(t, err)
		ms[r] = transport.NewMesh(f.Rank(r), c)
	}
	return ms, f.Each(func(r int) error { return ms[r].Connect(context.Background(), edges) })
}

func TestConnectSharesMemoryAndLeavesNothing(t *testing.T) {
	tag := fmt.Sprintf("test%d", time.Now().UnixNano())
	ts, errs := connectAll(t, exchangetest.New(3), tag, 2)
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
	// Rank 0's send connection on channel 0 is rank 1's receive
	// connection: different mappings of the same bytes.
	ctx := context.Background()
	send, _ := ts[0].Conn(ctx, 0, 1, 0)
	recv, _ := ts[1].Conn(ctx, 0, 1, 0)
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
	// Channel 1 runs backwards: rank 1 sends to rank 0 there, through its
	// own mapping of rank 0's segment.
	back, err1 := ts[1].Conn(ctx, 1, 0, 1)
	backRecv, err2 := ts[0].Conn(ctx, 1, 0, 1)
	require.NoError(t, errors.Join(err1, err2))
	copy(back.SimpleSlots(0, 1), "back")
	back.PostSimple(0, 1, 4)
	require.NoError(t, backRecv.WaitData(1, &w))
	assert.Equal(t, "back", string(backRecv.SimpleSlots(0, 1)[:4]))
	if !mem.Aligned(send.SimpleSlots(0, 1), 128) {
		t.Fatal("slots are not aligned")
	}
}

func TestFailedSetupLeavesNothing(t *testing.T) {
	for _, failAt := range []int{1, 2} { // the name exchange, the barrier
		tag := fmt.Sprintf("fail%d-%d", failAt, time.Now().UnixNano())
		f := exchangetest.New(3)
		f.FailAt = failAt
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

func TestConnectRejectsBadEdges(t *testing.T) {
	c, err := NewConnector("x", sizes, func(int, int) bool { return true })
	require.NoError(t, err)
	for _, e := range []transport.Edge{{From: 5, To: 1}, {From: 0, To: 0}, {From: 0, To: 1, Ch: -1}} {
		_, err := c.Connect(context.Background(), exchangetest.New(2).Rank(0), "k", []transport.Edge{e})
		assert.ErrorContains(t, err, "no connection", "%v", e)
	}
	_, err = NewConnector("x", transport.Sizes{}, func(int, int) bool { return true })
	assert.Error(t, err, "zero sizes")
}
