package transport

import (
	"bytes"
	"context"
	"encoding/binary"
	"errors"
	"fmt"
	"hash/crc32"
	"net"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/ringo-ccl/ringo/bootstrap"
	"github.com/ringo-ccl/ringo/internal/errs"
	"github.com/ringo-ccl/ringo/ring"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// netSizes have Simple slots of 96 KiB, so a two-slot post (192 KiB) is
// striped over three sockets, and small LL slots.
var netSizes = Sizes{Simple: ring.NSteps * 96 << 10, LL: ring.NSteps * 512}

// netRing connects n ranks in a ring through the socket transport, every
// connection on nsock sockets; fails[r] collects rank r's failures.
func netRing(t *testing.T, n, nch, nsock int) (nets []*Net, fails []chan error) {
	return netRingB(t, n, nch, nsock, nil)
}

// netRingB is netRing for tests and benchmarks; wrap, if not nil, may
// replace each rank's wires before its Net is made over them.
func netRingB(t testing.TB, n, nch, nsock int, wrap func(r int, sends []SendWire, recvs []RecvWire)) (nets []*Net, fails []chan error) {
	t.Helper()
	bs := joinAll(t, n)
	nets, fails = make([]*Net, n), make([]chan error, n)
	errc := make([]error, n)
	var wg sync.WaitGroup
	for r := range n {
		fails[r] = make(chan error, 2*nch)
		wg.Add(1)
		go func() {
			defer wg.Done()
			ctx, cancel := context.WithTimeout(context.Background(), 20*time.Second)
			defer cancel()
			prev, next := (r+n-1)%n, (r+1)%n
			var se, re []Edge
			for ch := range nch {
				se, re = append(se, Edge{r, next, ch}), append(re, Edge{prev, r, ch})
			}
			sends, recvs, err := ConnectSockets(ctx, bs[r], se, re, nsock)
			if err != nil {
				errc[r] = err
				return
			}
			if wrap != nil {
				wrap(r, sends, recvs)
			}
			sc, _ := NetConns(NetMem(nch, netSizes), netSizes)
			rc, _ := NetConns(NetMem(nch, netSizes), netSizes)
			var ends []NetEnd
			for ch := range nch {
				ends = append(ends, NetEnd{Edge: se[ch], Conn: sc[ch], Send: sends[ch]}, NetEnd{Edge: re[ch], Conn: rc[ch], Recv: recvs[ch]})
			}
			nets[r], errc[r] = NewNet(r, ends, func(err error) { fails[r] <- err }, nil)
		}()
	}
	wg.Wait()
	for r, err := range errc {
		if err != nil {
			t.Fatalf("rank %d: %v", r, err)
		}
	}
	t.Cleanup(func() {
		for _, x := range nets {
			x.Close()
		}
	})
	return nets, fails
}

// joinAll joins the n ranks of a fresh communicator whose root listens on
// loopback, all at once, and fails the test unless all succeed; they are
// closed when the test ends.
func joinAll(t testing.TB, n int) []*bootstrap.Bootstrap {
	t.Helper()
	id, err := bootstrap.StartRoot("127.0.0.1:0", [32]byte{'n', 'e', 't'})
	require.NoError(t, err)
	t.Cleanup(func() { bootstrap.StopRoot(id) })
	ctx, cancel := context.WithTimeout(context.Background(), time.Minute)
	defer cancel()
	bs := make([]*bootstrap.Bootstrap, n)
	errc := make([]error, n)
	var wg sync.WaitGroup
	for r := range n {
		wg.Go(func() { bs[r], errc[r] = bootstrap.Join(ctx, id, n, r) })
	}
	wg.Wait()
	for r, b := range bs {
		if b != nil {
			t.Cleanup(func() { b.Close() })
		}
		require.NoError(t, errc[r], "rank %d", r)
	}
	return bs
}

// TestNetNoAllocation: a post's round trip through both proxies and the
// socket wire allocates nothing.
func TestNetNoAllocation(t *testing.T) {
	nets, _ := netRing(t, 2, 1, 3)
	send, _ := nets[0].Conn(context.Background(), 0, 1, 0)
	recv, _ := nets[1].Conn(context.Background(), 0, 1, 0)
	var w Waiter
	w.Reset(context.Background(), 10*time.Second)
	var step uint64
	nb := 2 * netSizes.Simple / ring.NSteps // striped
	round := func() {
		if err := send.WaitCredit(step, 2, &w); err != nil {
			t.Fatal(err)
		}
		send.PostSimple(step, step+2, nb)
		if err := recv.WaitData(step+2, &w); err != nil {
			t.Fatal(err)
		}
		step += 2
		recv.PostHead(step)
	}
	round()
	if a := testing.AllocsPerRun(200, round); a > 0 {
		t.Errorf("%v allocations per post", a)
	}
}

// TestNetPeerGone: when a rank's process dies (its sockets close without
// a goodbye), its neighbours' proxies report it, naming the rank and the
// lost peer.
func TestNetPeerGone(t *testing.T) {
	nets, fails := netRing(t, 3, 2, 2)
	for _, s := range nets[1].sends {
		closeAll(s.w.(*sockSend).socks)
	}
	for _, r := range nets[1].recvs {
		closeAll(r.w.(*sockRecv).socks)
	}
	for _, r := range []int{0, 2} {
		select {
		case err := <-fails[r]:
			if !errors.Is(err, errs.ErrPeerLost) || !strings.Contains(err.Error(), "rank 1") {
				t.Errorf("rank %d: %v, want a lost peer naming rank 1", r, err)
			}
		case <-time.After(time.Minute):
			t.Fatalf("rank %d never noticed rank 1 was gone", r)
		}
	}
}

// TestNetCloseIsQuiet: a rank that closes says goodbye; its neighbours'
// proxies, which were reading from it (rank 0's credit reader, rank 2's
// post reader, on each channel), end on ErrWireClosed, which they do not
// report, and no proxy reports a failure.
func TestNetCloseIsQuiet(t *testing.T) {
	const nch = 2
	ended := make(chan error, 2*nch) // the first error of each watched read
	nets, fails := netRingB(t, 3, nch, 2, func(r int, sends []SendWire, recvs []RecvWire) {
		switch r {
		case 0: // sends to rank 1
			for i, w := range sends {
				sends[i] = &watchedSend{SendWire: w, ended: ended}
			}
		case 2: // receives from rank 1
			for i, w := range recvs {
				recvs[i] = &watchedRecv{RecvWire: w, ended: ended}
			}
		}
	})
	require.NoError(t, nets[1].Close())
	for range 2 * nch {
		select {
		case err := <-ended:
			assert.ErrorIs(t, err, ErrWireClosed)
		case <-time.After(time.Minute):
			require.FailNow(t, "a neighbour's proxy never saw rank 1's goodbye")
		}
	}
	// Every proxy has ended once its Net is closed: any report is in.
	require.NoError(t, nets[0].Close())
	require.NoError(t, nets[2].Close())
	for r, f := range fails {
		select {
		case err := <-f:
			assert.NoError(t, err, "rank %d reported a failure", r)
		default:
		}
	}
}

// watchedSend passes on the first error its Credit returns (its proxy
// ends on it).
type watchedSend struct {
	SendWire
	ended chan<- error
	once  sync.Once
}

func (w *watchedSend) Credit() (uint64, error) {
	h, err := w.SendWire.Credit()
	if err != nil {
		w.once.Do(func() { w.ended <- err })
	}
	return h, err
}

// watchedRecv passes on the first error its Recv returns.
type watchedRecv struct {
	RecvWire
	ended chan<- error
	once  sync.Once
}

func (w *watchedRecv) Recv(place func(Post) ([]byte, error)) (Post, error) {
	p, err := w.RecvWire.Recv(place)
	if err != nil {
		w.once.Do(func() { w.ended <- err })
	}
	return p, err
}

// tcpPair returns the two ends of n TCP connections.
func tcpPair(t *testing.T, n int) (a, b []net.Conn) {
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	defer ln.Close()
	for range n {
		c, err := net.Dial("tcp", ln.Addr().String())
		if err != nil {
			t.Fatal(err)
		}
		s, err := ln.Accept()
		if err != nil {
			t.Fatal(err)
		}
		a, b = append(a, c), append(b, s)
	}
	t.Cleanup(func() { closeAll(a); closeAll(b) })
	return a, b
}

// TestSocketBadHeaders: garbage, a truncated header, a header whose
// checksum does not match, a step gap and a corrupt part header are each
// an error, and none reaches place.
func TestSocketBadHeaders(t *testing.T) {
	valid := func(p Post, parts int) []byte {
		h := make([]byte, postHdrLen)
		binary.LittleEndian.PutUint32(h[0:], magicPost)
		h[4], h[5], h[6] = p.Proto, uint8(p.Skip), uint8(p.Slots)
		binary.LittleEndian.PutUint64(h[8:], p.Step)
		binary.LittleEndian.PutUint32(h[16:], p.Bytes)
		binary.LittleEndian.PutUint32(h[20:], uint32(parts))
		binary.LittleEndian.PutUint32(h[28:], crc32.ChecksumIEEE(h[:28]))
		return h
	}
	big := uint32(3 * stripeMin)
	cases := []struct {
		name  string
		sock0 []byte // written to socket 0, which is then closed
		sock1 []byte // written to socket 1
		want  string
		lost  bool
	}{
		{"garbage", bytes.Repeat([]byte{0xab}, postHdrLen), nil, "corrupt post header", false},
		{"truncated", valid(Post{Slots: 1, Bytes: 8, Proto: uint8(ring.Simple)}, 1)[:10], nil, "truncated", true},
		{"checksum", func() []byte {
			h := valid(Post{Slots: 1, Bytes: 8, Proto: uint8(ring.Simple)}, 1)
			h[16] ^= 1
			return h
		}(), nil, "corrupt post header", false},
		{"parts", valid(Post{Slots: 1, Bytes: big, Proto: uint8(ring.Simple)}, 1), nil, "parts", false},
		{"gap", valid(Post{Step: 5, Slots: 1, Bytes: 8, Proto: uint8(ring.Simple)}, 1), nil, "does not follow", false},
		{"part header", append(valid(Post{Slots: 2, Bytes: big, Proto: uint8(ring.Simple)}, 2), make([]byte, big)...),
			bytes.Repeat([]byte{1}, partHdrLen), "corrupt part header", false},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			a, b := tcpPair(t, 2)
			w := newSockRecv(b)
			defer w.Close()
			go func() {
				a[0].Write(tc.sock0)
				a[1].Write(tc.sock1)
				if tc.lost {
					a[0].Close()
				}
			}()
			placed := false
			_, err := w.Recv(func(p Post) ([]byte, error) {
				placed = true
				return make([]byte, p.Bytes), nil
			})
			if err == nil || !strings.Contains(err.Error(), tc.want) {
				t.Fatalf("got %v, want an error containing %q", err, tc.want)
			}
			if errors.Is(err, errs.ErrPeerLost) != tc.lost {
				t.Errorf("%v: lost peer %v, want %v", err, !tc.lost, tc.lost)
			}
			if placed != (tc.name == "part header") { // only a good post header is placed
				t.Errorf("placed: %v", placed)
			}
		})
	}
}

// TestSocketRefusesStrangers: a dialer with the wrong token, claiming to
// be another rank, or claiming an edge the acceptor does not expect (a
// channel it does not receive on from that rank, or from a rank it
// receives from on another channel) is closed, and the real senders still
// connect.
func TestSocketRefusesStrangers(t *testing.T) {
	ln, err := net.ListenTCP("tcp", &net.TCPAddr{IP: net.IPv4(127, 0, 0, 1)})
	require.NoError(t, err)
	defer ln.Close()
	token := [sockTokenLen]byte{1, 2, 3}
	addr := ln.Addr().(*net.TCPAddr).AddrPort()
	ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
	defer cancel()
	want := []Edge{{4, 0, 0}, {6, 0, 1}} // rank 0 receives from 4 on channel 0, from 6 on channel 1
	done := make(chan error, 1)
	var socks [][]net.Conn
	go func() {
		var err error
		socks, err = acceptSockets(ctx, ln, token, want)
		done <- err
	}()
	for _, bad := range []struct {
		token    [sockTokenLen]byte
		rank, ch int
	}{
		{[sockTokenLen]byte{9}, 4, 0}, // wrong token
		{token, 5, 0},                 // a rank that sends nothing here
		{token, 4, 1},                 // an expected sender on another's channel
		{token, 6, 0},
		{token, 4, 7}, // a channel nobody sends on
	} {
		c, err := net.Dial("tcp", addr.String())
		require.NoError(t, err)
		assert.Error(t, greet(ctx, c, bad.token, bad.rank, bad.ch, 0, 1), "a stranger (rank %d, channel %d) was accepted", bad.rank, bad.ch)
		c.Close()
	}
	for _, e := range want {
		cs, err := dialSockets(ctx, addr, token, e, 2)
		require.NoError(t, err)
		closeAll(cs)
	}
	require.NoError(t, <-done)
	require.Len(t, socks, 2)
	for k := range socks {
		assert.Len(t, socks[k], 2)
		closeAll(socks[k])
	}
}

// TestConnectSocketsChecksEdges: an edge that is not the rank's own, to
// itself or out of range, or given twice, is refused before any exchange.
func TestConnectSocketsChecksEdges(t *testing.T) {
	for _, tc := range []struct {
		name         string
		sends, recvs []Edge
	}{
		{"not mine", []Edge{{1, 2, 0}}, nil},
		{"recv not mine", nil, []Edge{{1, 2, 0}}},
		{"self", []Edge{{0, 0, 0}}, nil},
		{"out of range", []Edge{{0, 3, 0}}, nil},
		{"channel", nil, []Edge{{1, 0, -1}}},
		{"twice", []Edge{{0, 1, 0}, {0, 1, 0}}, nil},
	} {
		t.Run(tc.name, func(t *testing.T) {
			_, _, err := ConnectSockets(context.Background(), failingExchanger{}, tc.sends, tc.recvs, 1)
			require.Error(t, err)
			assert.Contains(t, err.Error(), "edge")
		})
	}
}

// failingExchanger is rank 0 of 3 and fails every exchange.
type failingExchanger struct{}

func (failingExchanger) Rank() int { return 0 }
func (failingExchanger) Size() int { return 3 }
func (failingExchanger) AllGather(context.Context, []byte) ([][]byte, error) {
	return nil, errors.New("no exchange expected")
}
func (failingExchanger) Barrier(context.Context) error { return errors.New("no exchange expected") }

// TestSocketsPerConn: the product of the two variables, each 1 when only
// the other is set; as NCCL, more than 16 threads are 16 and a product above
// 64 is lowered to fit (with a warning); text or a negative count is an
// error naming the variable.
func TestSocketsPerConn(t *testing.T) {
	cases := []struct {
		threads, socks string
		want           int
		err            string
	}{
		{"", "", defaultSockets, ""},
		{"2", "", 2, ""},
		{"", "4", 4, ""},
		{"2", "4", 8, ""},
		{"0", "0", 1, ""},
		{"16", "16", maxSockets, ""},
		{"", "999", maxSockets, ""},
		{"17", "", 16, ""},
		{"3", "30", 63, ""},
		{"-1", "", 0, `NCCL_SOCKET_NTHREADS="-1"`},
		{"", "many", 0, `NCCL_NSOCKS_PERTHREAD="many": want an integer in [0, 2147483647]`},
		{"", "-2", 0, `NCCL_NSOCKS_PERTHREAD="-2"`},
	}
	for _, tc := range cases {
		t.Run(tc.threads+"x"+tc.socks, func(t *testing.T) {
			for name, v := range map[string]string{"NCCL_SOCKET_NTHREADS": tc.threads, "NCCL_NSOCKS_PERTHREAD": tc.socks} {
				if v != "" {
					t.Setenv(name, v)
				}
			}
			got, err := SocketsPerConn()
			if tc.err != "" {
				require.Error(t, err)
				assert.ErrorIs(t, err, errs.ErrInvalidArgument)
				assert.Contains(t, err.Error(), tc.err)
				return
			}
			require.NoError(t, err)
			assert.Equal(t, tc.want, got, "NTHREADS=%q NSOCKS_PERTHREAD=%q", tc.threads, tc.socks)
		})
	}
}

// BenchmarkNetSimple streams two-slot Simple posts through one socket
// connection (both ends in this process): the proxies' and the wire's
// throughput without an executor.
func BenchmarkNetSimple(b *testing.B) {
	nsock, err := SocketsPerConn()
	if err != nil {
		b.Fatal(err)
	}
	nets, _ := netRingB(b, 2, 1, nsock, nil)
	send, _ := nets[0].Conn(context.Background(), 0, 1, 0)
	recv, _ := nets[1].Conn(context.Background(), 0, 1, 0)
	nb := 2 * netSizes.Simple / ring.NSteps
	b.SetBytes(int64(nb))
	done := make(chan error, 1)
	go func() {
		var w Waiter
		w.Reset(context.Background(), time.Minute)
		w.SleepSoon()
		for step := uint64(0); step < uint64(2*b.N); step += 2 {
			if err := recv.WaitData(step+2, &w); err != nil {
				done <- err
				return
			}
			recv.PostHead(step + 2)
		}
		done <- nil
	}()
	var w Waiter
	w.Reset(context.Background(), time.Minute)
	w.SleepSoon()
	for step := uint64(0); step < uint64(2*b.N); step += 2 {
		if err := send.WaitCredit(step, 2, &w); err != nil {
			b.Fatal(err)
		}
		send.PostSimple(step, step+2, nb)
	}
	if err := <-done; err != nil {
		b.Fatal(err)
	}
}

// FuzzSocketRecv: whatever bytes arrive on a connection's first socket, Recv
// returns an error or a post that is well formed and whose data it read
// completely — never a panic, never data from a bad header.
func FuzzSocketRecv(f *testing.F) {
	h := make([]byte, postHdrLen)
	binary.LittleEndian.PutUint32(h[0:], magicPost)
	h[4], h[6] = uint8(ring.Simple), 1
	binary.LittleEndian.PutUint32(h[16:], 5)
	binary.LittleEndian.PutUint32(h[20:], 1)
	binary.LittleEndian.PutUint32(h[28:], crc32.ChecksumIEEE(h[:28]))
	f.Add(append(h, "hello"...))
	f.Add(h[:7])
	f.Add(goodbye(postHdrLen))
	f.Fuzz(func(t *testing.T, in []byte) {
		a, b := net.Pipe()
		w := newSockRecv([]net.Conn{b})
		defer w.Close()
		go func() {
			a.Write(in)
			a.Close()
		}()
		var placed []byte
		p, err := w.Recv(func(p Post) ([]byte, error) {
			if p.Bytes > 1<<20 {
				return nil, fmt.Errorf("too big")
			}
			placed = make([]byte, p.Bytes)
			return placed, nil
		})
		if err != nil {
			return
		}
		if p.Step != 0 || int(p.Bytes) != len(placed) || len(in) < postHdrLen+int(p.Bytes) {
			t.Fatalf("accepted %v from %d bytes", p, len(in))
		}
		if !bytes.Equal(placed, in[postHdrLen:postHdrLen+int(p.Bytes)]) {
			t.Fatalf("%v: data differs", p)
		}
	})
}

// TestSocketDataChecksum: with RINGO_CHECK=1 a sender checksums each
// post's data (striped or inline); the receiver accepts it intact and
// refuses it, naming the post, when a byte changed on the way.
func TestSocketDataChecksum(t *testing.T) {
	t.Setenv("RINGO_CHECK", "1")
	for _, n := range []int{100, 3 * stripeMin} {
		a, b := tcpPair(t, 2)
		s, r := newSockSend(a), newSockRecv(b)
		data := make([]byte, n)
		for i := range data {
			data[i] = byte(i * 7)
		}
		go s.Send(Post{Slots: 1, Bytes: uint32(n), Proto: uint8(ring.Simple)}, data)
		got := make([]byte, n)
		if _, err := r.Recv(func(Post) ([]byte, error) { return got, nil }); err != nil || !bytes.Equal(got, data) {
			t.Fatalf("%d bytes: %v", n, err)
		}
		s.Close()
		r.Close()
	}
	// A post whose data no longer matches its header's checksum.
	a, b := tcpPair(t, 1)
	r := newSockRecv(b)
	defer r.Close()
	data := []byte("eight by")
	h := make([]byte, postHdrLen)
	binary.LittleEndian.PutUint32(h[0:], magicPost)
	h[4], h[6], h[7] = uint8(ring.Simple), 1, 1
	binary.LittleEndian.PutUint32(h[16:], uint32(len(data)))
	binary.LittleEndian.PutUint32(h[20:], 1)
	binary.LittleEndian.PutUint32(h[24:], DataSum(data)^1)
	binary.LittleEndian.PutUint32(h[28:], crc32.ChecksumIEEE(h[:28]))
	go a[0].Write(append(h, data...))
	_, err := r.Recv(func(p Post) ([]byte, error) { return make([]byte, p.Bytes), nil })
	if err == nil || !strings.Contains(err.Error(), "corrupted in transit") {
		t.Fatalf("got %v", err)
	}
}

// TestSocketRefusesBadShapes: a post the header cannot carry (no slots,
// skipping all it takes, more than 2×NSteps) is refused by the sender, and
// a header that says so is refused by the receiver, before place.
func TestSocketRefusesBadShapes(t *testing.T) {
	a, b := tcpPair(t, 1)
	s, r := newSockSend(a), newSockRecv(b)
	defer s.Close()
	defer r.Close()
	for _, p := range []Post{{Slots: 0}, {Slots: 2, Skip: 2}, {Slots: 2*ring.NSteps + 1}, {Slots: 256}} {
		if err := s.Send(p, nil); !errors.Is(err, errs.ErrInvalidArgument) {
			t.Errorf("Send(%v): %v, want it refused", p, err)
		}
	}
	h := make([]byte, postHdrLen)
	binary.LittleEndian.PutUint32(h[0:], magicPost)
	h[4], h[5], h[6] = uint8(ring.Simple), 1, 1 // skips its only slot
	binary.LittleEndian.PutUint32(h[28:], crc32.ChecksumIEEE(h[:28]))
	go a[0].Write(h)
	_, err := r.Recv(func(p Post) ([]byte, error) {
		t.Errorf("place called for %v", p)
		return nil, nil
	})
	if err == nil || !strings.Contains(err.Error(), "corrupt post header") {
		t.Fatalf("Recv of a header skipping all its slots: %v", err)
	}
}
