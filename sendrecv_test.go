package ringo_test

import (
	"fmt"
	"math/rand/v2"
	"sync"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/ringo-ccl/ringo"
	"github.com/ringo-ccl/ringo/ring"
	"github.com/ringo-ccl/ringo/ring/ringtest"
)

// fill returns n elements of T, distinct per rank and index where T can
// tell them apart.
func fill[T ringo.Elem](rank, n int) []T {
	out := make([]T, n)
	for i := range out {
		out[i] = fromF64[T](float64((rank*7 + i) % 16))
	}
	return out
}

// TestSendRecvGroupsInProcess: random groups of every pattern (ring's
// ringtest.P2PGroup: all-to-all, all-to-allv with zeros, gather, scatter,
// random pairs, several messages to one peer and to itself), each message
// in its own buffer, run through SendRecv on 1 to 5 in-process ranks, both
// protocols; every received element is its sender's. Then a collective on
// the same communicator: the point-to-point calls left its numbering and
// connections consistent.
func TestSendRecvGroupsInProcess(t *testing.T) {
	rng := rand.New(rand.NewPCG(20, 5))
	for _, proto := range []string{"Simple", "LL"} {
		for _, n := range []int{1, 2, 3, 5} {
			comms := newComms(t, n, &ringo.Config{Protocol: proto, Channels: 2})
			for trial := range 2 * ringtest.NumPatterns {
				name := fmt.Sprintf("%s n%d trial %d", proto, n, trial)
				sends, recvs := ringtest.P2PGroup(rng, n, trial%ringtest.NumPatterns, []int64{4, 700, 40000}[rng.IntN(3)])
				runGroup(t, name, comms, sends, recvs)
			}
			noErrors(t, each(comms, func(r int, c *ringo.Comm) error {
				return ringo.AllReduce(bg, c, []float32{1}, make([]float32, 1), ringo.OpSum)
			}))
		}
	}
}

// runGroup runs a group, each rank on its goroutine, each message in a
// buffer of its own, and checks every receive.
func runGroup(t *testing.T, name string, comms []*ringo.Comm, sends, recvs [][]ring.Xfer) {
	t.Helper()
	n := len(comms)
	sendBufs, recvBufs := make([][][]int32, n), make([][][]int32, n)
	for r := range n {
		for _, x := range sends[r] {
			sendBufs[r] = append(sendBufs[r], fill[int32](r, int(x.Count)))
		}
		for _, x := range recvs[r] {
			recvBufs[r] = append(recvBufs[r], make([]int32, x.Count))
		}
	}
	noErrors(t, each(comms, func(r int, c *ringo.Comm) error {
		var ops []ringo.P2POp // sends and receives interleaved, each peer's in issue order
		for k := range max(len(sends[r]), len(recvs[r])) {
			if k < len(sends[r]) {
				ops = append(ops, ringo.SendOp(c, sendBufs[r][k], sends[r][k].Peer))
			}
			if k < len(recvs[r]) {
				ops = append(ops, ringo.RecvOp(c, recvBufs[r][k], recvs[r][k].Peer))
			}
		}
		return ringo.SendRecv(bg, ops...)
	}))
	for b := range n {
		seen := map[int]int{}
		for k, x := range recvs[b] {
			a := x.Peer
			j := nth(sends[a], b, seen[a])
			seen[a]++
			require.Equal(t, sendBufs[a][j], recvBufs[b][k], "%s: rank %d's receive %d from rank %d", name, b, k, a)
		}
	}
}

// nth returns the index in xs of the k-th message with peer.
func nth(xs []ring.Xfer, peer, k int) int {
	for i, x := range xs {
		if x.Peer == peer {
			if k == 0 {
				return i
			}
			k--
		}
	}
	panic("no such message")
}

// TestSendRecvOneGoroutine: one goroutine drives every rank (a group over
// several communicators, as a thread driving several GPUs does in NCCL):
// each rank sends to the next and receives from the previous.
func TestSendRecvOneGoroutine(t *testing.T) {
	const n, count = 4, 1000
	comms := newComms(t, n, nil)
	send, recv := make([][]float64, n), make([][]float64, n)
	var ops []ringo.P2POp
	for r, c := range comms {
		send[r], recv[r] = fill[float64](r, count), make([]float64, count)
		ops = append(ops, ringo.SendOp(c, send[r], (r+1)%n), ringo.RecvOp(c, recv[r], (r+n-1)%n))
	}
	require.NoError(t, ringo.SendRecv(bg, ops...))
	for r := range n {
		assert.Equal(t, send[(r+n-1)%n], recv[r], "rank %d", r)
	}
}

// TestSendRecvSingle: Send and Recv alone, between two of three ranks,
// several in a row to one peer, and a collective of all three after.
func TestSendRecvSingle(t *testing.T) {
	comms := newComms(t, 3, nil)
	a, b := fill[uint8](1, 300), fill[uint8](2, 70000)
	gotA, gotB := make([]uint8, len(a)), make([]uint8, len(b))
	noErrors(t, each(comms, func(r int, c *ringo.Comm) error {
		if r == 0 {
			if err := ringo.Send(bg, c, a, 2); err != nil {
				return err
			}
			return ringo.Send(bg, c, b, 2)
		}
		if err := ringo.Recv(bg, c, gotA, 0); err != nil {
			return err
		}
		return ringo.Recv(bg, c, gotB, 0)
	}, 1))
	assert.Equal(t, a, gotA)
	assert.Equal(t, b, gotB)
	// A send to itself, with its receive, in one group.
	self := make([]uint8, len(a))
	require.NoError(t, ringo.SendRecv(bg, ringo.SendOp(comms[1], a, 1), ringo.RecvOp(comms[1], self, 1)))
	assert.Equal(t, a, self)
	noErrors(t, each(comms, func(r int, c *ringo.Comm) error {
		return ringo.AllReduce(bg, c, []float32{1}, make([]float32, 1), ringo.OpSum)
	}))
}

// TestPointToPointCollectives: AllToAll, AllToAllV (unequal counts and
// zeros), Gather and Scatter (out of place and in place) on 1, 2 and 4
// in-process ranks, each value checked. TestEveryTypeAndOp runs them for every datatype.
func TestPointToPointCollectives(t *testing.T) {
	for _, n := range []int{1, 2, 4} {
		comms := newComms(t, n, nil)
		t.Run(fmt.Sprint(n), func(t *testing.T) {
			checkP2PColls[int32](t, comms)
			checkP2PColls[ringo.Float8E5M2](t, comms)
		})
	}
}

// checkP2PColls runs the four collectives of T on every rank of comms
// (each on its goroutine) and checks them.
func checkP2PColls[T ringo.Elem](t *testing.T, comms []*ringo.Comm) {
	t.Helper()
	n := len(comms)
	typ := ringo.TypeOf[T]()
	for _, count := range []int{1, 1000} {
		// all-to-all
		send, recv := make([][]T, n), make([][]T, n)
		for r := range n {
			send[r], recv[r] = fill[T](r, n*count), make([]T, n*count)
		}
		noErrors(t, each(comms, func(r int, c *ringo.Comm) error { return ringo.AllToAll(bg, c, send[r], recv[r]) }))
		for r := range n {
			for p := range n {
				require.Equal(t, send[p][r*count:(r+1)*count], recv[r][p*count:(p+1)*count], "%v alltoall rank %d block %d", typ, r, p)
			}
		}
		// gather and scatter to and from the last rank
		root := n - 1
		part := make([][]T, n)
		for r := range n {
			part[r] = fill[T](r+3, count)
		}
		all := make([]T, n*count)
		noErrors(t, each(comms, func(r int, c *ringo.Comm) error {
			var buf []T
			if r == root {
				buf = all
			}
			return ringo.Gather(bg, c, part[r], buf, root)
		}))
		for p := range n {
			require.Equal(t, part[p], all[p*count:(p+1)*count], "%v gather block %d", typ, p)
		}
		got := make([][]T, n)
		noErrors(t, each(comms, func(r int, c *ringo.Comm) error {
			got[r] = make([]T, count)
			var buf []T
			if r == root {
				buf = send[root]
			}
			return ringo.Scatter(bg, c, buf, got[r], root)
		}))
		for r := range n {
			require.Equal(t, send[root][r*count:(r+1)*count], got[r], "%v scatter rank %d", typ, r)
		}
		checkRootedInPlace(t, comms, part, send[root], root)
	}
	// all-to-allv: rank a sends (a+b)·k mod 5 elements to rank b (zeros
	// among them), packed in rank order with a gap of one element.
	cnt := func(a, b int) int { return (a + b*3) % 5 * 37 }
	sends, recvs := make([][]T, n), make([][]T, n)
	sc, sd, rc, rd := make([][]int, n), make([][]int, n), make([][]int, n), make([][]int, n)
	for r := range n {
		so, ro := 0, 0
		for p := range n {
			sc[r], sd[r] = append(sc[r], cnt(r, p)), append(sd[r], so+1)
			rc[r], rd[r] = append(rc[r], cnt(p, r)), append(rd[r], ro+1)
			so, ro = so+1+cnt(r, p), ro+1+cnt(p, r)
		}
		sends[r], recvs[r] = fill[T](r, so), make([]T, ro)
	}
	noErrors(t, each(comms, func(r int, c *ringo.Comm) error {
		return ringo.AllToAllV(bg, c, sends[r], sc[r], sd[r], recvs[r], rc[r], rd[r])
	}))
	for b := range n {
		for a := range n {
			require.Equal(t, sends[a][sd[a][b]:sd[a][b]+sc[a][b]], recvs[b][rd[b][a]:rd[b][a]+rc[b][a]], "%v alltoallv %d→%d", typ, a, b)
		}
	}
}

// checkRootedInPlace runs Gather and Scatter in place, as NCCL lays them
// out — the root's own block of its larger buffer is its send (gather) or
// recv (scatter) — part[r] being rank r's block and all the root's blocks
// to scatter, and checks them.
func checkRootedInPlace[T ringo.Elem](t *testing.T, comms []*ringo.Comm, part [][]T, all []T, root int) {
	t.Helper()
	n, count := len(comms), len(part[0])
	typ := ringo.TypeOf[T]()
	bufs := make([][]T, n)
	for r := range n {
		bufs[r] = make([]T, n*count)
		copy(bufs[r][r*count:], part[r])
	}
	block := func(r int) []T { return bufs[r][r*count : (r+1)*count] }
	noErrors(t, each(comms, func(r int, c *ringo.Comm) error { return ringo.Gather(bg, c, block(r), bufs[r], root) }))
	for p := range n {
		require.Equal(t, part[p], bufs[root][p*count:(p+1)*count], "%v in-place gather block %d", typ, p)
	}
	for r := range n {
		bufs[r] = make([]T, n*count)
	}
	copy(bufs[root], all)
	noErrors(t, each(comms, func(r int, c *ringo.Comm) error { return ringo.Scatter(bg, c, bufs[r], block(r), root) }))
	for r := range n {
		require.Equal(t, all[r*count:(r+1)*count], block(r), "%v in-place scatter rank %d", typ, r)
	}
}

// TestSendRecvNoComm: an op made without a communicator is refused.
func TestSendRecvNoComm(t *testing.T) {
	wantErr(t, ringo.SendRecv(bg, ringo.P2POp{}), ringo.ErrInvalidArgument, "op 0 has no communicator")
}

// TestSendTimesOut: a send whose receive never comes ends at the deadline
// with an error naming both ranks; a timed-out all-to-all's names the rank
// that never called it.
func TestSendTimesOut(t *testing.T) {
	comms := newComms(t, 2, &ringo.Config{Timeout: 200 * time.Millisecond})
	err := ringo.Send(bg, comms[0], make([]float32, ringo.DefaultLocalBuffSize/2), 1) // twice the FIFO: it cannot all go ahead
	wantErr(t, err, ringo.ErrTimeout, "send rank 0", "waiting for credit (peer rank 1)")

	comms = newComms(t, 3, &ringo.Config{Timeout: 200 * time.Millisecond})
	errs := each(comms, func(r int, c *ringo.Comm) error {
		return ringo.AllToAll(bg, c, make([]int32, 3000), make([]int32, 3000))
	}, 2)
	wantErr(t, errs[0], ringo.ErrTimeout, "alltoall", "never called it [2]")
}

// TestSendRecvSizesDiffer: a receive of other bytes than its send fails
// both ranks' communicators, naming both ranks and sizes, whichever calls
// first — never a hang or the wrong bytes (a send already done when the
// receive comes has returned; its communicator's error says it); an
// all-to-all whose counts disagree likewise.
func TestSendRecvSizesDiffer(t *testing.T) {
	for _, recvFirst := range []bool{false, true} {
		comms := newComms(t, 2, &ringo.Config{Timeout: 20 * time.Second})
		errs := make([]error, 2)
		var wg sync.WaitGroup
		wg.Add(1)
		send := func() { errs[0] = ringo.Send(bg, comms[0], make([]float32, 100), 1) }
		recv := func() { errs[1] = ringo.Recv(bg, comms[1], make([]float32, 60), 0) }
		first, second := send, recv
		if recvFirst {
			first, second = recv, send
		}
		go func() { defer wg.Done(); first() }()
		time.Sleep(10 * time.Millisecond) // which comes first changes who finds it; either order must fail both
		second()
		wg.Wait()
		for r, err := range errs {
			if err == nil { // a send the FIFO took whole ended before the receive came: the communicator says it
				err = comms[r].Err()
			}
			wantErr(t, err, ringo.ErrInvalidArgument, "rank 0's send #1 to rank 1 is 400 bytes, and rank 1's receive that matches it takes 240")
		}
	}

	comms := newComms(t, 2, &ringo.Config{Timeout: 20 * time.Second})
	errs := each(comms, func(r int, c *ringo.Comm) error {
		counts := []int{3, 3}
		if r == 1 {
			counts = []int{5, 3} // receives 5 from rank 0, which sends it 3
		}
		displs := []int{0, 8}
		buf := make([]int32, 16)
		return ringo.AllToAllV(bg, c, buf, []int{3, 3}, displs, make([]int32, 16), counts, displs)
	})
	for _, err := range errs {
		wantErr(t, err, ringo.ErrInvalidArgument, "rank 0's send #1 to rank 1 is 12 bytes, and rank 1's receive that matches it takes 20")
	}
}

// TestP2PChannels: a GPU communicator's channels per peer, a budget
// (NCCL_MAX_P2P_NCHANNELS, 32 by default) shared among the peers, a power
// of two, at least 2, at most the communicator's.
func TestP2PChannels(t *testing.T) {
	for _, c := range []struct{ n, channels, budget, want int }{
		{2, 64, 32, 32}, {2, 16, 32, 16}, {3, 64, 32, 16}, {4, 33, 32, 8}, {5, 64, 32, 8}, {8, 16, 32, 4}, {9, 64, 32, 4},
		{17, 64, 32, 2}, {64, 64, 32, 2}, {1000, 8, 32, 2}, {4, 1, 32, 1},
		{2, 64, 64, 64}, {3, 64, 64, 32}, {2, 48, 64, 48}, {2, 64, 1, 2}, {4, 64, 12, 4},
	} {
		assert.Equal(t, c.want, ringo.P2PChannels(c.n, c.channels, c.budget), "%d ranks, %d channels, budget %d", c.n, c.channels, c.budget)
	}
}

// TestP2PPlansCached: a communicator keeps its point-to-point plans by
// spec: calls of many sizes (past the cache's 256, so it starts over),
// each repeated, all deliver their own bytes.
func TestP2PPlansCached(t *testing.T) {
	comms := newComms(t, 2, nil)
	for i := range 600 {
		count := 1 + i%300
		send := fill[int32](i, count)
		got := make([]int32, count)
		noErrors(t, each(comms, func(r int, c *ringo.Comm) error {
			if r == 0 {
				return ringo.Send(bg, c, send, 1)
			}
			return ringo.Recv(bg, c, got, 0)
		}))
		require.Equal(t, send, got, "call %d", i)
	}
}
