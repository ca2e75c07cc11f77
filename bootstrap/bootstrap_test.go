package bootstrap

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"io"
	"net"
	"net/netip"
	"regexp"
	"runtime"
	"slices"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/ringo-ccl/ringo/internal/errs"
)

func testSecret(b byte) [32]byte {
	var s [32]byte
	for i := range s {
		s[i] = b + byte(i)
	}
	return s
}

// startTestRoot starts a root on loopback, stopped when the test ends.
func startTestRoot(t testing.TB) UniqueID {
	t.Helper()
	id, err := StartRoot("127.0.0.1:0", testSecret(1))
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { StopRoot(id) })
	return id
}

type joined struct {
	b   *Bootstrap
	err error
}

// joinAsync starts Join of rank on its own goroutine.
func joinAsync(ctx context.Context, id UniqueID, nranks, rank int) <-chan joined {
	c := make(chan joined, 1)
	go func() {
		b, err := Join(ctx, id, nranks, rank)
		c <- joined{b, err}
	}()
	return c
}

// joinRanks joins the given ranks of nranks concurrently and fails the test
// unless all succeed; they are closed when the test ends.
func joinRanks(t testing.TB, id UniqueID, nranks int, ranks ...int) []*Bootstrap {
	t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), time.Minute)
	defer cancel()
	cs := make([]<-chan joined, len(ranks))
	for i, r := range ranks {
		cs[i] = joinAsync(ctx, id, nranks, r)
	}
	return collect(t, cs...)
}

func collect(t testing.TB, cs ...<-chan joined) []*Bootstrap {
	t.Helper()
	bs := make([]*Bootstrap, len(cs))
	var failed []error
	for i, c := range cs {
		j := <-c
		if j.err != nil {
			failed = append(failed, j.err)
			continue
		}
		bs[i] = j.b
		t.Cleanup(func() { j.b.Close() })
	}
	if len(failed) > 0 {
		t.Fatalf("join: %v", failed)
	}
	return bs
}

// run calls f for every bootstrap on its own goroutine and returns the
// errors by rank.
func run(bs []*Bootstrap, f func(b *Bootstrap) error) []error {
	out := make([]error, len(bs))
	var wg sync.WaitGroup
	for i, b := range bs {
		wg.Go(func() { out[i] = f(b) })
	}
	wg.Wait()
	return out
}

// checkRing runs one AllGather on the full communicator bs and checks it.
func checkRing(t *testing.T, bs []*Bootstrap) {
	t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), time.Minute)
	defer cancel()
	for _, err := range run(bs, func(b *Bootstrap) error {
		got, err := b.AllGather(ctx, []byte{byte(b.Rank())})
		if err != nil {
			return err
		}
		for r, blob := range got {
			if !bytes.Equal(blob, []byte{byte(r)}) {
				return fmt.Errorf("rank %d got %v at %d", b.Rank(), blob, r)
			}
		}
		return nil
	}) {
		if err != nil {
			t.Fatal(err)
		}
	}
}

// rootOf returns the root of id that this process runs.
func rootOf(t *testing.T, id UniqueID) *rootServer {
	t.Helper()
	rootsMu.Lock()
	defer rootsMu.Unlock()
	r := roots[id]
	require.NotNil(t, r, "no root of %v runs here", id.Addr())
	return r
}

// waitJoined waits until the root of id has admitted n ranks. The root
// signals no admission, so it polls.
func waitJoined(t *testing.T, id UniqueID, n int) {
	t.Helper()
	r := rootOf(t, id)
	require.Eventually(t, func() bool {
		r.mu.Lock()
		defer r.mu.Unlock()
		return r.joined == n
	}, time.Minute, time.Millisecond, "the root never had %d ranks", n)
}

// waitGone waits until the root of id has taken rank's departure (a bye
// or a loss): the root signals each departure on its departed channel.
func waitGone(t *testing.T, id UniqueID, rank int) {
	t.Helper()
	r := rootOf(t, id)
	timeout := time.After(time.Minute)
	for {
		r.mu.Lock()
		gone := r.members[rank] != nil && r.members[rank].gone
		departed := r.departed
		r.mu.Unlock()
		if gone {
			return
		}
		select {
		case <-departed:
		case <-timeout:
			require.FailNow(t, "the root never took rank's departure", "rank %d", rank)
		}
	}
}

// waitInCall waits until b is inside a Join, AllGather or Barrier (it has
// registered the call's cancel function). The call signals nothing, so it
// polls.
func waitInCall(t *testing.T, b *Bootstrap) {
	t.Helper()
	require.Eventually(t, func() bool {
		b.mu.Lock()
		defer b.mu.Unlock()
		return b.cancelOp != nil
	}, time.Minute, time.Millisecond, "rank %d never entered its call", b.Rank())
}

// crash makes b's connections and listener close as when its process
// dies: no bye.
func crash(b *Bootstrap) {
	for _, c := range []net.Conn{b.root, b.next, b.prev} {
		if c != nil {
			c.Close()
		}
	}
	b.lis.ln.Close()
	b.peers.mu.Lock()
	for _, p := range b.peers.pairs {
		if p.conn != nil {
			p.conn.Close()
		}
	}
	b.peers.mu.Unlock()
}

// blobFor is rank's blob in round k: empty in some rounds, sizes and bytes
// distinct otherwise.
func blobFor(rank, k int) []byte {
	if (rank+k)%3 == 0 {
		return nil
	}
	b := make([]byte, 100*rank+k)
	for i := range b {
		b[i] = byte(i*31 + rank*7 + k)
	}
	return b
}

func TestJoinAllGatherBarrier(t *testing.T) {
	t.Parallel()
	for _, n := range []int{1, 2, 5} {
		t.Run(fmt.Sprint(n), func(t *testing.T) {
			id, err := NewUniqueID()
			if err != nil {
				t.Fatal(err)
			}
			t.Cleanup(func() { StopRoot(id) })
			ranks := make([]int, n)
			for i := range ranks {
				ranks[i] = i
			}
			bs := joinRanks(t, id, n, ranks...)
			ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
			defer cancel()
			for _, err := range run(bs, func(b *Bootstrap) error {
				if b.Rank() < 0 || b.Size() != n {
					return fmt.Errorf("rank %d size %d", b.Rank(), b.Size())
				}
				for k := range 4 {
					got, err := b.AllGather(ctx, blobFor(b.Rank(), k))
					if err != nil {
						return err
					}
					if len(got) != n {
						return fmt.Errorf("round %d: %d blobs", k, len(got))
					}
					for r := range n {
						if !bytes.Equal(got[r], blobFor(r, k)) {
							return fmt.Errorf("rank %d round %d: blob of rank %d is %d bytes, want %d", b.Rank(), k, r, len(got[r]), len(blobFor(r, k)))
						}
					}
					if err := b.Barrier(ctx); err != nil {
						return err
					}
				}
				// Full-size blobs from everyone at once must not deadlock the ring.
				big := bytes.Repeat([]byte{byte(b.Rank())}, maxBlobBytes)
				got, err := b.AllGather(ctx, big)
				if err != nil {
					return err
				}
				for r := range n {
					if len(got[r]) != maxBlobBytes || got[r][0] != byte(r) || got[r][maxBlobBytes-1] != byte(r) {
						return fmt.Errorf("rank %d: 1 MiB blob of rank %d wrong", b.Rank(), r)
					}
				}
				return nil
			}) {
				if err != nil {
					t.Fatal(err)
				}
			}
			// Rank identities: each rank appears once.
			seen := map[int]bool{}
			for _, b := range bs {
				seen[b.Rank()] = true
			}
			if len(seen) != n {
				t.Fatalf("ranks %v", seen)
			}
		})
	}
}

// TestBarrierWaitsForLast: no rank leaves a barrier before the last one
// enters it. Rank 2 enters only once ranks 0 and 1 are inside theirs, and
// marks its entry first; ranks 0 and 1 must find the mark when they leave.
func TestBarrierWaitsForLast(t *testing.T) {
	t.Parallel()
	id := startTestRoot(t)
	bs := joinRanks(t, id, 3, 0, 1, 2)
	ctx, cancel := context.WithTimeout(context.Background(), time.Minute)
	defer cancel()
	var entered atomic.Bool
	var sawEntry [2]bool
	errc := make(chan error, 2)
	for r := range 2 {
		go func() {
			err := bs[r].Barrier(ctx)
			sawEntry[r] = entered.Load()
			errc <- err
		}()
	}
	waitInCall(t, bs[0])
	waitInCall(t, bs[1])
	entered.Store(true)
	require.NoError(t, bs[2].Barrier(ctx))
	for range 2 {
		require.NoError(t, <-errc)
	}
	for r, saw := range sawEntry {
		assert.True(t, saw, "rank %d left the barrier before rank 2 entered it", r)
	}
}

func TestAllGatherMisuse(t *testing.T) {
	t.Parallel()
	id := startTestRoot(t)
	bs := joinRanks(t, id, 2, 0, 1)
	ctx, cancel := context.WithTimeout(context.Background(), time.Minute)
	defer cancel()
	if _, err := bs[0].AllGather(ctx, make([]byte, maxBlobBytes+1)); !errors.Is(err, errs.ErrInvalidArgument) {
		t.Fatalf("oversized blob: %v", err)
	}
	// Rank 0 gathers while rank 1 waits at a barrier.
	errs2 := run(bs, func(b *Bootstrap) error {
		if b.Rank() == 0 {
			_, err := b.AllGather(ctx, []byte("x"))
			return err
		}
		return b.Barrier(ctx)
	})
	for r, err := range errs2 {
		if !errors.Is(err, errs.ErrInvalidArgument) || !strings.Contains(err.Error(), "different orders") {
			t.Errorf("rank %d: %v, want a mismatch error", r, err)
		}
	}
	// The ring is out of step now: later calls fail at once.
	if err := bs[0].Barrier(ctx); err == nil || !strings.Contains(err.Error(), "earlier") {
		t.Fatalf("call after a failed one: %v", err)
	}
}

func TestUseAfterClose(t *testing.T) {
	t.Parallel()
	id := startTestRoot(t)
	bs := joinRanks(t, id, 1, 0)
	bs[0].Close()
	bs[0].Close()
	if err := bs[0].Barrier(context.Background()); !errors.Is(err, errs.ErrAborted) {
		t.Fatalf("barrier after Close: %v", err)
	}
	if err, ok := <-bs[0].PeerLost(); ok || err != nil {
		t.Fatalf("PeerLost after a clean Close delivered %v", err)
	}
}

func TestRefuseWrongSecret(t *testing.T) {
	t.Parallel()
	id := startTestRoot(t)
	ctx, cancel := context.WithTimeout(context.Background(), time.Minute)
	defer cancel()
	c0, c1 := joinAsync(ctx, id, 2, 0), joinAsync(ctx, id, 2, 1)
	a, _ := id.addrPort()
	_, err := Join(ctx, newUniqueID(a, testSecret(99)), 2, 1)
	if !errors.Is(err, errs.ErrInvalidArgument) || !strings.Contains(err.Error(), "wrong secret") {
		t.Fatalf("wrong secret: %v", err)
	}
	checkRing(t, collect(t, c0, c1))
}

func TestRefuseDuplicateRank(t *testing.T) {
	t.Parallel()
	id := startTestRoot(t)
	ctx, cancel := context.WithTimeout(context.Background(), time.Minute)
	defer cancel()
	c0, c1 := joinAsync(ctx, id, 3, 0), joinAsync(ctx, id, 3, 1)
	waitJoined(t, id, 2)
	_, err := Join(ctx, id, 3, 1)
	if !errors.Is(err, errs.ErrInvalidArgument) || !strings.Contains(err.Error(), "duplicate rank 1") {
		t.Fatalf("duplicate rank: %v", err)
	}
	checkRing(t, collect(t, c0, c1, joinAsync(ctx, id, 3, 2)))
}

func TestRefuseRankOutOfRange(t *testing.T) {
	t.Parallel()
	id := startTestRoot(t)
	ctx, cancel := context.WithTimeout(context.Background(), time.Minute)
	defer cancel()
	c0 := joinAsync(ctx, id, 2, 0)
	for _, c := range []struct{ nranks, rank int }{{2, 2}, {2, -1}, {0, 0}} {
		if _, err := Join(ctx, id, c.nranks, c.rank); !errors.Is(err, errs.ErrInvalidArgument) || !strings.Contains(err.Error(), "out of range") {
			t.Errorf("Join(nranks %d, rank %d): %v", c.nranks, c.rank, err)
		}
	}
	// The root checks too, for hellos that do not come from Join.
	t2, p := rawExchange(t, id.Addr(), frameHello, appendHello(nil, hello{secret: id.secret(), rank: 5, nranks: 2, ring: loopbackPort(9)}))
	if t2 != frameRefuse || !strings.Contains(string(p), "rank 5 out of range [0, 2)") {
		t.Fatalf("raw hello of rank 5 of 2: %v %q", t2, p)
	}
	checkRing(t, collect(t, c0, joinAsync(ctx, id, 2, 1)))
}

func TestRefuseNranksMismatch(t *testing.T) {
	t.Parallel()
	id := startTestRoot(t)
	ctx, cancel := context.WithTimeout(context.Background(), time.Minute)
	defer cancel()
	c0 := joinAsync(ctx, id, 2, 0)
	waitJoined(t, id, 1)
	_, err := Join(ctx, id, 3, 1)
	if !errors.Is(err, errs.ErrInvalidArgument) || !strings.Contains(err.Error(), "nranks 3 differs from the 2") {
		t.Fatalf("nranks mismatch: %v", err)
	}
	checkRing(t, collect(t, c0, joinAsync(ctx, id, 2, 1)))
}

func TestRefuseGarbage(t *testing.T) {
	t.Parallel()
	id := startTestRoot(t)
	ctx, cancel := context.WithTimeout(context.Background(), time.Minute)
	defer cancel()
	c0 := joinAsync(ctx, id, 2, 0)
	cases := []struct {
		name, send, want string
	}{
		{"http", "GET / HTTP/1.0\r\n\r\n", "expected a hello, got a frame type 0x47 frame"},
		{"oversized hello", "\x01\x40\x00\x00\x00", "hello of 1073741824 bytes, want 58"},
		{"gather header", "\x09\x00\x10\x00\x0c\x00\x00", "expected a hello, got a gather frame"},
		{"wrong secret", "\x01\x00\x00\x00\x3a" + strings.Repeat("x", helloLen), "wrong secret"},
		{"short hello", "\x01\x00\x00\x00\x03abc", "hello of 3 bytes"},
		{"not a hello", "\x06\x00\x00\x00\x00", "expected a hello, got a bye frame"},
	}
	for _, c := range cases {
		conn, err := net.Dial("tcp", id.Addr())
		if err != nil {
			t.Fatal(err)
		}
		conn.SetDeadline(time.Now().Add(time.Minute))
		io.WriteString(conn, c.send)
		typ, p, err := readFrame(conn)
		conn.Close()
		if err != nil || typ != frameRefuse || !strings.Contains(string(p), c.want) {
			t.Errorf("%s: %v %q %v, want a refusal containing %q", c.name, typ, p, err, c.want)
		}
	}
	checkRing(t, collect(t, c0, joinAsync(ctx, id, 2, 1)))
}

func TestSilentClientBlocksNobody(t *testing.T) {
	t.Parallel()
	id := startTestRoot(t)
	silent, err := net.Dial("tcp", id.Addr())
	if err != nil {
		t.Fatal(err)
	}
	defer silent.Close()
	bs := joinRanks(t, id, 3, 0, 1, 2)
	checkRing(t, bs)
	for _, b := range bs {
		b.Close()
	}
	// The root stopped with its last rank and closed the silent connection.
	silent.SetReadDeadline(time.Now().Add(time.Minute))
	if _, err := silent.Read(make([]byte, 1)); !errors.Is(err, io.EOF) {
		t.Fatalf("silent connection after the root stopped: %v, want EOF", err)
	}
}

// TestRingListenerRefusesStrangers plays rank 0 of 3 by hand and knocks on
// rank 1's ring listener with a wrong secret, the wrong rank and silence
// before connecting properly; ranks 1 and 2 form the ring regardless.
func TestRingListenerRefusesStrangers(t *testing.T) {
	t.Parallel()
	id := startTestRoot(t)
	ctx, cancel := context.WithTimeout(context.Background(), time.Minute)
	defer cancel()
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	defer ln.Close()
	me := ln.Addr().(*net.TCPAddr).AddrPort()
	root, err := net.Dial("tcp", id.Addr())
	if err != nil {
		t.Fatal(err)
	}
	defer root.Close()
	root.SetDeadline(time.Now().Add(time.Minute))
	if err := writeFrame(root, frameHello, appendHello(nil, hello{secret: id.secret(), rank: 0, nranks: 3, ring: me})); err != nil {
		t.Fatal(err)
	}
	c1, c2 := joinAsync(ctx, id, 3, 1), joinAsync(ctx, id, 3, 2)
	var table []netip.AddrPort
	for table == nil {
		typ, p, err := readFrame(root)
		if err != nil {
			t.Fatal(err)
		}
		if typ == frameTable {
			if table, err = decodeTable(p); err != nil {
				t.Fatal(err)
			}
		}
	}
	silent, err := net.Dial("tcp", table[1].String())
	if err != nil {
		t.Fatal(err)
	}
	defer silent.Close()
	knocks := []struct {
		h    hello
		want string
	}{
		{hello{secret: testSecret(7), rank: 0, nranks: 3, ring: me}, "wrong secret"},
		{hello{secret: id.secret(), rank: 2, nranks: 3, ring: me}, "rank 2 is not the ring predecessor of rank 1"},
		{hello{secret: id.secret(), rank: 0, nranks: 4, ring: me}, "nranks 4 differs"},
	}
	for _, k := range knocks {
		typ, p := rawExchange(t, table[1].String(), frameRingHello, appendHello(nil, k.h))
		if typ != frameRefuse || !strings.Contains(string(p), k.want) {
			t.Errorf("ring hello %+v: %v %q, want a refusal containing %q", k.h, typ, p, k.want)
		}
	}
	next, err := net.Dial("tcp", table[1].String())
	if err != nil {
		t.Fatal(err)
	}
	defer next.Close()
	next.SetDeadline(time.Now().Add(time.Minute))
	writeFrame(next, frameRingHello, appendHello(nil, hello{secret: id.secret(), rank: 0, nranks: 3, ring: me}))
	if typ, _, err := readFrame(next); typ != frameAccept || err != nil {
		t.Fatalf("proper ring hello: %v %v", typ, err)
	}
	prev, err := ln.Accept()
	if err != nil {
		t.Fatal(err)
	}
	defer prev.Close()
	prev.SetDeadline(time.Now().Add(time.Minute))
	typ, p, err := readFrame(prev)
	if err != nil || typ != frameRingHello {
		t.Fatalf("rank 2's ring hello: %v %v", typ, err)
	}
	if h, err := decodeHello(p); err != nil || h.rank != 2 || h.secret != id.secret() {
		t.Fatalf("rank 2's ring hello: %+v %v", h, err)
	}
	writeFrame(prev, frameAccept)
	collect(t, c1, c2)
	// Rank 1's listener refused the silent connection after helloDeadline,
	// and closed it.
	silent.SetReadDeadline(time.Now().Add(time.Minute))
	typ, p, err = readFrame(silent)
	if err != nil || typ != frameRefuse || !strings.Contains(string(p), "no valid hello") {
		t.Fatalf("silent connection: %v %q %v, want a refusal", typ, p, err)
	}
	if _, err := silent.Read(make([]byte, 1)); !errors.Is(err, io.EOF) {
		t.Fatalf("silent connection after its refusal: %v, want EOF", err)
	}
}

func TestJoinRootNeverAnswers(t *testing.T) {
	t.Parallel()
	addr := reservePort(t)
	ctx, cancel := context.WithTimeout(context.Background(), 300*time.Millisecond)
	defer cancel()
	start := time.Now()
	_, err := Join(ctx, newUniqueID(addr, testSecret(1)), 2, 0)
	if el := time.Since(start); el > 10*time.Second { // generous: a busy machine; a Join deaf to ctx takes minutes
		t.Errorf("Join took %v past a 300 ms deadline", el)
	}
	if !errors.Is(err, errs.ErrTimeout) || !strings.Contains(err.Error(), addr.String()) {
		t.Fatalf("%v, want a timeout naming %v", err, addr)
	}
}

func TestJoinMissingRank(t *testing.T) {
	t.Parallel()
	id := startTestRoot(t)
	ctx, cancel := context.WithTimeout(context.Background(), 600*time.Millisecond)
	defer cancel()
	start := time.Now()
	cs := []<-chan joined{joinAsync(ctx, id, 3, 0), joinAsync(ctx, id, 3, 1)}
	list := regexp.MustCompile(`ranks \[([0-9 ]*)\] never joined`)
	for r, c := range cs {
		j := <-c
		if !errors.Is(j.err, errs.ErrTimeout) {
			t.Fatalf("rank %d: %v, want a timeout", r, j.err)
		}
		m := list.FindStringSubmatch(j.err.Error())
		if m == nil || !strings.Contains(" "+m[1]+" ", " 2 ") {
			t.Fatalf("rank %d: %v, want it to name rank 2 as never joined", r, j.err)
		}
	}
	if el := time.Since(start); el > 10*time.Second { // generous: a busy machine
		t.Errorf("Joins took %v past a 600 ms deadline", el)
	}
}

func TestStartRootPortTaken(t *testing.T) {
	t.Parallel()
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	defer ln.Close()
	id, err := StartRoot(ln.Addr().String(), testSecret(1))
	if err == nil {
		StopRoot(id)
		t.Fatal("StartRoot on a taken port succeeded")
	}
	if !strings.Contains(err.Error(), "address already in use") {
		t.Fatalf("%v, want it to say the address is in use", err)
	}
	if _, err := StartRoot("127.0.0.1", testSecret(1)); !errors.Is(err, errs.ErrInvalidArgument) {
		t.Fatalf("address without a port: %v", err)
	}
}

func TestRankDiesDuringSetup(t *testing.T) {
	t.Parallel()
	id := startTestRoot(t)
	ctx, cancel := context.WithTimeout(context.Background(), time.Minute)
	defer cancel()
	cs := []<-chan joined{joinAsync(ctx, id, 3, 0), joinAsync(ctx, id, 3, 1)}
	waitJoined(t, id, 2)
	// Rank 2 joins, then its process dies: its connection closes without bye.
	c, err := net.Dial("tcp", id.Addr())
	if err != nil {
		t.Fatal(err)
	}
	writeFrame(c, frameHello, appendHello(nil, hello{secret: id.secret(), rank: 2, nranks: 3, ring: loopbackPort(9)}))
	waitJoined(t, id, 3)
	start := time.Now()
	c.Close()
	for r, ch := range cs {
		j := <-ch
		if !errors.Is(j.err, errs.ErrPeerLost) || !strings.Contains(j.err.Error(), "rank 2 lost") {
			t.Fatalf("rank %d: %v, want rank 2 lost", r, j.err)
		}
	}
	if el := time.Since(start); el > 10*time.Second { // not the Joins' deadline: the root reported it
		t.Errorf("the loss took %v to be reported", el)
	}
	// Ranks 0 and 1 left on failing, so the root has stopped.
	rootsMu.Lock()
	_, running := roots[id]
	rootsMu.Unlock()
	if running {
		t.Fatal("the root still runs after its every rank left or was lost")
	}
}

// TestRefuseAfterLoss: once a rank died before the communicator formed, a
// rank joining late is told so.
func TestRefuseAfterLoss(t *testing.T) {
	t.Parallel()
	id := startTestRoot(t)
	dialHello := func(rank uint32) net.Conn {
		c, err := net.Dial("tcp", id.Addr())
		if err != nil {
			t.Fatal(err)
		}
		c.SetDeadline(time.Now().Add(time.Minute))
		writeFrame(c, frameHello, appendHello(nil, hello{secret: id.secret(), rank: rank, nranks: 3, ring: loopbackPort(9)}))
		if typ, _, err := readFrame(c); typ != frameStatus || err != nil {
			t.Fatalf("rank %d: %v %v, want a status", rank, typ, err)
		}
		return c
	}
	r0 := dialHello(0)
	defer r0.Close()
	dialHello(1).Close()
	for {
		typ, p, err := readFrame(r0)
		if err != nil {
			t.Fatal(err)
		}
		if typ == frameLost {
			if rank, _, err := decodeLost(p); rank != 1 || err != nil {
				t.Fatalf("lost frame names rank %d (%v)", rank, err)
			}
			break
		}
	}
	typ, p := rawExchange(t, id.Addr(), frameHello, appendHello(nil, hello{secret: id.secret(), rank: 1, nranks: 3, ring: loopbackPort(9)}))
	code, reason, err := decodeRefuse(p)
	if typ != frameRefuse || err != nil || code != refusePeerLost || !strings.Contains(reason, "rank 1 lost") {
		t.Fatalf("late hello: %v code %d %q %v", typ, code, reason, err)
	}
}

func TestRankDiesAfterSetup(t *testing.T) {
	t.Parallel()
	id := startTestRoot(t)
	bs := joinRanks(t, id, 3, 0, 1, 2)
	start := time.Now()
	crash(bs[1])
	for _, r := range []int{0, 2} {
		select {
		case err := <-bs[r].PeerLost():
			if !errors.Is(err, errs.ErrPeerLost) || !strings.Contains(err.Error(), "rank 1 lost: its bootstrap connection closed without Close") {
				t.Fatalf("rank %d: %v", r, err)
			}
		case <-time.After(time.Minute):
			t.Fatalf("rank %d never learned of rank 1's loss", r)
		}
	}
	if el := time.Since(start); el > 5*time.Second { // from the closed connections, not keepalives (≥ 6 s)
		t.Errorf("the loss took %v to be reported", el)
	}
	if _, ok := <-bs[0].PeerLost(); ok {
		t.Fatal("PeerLost delivered twice")
	}
	if _, err := bs[0].AllGather(context.Background(), nil); !errors.Is(err, errs.ErrPeerLost) {
		t.Fatalf("AllGather after a loss: %v", err)
	}
}

// TestLossEndsAllGather: a rank waiting in AllGather for a peer that dies
// returns ErrPeerLost instead of waiting for its context.
func TestLossEndsAllGather(t *testing.T) {
	t.Parallel()
	id := startTestRoot(t)
	bs := joinRanks(t, id, 4, 0, 1, 2, 3)
	res := make(chan error, 1)
	go func() {
		_, err := bs[0].AllGather(context.Background(), []byte("x"))
		res <- err
	}()
	waitInCall(t, bs[0])
	crash(bs[2])
	select {
	case err := <-res:
		assert.ErrorIs(t, err, errs.ErrPeerLost)
	case <-time.After(time.Minute):
		require.FailNow(t, "AllGather kept waiting after a loss")
	}
}

func TestRootLost(t *testing.T) {
	t.Parallel()
	id := startTestRoot(t)
	bs := joinRanks(t, id, 2, 0, 1)
	StopRoot(id)
	for r, b := range bs {
		select {
		case err := <-b.PeerLost():
			if !errors.Is(err, errs.ErrPeerLost) || !strings.Contains(err.Error(), "bootstrap root at "+id.Addr()+" lost") {
				t.Fatalf("rank %d: %v", r, err)
			}
		case <-time.After(time.Minute):
			t.Fatalf("rank %d never learned of the root's loss", r)
		}
	}
}

// TestCloseStopsRootAndGoroutines runs a whole cycle and checks that the
// root stops with its last rank and that no goroutine survives. It must not
// run in parallel with other tests.
func TestCloseStopsRootAndGoroutines(t *testing.T) {
	before := runtime.NumGoroutine()
	id, err := StartRoot("127.0.0.1:0", testSecret(3))
	if err != nil {
		t.Fatal(err)
	}
	ctx, cancel := context.WithTimeout(context.Background(), time.Minute)
	defer cancel()
	var cs []<-chan joined
	for r := range 3 {
		cs = append(cs, joinAsync(ctx, id, 3, r))
	}
	var bs []*Bootstrap
	for _, c := range cs {
		j := <-c
		if j.err != nil {
			t.Fatal(j.err)
		}
		bs = append(bs, j.b)
	}
	checkRing(t, bs)
	for _, b := range bs {
		if err := b.Close(); err != nil {
			t.Fatal(err)
		}
	}
	if c, err := net.Dial("tcp", id.Addr()); err == nil {
		c.Close()
		t.Fatal("the root still accepts connections after every rank closed")
	}
	rootsMu.Lock()
	_, running := roots[id]
	rootsMu.Unlock()
	if running {
		t.Fatal("the root is still registered")
	}
	waitGoroutines(t, before)
}

// rawExchange sends one frame to addr and returns the reply frame.
func rawExchange(t *testing.T, addr string, typ frameType, payload []byte) (frameType, []byte) {
	t.Helper()
	c, err := net.Dial("tcp", addr)
	if err != nil {
		t.Fatal(err)
	}
	defer c.Close()
	c.SetDeadline(time.Now().Add(time.Minute))
	if err := writeFrame(c, typ, payload); err != nil {
		t.Fatal(err)
	}
	rt, p, err := readFrame(c)
	if err != nil {
		t.Fatal(err)
	}
	return rt, p
}

func loopbackPort(port uint16) netip.AddrPort {
	return netip.AddrPortFrom(netip.MustParseAddr("127.0.0.1"), port)
}

// reservePort returns a loopback address where nothing listens and that
// nothing else picks while the test runs (so that tests running in
// parallel cannot take it): a connection accepted on it keeps it bound after
// its listener closes. Listen (which sets SO_REUSEADDR) can still bind it.
func reservePort(t *testing.T) netip.AddrPort {
	t.Helper()
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	defer ln.Close()
	c, err := net.Dial("tcp", ln.Addr().String())
	if err != nil {
		t.Fatal(err)
	}
	a, err := ln.Accept()
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { c.Close(); a.Close() })
	return ln.Addr().(*net.TCPAddr).AddrPort()
}

// TestQueryProgress: a rank's Query returns every rank's progress as each
// set it — answered by the ranks' background readers while the ranks
// themselves do nothing — and a closed rank as Gone.
func TestQueryProgress(t *testing.T) {
	id := startTestRoot(t)
	bs := joinRanks(t, id, 4, 0, 1, 2, 3)
	bs[0].SetProgress(7, false)
	bs[1].SetProgress(7, true)
	bs[2].SetProgress(6, true)
	bs[3].Close()
	waitGone(t, id, 3)
	ctx, cancel := context.WithTimeout(context.Background(), time.Minute)
	defer cancel()
	assert.Equal(t, []Progress{{0, Inside, 7}, {1, Finished, 7}, {2, Finished, 6}, {3, Gone, 0}}, queryAll(t, ctx, bs[2]))
	// Again, from another rank: queries do not disturb each other.
	bs[1].SetProgress(8, false)
	ps := queryAll(t, ctx, bs[0])
	require.Len(t, ps, 4)
	assert.Equal(t, Progress{1, Inside, 8}, ps[1])
}

// queryAll queries through b until no rank is Silent (on a loaded machine
// an answer may miss the root's one-second wait), or ctx ends.
func queryAll(t *testing.T, ctx context.Context, b *Bootstrap) []Progress {
	t.Helper()
	for {
		ps, err := b.Query(ctx)
		require.NoError(t, err)
		if !slices.ContainsFunc(ps, func(p Progress) bool { return p.State == Silent }) {
			return ps
		}
	}
}

// TestCloseAwaitsOtherProcesses: the Close of a rank whose process runs the
// root returns only once the ranks of other processes have left (rank 1,
// played by hand here, stands for one), so that the root outlives their
// last collective; ranks of its own process it does not wait for.
func TestCloseAwaitsOtherProcesses(t *testing.T) {
	t.Parallel()
	for _, bye := range []bool{true, false} { // rank 1 leaves, or dies
		id := startTestRoot(t)
		ctx, cancel := context.WithTimeout(context.Background(), time.Minute)
		defer cancel()
		ln, err := net.Listen("tcp", "127.0.0.1:0")
		require.NoError(t, err)
		defer ln.Close()
		me := ln.Addr().(*net.TCPAddr).AddrPort()
		c0 := joinAsync(ctx, id, 2, 0)

		// Rank 1: hello, the table, then the ring both ways.
		root, err := net.Dial("tcp", id.Addr())
		require.NoError(t, err)
		defer root.Close()
		require.NoError(t, writeFrame(root, frameHello, appendHello(nil, hello{secret: id.secret(), rank: 1, nranks: 2, ring: me})))
		var table []netip.AddrPort
		for table == nil {
			typ, p, err := readFrame(root)
			require.NoError(t, err)
			if typ == frameTable {
				table, err = decodeTable(p)
				require.NoError(t, err)
			}
		}
		next, err := net.Dial("tcp", table[0].String())
		require.NoError(t, err)
		defer next.Close()
		require.NoError(t, writeFrame(next, frameRingHello, appendHello(nil, hello{secret: id.secret(), rank: 1, nranks: 2, ring: me})))
		prev, err := ln.Accept()
		require.NoError(t, err)
		defer prev.Close()
		typ, _, err := readFrame(prev)
		require.NoError(t, err)
		require.Equal(t, frameRingHello, typ)
		require.NoError(t, writeFrame(prev, frameAccept))
		b0 := collect(t, c0)[0]

		closed := make(chan struct{})
		go func() {
			b0.Close()
			close(closed)
		}()
		select {
		case <-closed:
			t.Fatal("rank 0's Close returned while rank 1, of another process, was connected")
		case <-time.After(200 * time.Millisecond):
		}
		left := time.Now()
		if bye {
			require.NoError(t, writeFrame(root, frameBye))
		} else {
			root.Close()
		}
		select {
		case <-closed:
		case <-time.After(rootLinger):
			t.Fatalf("rank 0's Close still waits %v after rank 1 left", rootLinger)
		}
		assert.Less(t, time.Since(left), rootLinger/2, "rank 0's Close waited on after rank 1 left (bye %v)", bye)
	}
}
