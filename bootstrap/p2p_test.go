package bootstrap

import (
	"bytes"
	"context"
	"encoding/binary"
	"fmt"
	"net"
	"runtime"
	"sync"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/ringo-ccl/ringo/internal/errs"
)

// testCtx is a context for a test's calls: generous, for a busy machine.
func testCtx(t *testing.T) context.Context {
	ctx, cancel := context.WithTimeout(context.Background(), time.Minute)
	t.Cleanup(cancel)
	return ctx
}

// startRanks starts a root and joins n ranks to it, all closed when the
// test ends, and returns them with a context for their calls.
func startRanks(t *testing.T, n int) ([]*Bootstrap, context.Context) {
	t.Helper()
	ranks := make([]int, n)
	for i := range ranks {
		ranks[i] = i
	}
	return joinRanks(t, startTestRoot(t), n, ranks...), testCtx(t)
}

// msgFor is message k from rank from to rank to: sizes and bytes distinct,
// empty now and then.
func msgFor(from, to, k int) []byte {
	if k%7 == 3 {
		return nil
	}
	m := make([]byte, 1+(k*37+from*11+to)%300)
	for i := range m {
		m[i] = byte(i + 3*from + 5*to + k)
	}
	return m
}

// peerErr asserts that err wraps sentinel and is an *errs.Error naming
// peer, with want in its text.
func peerErr(t *testing.T, err error, sentinel error, peer int, want string) {
	t.Helper()
	require.ErrorIs(t, err, sentinel)
	var e *errs.Error
	require.ErrorAs(t, err, &e)
	assert.Equal(t, peer, e.Peer, "the error's peer: %v", err)
	assert.Contains(t, err.Error(), fmt.Sprintf("(peer rank %d)", peer))
	assert.Contains(t, err.Error(), want)
}

// recvAsync starts b.Recv on its own goroutine and returns the channel
// that will carry its error.
func recvAsync(ctx context.Context, b *Bootstrap, peer int, tag uint32) <-chan error {
	c := make(chan error, 1)
	go func() {
		_, err := b.Recv(ctx, peer, tag)
		c <- err
	}()
	return c
}

// connOf returns b's connection with peer, nil if none.
func connOf(b *Bootstrap, peer int) net.Conn {
	b.peers.mu.Lock()
	defer b.peers.mu.Unlock()
	if p := b.peers.pairs[peer]; p != nil {
		return p.conn
	}
	return nil
}

// TestSendRecvEveryPair: every pair of 4 ranks ping-pongs at once, both
// ranks of a pair sending first (so that their connections cross), each
// direction with its own tag; each pair ends with one connection.
func TestSendRecvEveryPair(t *testing.T) {
	t.Parallel()
	const n, rounds = 4, 20
	bs, ctx := startRanks(t, n)
	tag := func(from, to int) uint32 { return uint32(100*from + to) }
	for r, err := range run(bs, func(b *Bootstrap) error {
		var wg sync.WaitGroup
		errc := make(chan error, n)
		for peer := range n {
			if peer == b.Rank() {
				continue
			}
			wg.Go(func() {
				for k := range rounds {
					if err := b.Send(ctx, peer, tag(b.Rank(), peer), msgFor(b.Rank(), peer, k)); err != nil {
						errc <- err
						return
					}
					got, err := b.Recv(ctx, peer, tag(peer, b.Rank()))
					if err != nil {
						errc <- err
						return
					}
					if !bytes.Equal(got, msgFor(peer, b.Rank(), k)) {
						errc <- fmt.Errorf("rank %d: message %d from rank %d wrong", b.Rank(), k, peer)
						return
					}
				}
			})
		}
		wg.Wait()
		close(errc)
		return <-errc
	}) {
		require.NoError(t, err, "rank %d", r)
	}
	for i := range n {
		for j := i + 1; j < n; j++ {
			ci, cj := connOf(bs[i], j), connOf(bs[j], i)
			require.NotNil(t, ci, "rank %d has no connection with rank %d", i, j)
			require.NotNil(t, cj, "rank %d has no connection with rank %d", j, i)
			assert.Equal(t, ci.LocalAddr().String(), cj.RemoteAddr().String(), "ranks %d and %d hold different connections", i, j)
		}
	}
}

// TestSendBeforeRecvKeepsOrder: rank 0 sends many messages on three tags,
// interleaved, before rank 1 receives any; rank 1 then takes the tags one
// after the other, each in the order sent.
func TestSendBeforeRecvKeepsOrder(t *testing.T) {
	t.Parallel()
	const perTag = 300 // 900 queued: within maxQueuedMsgs
	bs, ctx := startRanks(t, 2)
	for k := range perTag {
		for tag := range 3 {
			require.NoError(t, bs[0].Send(ctx, 1, uint32(tag), msgFor(tag, 1, k)))
		}
	}
	for _, tag := range []int{2, 0, 1} {
		for k := range perTag {
			got, err := bs[1].Recv(ctx, 0, uint32(tag))
			require.NoError(t, err)
			require.True(t, bytes.Equal(msgFor(tag, 1, k), got), "tag %d message %d: %d bytes, want %d", tag, k, len(got), len(msgFor(tag, 1, k)))
		}
	}
	// Rank 1 answers on the connection rank 0 made.
	require.NoError(t, bs[1].Send(ctx, 0, MaxTag, []byte("back")))
	got, err := bs[0].Recv(ctx, 1, MaxTag)
	require.NoError(t, err)
	assert.Equal(t, []byte("back"), got)
}

func TestSendRecvBadInput(t *testing.T) {
	t.Parallel()
	bs, ctx := startRanks(t, 2)
	for _, c := range []struct {
		peer int
		tag  uint32
		blob []byte
		want string
	}{
		{2, 0, nil, "peer 2 out of range [0, 2)"},
		{-1, 0, nil, "peer -1 out of range [0, 2)"},
		{0, 0, nil, "peer 0 is this rank"},
		{1, MaxTag + 1, nil, "tag 0x80000000 above MaxTag"},
		{1, 0, make([]byte, MaxMessage+1), "blob of 1048577 bytes to rank 1 exceeds 1048576"},
	} {
		err := bs[0].Send(ctx, c.peer, c.tag, c.blob)
		require.ErrorIs(t, err, errs.ErrInvalidArgument)
		assert.Contains(t, err.Error(), c.want)
		if c.blob == nil {
			_, err := bs[0].Recv(ctx, c.peer, c.tag)
			require.ErrorIs(t, err, errs.ErrInvalidArgument)
			assert.Contains(t, err.Error(), c.want)
		}
	}
	// None of it touched the pair: a message of the largest size goes.
	big := bytes.Repeat([]byte{0xa5}, MaxMessage)
	big[0], big[MaxMessage-1] = 1, 2
	require.NoError(t, bs[0].Send(ctx, 1, 7, big))
	got, err := bs[1].Recv(ctx, 0, 7)
	require.NoError(t, err)
	assert.True(t, bytes.Equal(big, got), "the 1 MiB message arrived changed")
}

// TestQueueCap: a peer may queue maxQueuedBytes of blobs, or
// maxQueuedMsgs messages, that no Recv has taken; beyond, the receiver
// fails the connection, naming the sender, and the sender sees it closed.
func TestQueueCap(t *testing.T) {
	t.Parallel()
	for _, c := range []struct {
		name string
		size int
		fit  int // messages that fit
	}{
		{"bytes", MaxMessage, maxQueuedBytes / MaxMessage},
		{"messages", 0, maxQueuedMsgs},
	} {
		t.Run(c.name, func(t *testing.T) {
			t.Parallel()
			bs, ctx := startRanks(t, 2)
			blob := bytes.Repeat([]byte{1}, c.size)
			// As many as fit, the last on its own tag: once rank 1 has
			// that one, it holds them all.
			for range c.fit - 1 {
				require.NoError(t, bs[0].Send(ctx, 1, 3, blob))
			}
			require.NoError(t, bs[0].Send(ctx, 1, 4, blob))
			got, err := bs[1].Recv(ctx, 0, 4)
			require.NoError(t, err)
			require.Len(t, got, c.size)
			for range c.fit - 1 {
				got, err := bs[1].Recv(ctx, 0, 3)
				require.NoError(t, err)
				require.Len(t, got, c.size)
			}
			// Now one too many.
			for range c.fit {
				require.NoError(t, bs[0].Send(ctx, 1, 3, blob))
			}
			if err := bs[0].Send(ctx, 1, 3, blob); err != nil { // may find the connection closed already
				require.ErrorIs(t, err, errs.ErrPeerLost)
			}
			_, err = bs[1].Recv(ctx, 0, 5)
			peerErr(t, err, errs.ErrInvalidArgument, 0, "rank 0 sent more than 1024 messages or 4194304 bytes that this rank has not received")
			_, err = bs[0].Recv(ctx, 1, 5)
			peerErr(t, err, errs.ErrPeerLost, 1, "rank 1")
			// What came before is still rank 1's to take; then the error.
			for range c.fit {
				_, err := bs[1].Recv(ctx, 0, 3)
				require.NoError(t, err)
			}
			_, err = bs[1].Recv(ctx, 0, 3)
			require.ErrorIs(t, err, errs.ErrInvalidArgument)
			require.ErrorIs(t, bs[1].Send(ctx, 0, 3, nil), errs.ErrInvalidArgument, "Send on the failed pair")
		})
	}
}

// TestListenerRefusesStrangersP2P knocks on rank 1's listener with p2p
// hellos that do not belong, and holds a silent connection open, while
// rank 0 connects to rank 1 regardless; a member's frame that names a
// length beyond the largest message fails its connection before anything
// is allocated for it.
func TestListenerRefusesStrangersP2P(t *testing.T) {
	t.Parallel()
	id := startTestRoot(t)
	bs := joinRanks(t, id, 3, 0, 1, 2)
	ctx := testCtx(t)
	addr := bs[1].me.String()
	silent, err := net.Dial("tcp", addr)
	require.NoError(t, err)
	defer silent.Close()
	for _, k := range []struct {
		h    hello
		want string
	}{
		{hello{secret: testSecret(7), rank: 0, nranks: 3, ring: loopbackPort(9)}, "wrong secret"},
		{hello{secret: id.secret(), rank: 0, nranks: 4, ring: loopbackPort(9)}, "nranks 4 differs from this communicator's 3"},
		{hello{secret: id.secret(), rank: 3, nranks: 3, ring: loopbackPort(9)}, "rank 3 out of range [0, 3)"},
		{hello{secret: id.secret(), rank: 1, nranks: 3, ring: loopbackPort(9)}, "rank 1 is this rank"},
	} {
		typ, p := rawExchange(t, addr, frameP2PHello, appendHello(nil, k.h))
		code, reason, err := decodeRefuse(p)
		require.NoError(t, err)
		assert.Equal(t, frameRefuse, typ)
		assert.Equal(t, refuseInvalid, code)
		assert.Contains(t, reason, k.want)
	}
	require.NoError(t, bs[0].Send(ctx, 1, 1, []byte("hi")))
	got, err := bs[1].Recv(ctx, 0, 1)
	require.NoError(t, err)
	assert.Equal(t, []byte("hi"), got)
	// A second connection of rank 0's is refused: the pair has one.
	typ, p := rawExchange(t, addr, frameP2PHello, appendHello(nil, hello{secret: id.secret(), rank: 0, nranks: 3, ring: loopbackPort(9)}))
	code, reason, _ := decodeRefuse(p)
	assert.Equal(t, frameRefuse, typ)
	assert.Equal(t, refuseCrossed, code)
	assert.Contains(t, reason, "rank 1 is connected to rank 0 already")

	// Playing rank 2 (which has not connected to rank 1): a header naming
	// 1 GiB.
	c, err := net.Dial("tcp", addr)
	require.NoError(t, err)
	defer c.Close()
	c.SetDeadline(time.Now().Add(time.Minute))
	require.NoError(t, writeFrame(c, frameP2PHello, appendHello(nil, hello{secret: id.secret(), rank: 2, nranks: 3, ring: loopbackPort(9)})))
	typ, _, err = readFrame(c)
	require.NoError(t, err)
	require.Equal(t, frameAccept, typ)
	_, err = c.Write(binary.BigEndian.AppendUint32([]byte{byte(frameMsg)}, 1<<30))
	require.NoError(t, err)
	_, err = bs[1].Recv(ctx, 2, 1)
	var e *errs.Error
	require.ErrorAs(t, err, &e)
	assert.Equal(t, 2, e.Peer)
	assert.ErrorIs(t, err, errFrame)
	assert.Contains(t, err.Error(), "rank 2 sent a malformed bootstrap frame: message payload of 1073741824 bytes exceeds")
}

// TestRecvPeerCloses: a Recv waiting on a peer that closes, or whose
// process dies, ends naming it; the other pairs go on.
func TestRecvPeerCloses(t *testing.T) {
	t.Parallel()
	bs, ctx := startRanks(t, 3)
	require.NoError(t, bs[0].Send(ctx, 1, 1, []byte("connect")))
	_, err := bs[1].Recv(ctx, 0, 1)
	require.NoError(t, err)

	// Rank 1 waits for rank 0, which closes the connection (Close).
	recvd := recvAsync(ctx, bs[1], 0, 2)
	bs[0].Close()
	peerErr(t, <-recvd, errs.ErrPeerLost, 0, "rank 0 closed its point-to-point connection")
	peerErr(t, bs[1].Send(ctx, 0, 2, nil), errs.ErrPeerLost, 0, "rank 0")

	// Rank 1 waits for rank 2, never connected, whose process dies: the
	// root reports it.
	recvd = recvAsync(ctx, bs[1], 2, 2)
	crash(bs[2])
	peerErr(t, <-recvd, errs.ErrPeerLost, 2, "rank 2 lost")
	peerErr(t, bs[1].Send(ctx, 2, 2, nil), errs.ErrPeerLost, 2, "rank 2 lost")
}

// TestSendRecvContext: a call whose ctx ends returns ctx's error and
// leaves the pair working, with no message lost or duplicated.
func TestSendRecvContext(t *testing.T) {
	t.Parallel()
	bs, ctx := startRanks(t, 2)
	require.NoError(t, bs[0].Send(ctx, 1, 1, []byte("one")))

	cancelled, cancel := context.WithCancel(ctx)
	cancel()
	_, err := bs[1].Recv(cancelled, 0, 2)
	peerErr(t, err, context.Canceled, 0, "context canceled")
	peerErr(t, bs[0].Send(cancelled, 1, 1, []byte("never")), context.Canceled, 1, "context canceled")
	expired, cancel := context.WithTimeout(ctx, time.Millisecond)
	defer cancel()
	_, err = bs[1].Recv(expired, 0, 2)
	peerErr(t, err, errs.ErrTimeout, 0, "deadline exceeded")

	// A Recv cancelled while it waits.
	waiting, cancel := context.WithCancel(ctx)
	recvd := recvAsync(waiting, bs[1], 0, 2)
	cancel()
	require.ErrorIs(t, <-recvd, context.Canceled)

	require.NoError(t, bs[0].Send(ctx, 1, 1, []byte("two")))
	for _, want := range []string{"one", "two"} {
		got, err := bs[1].Recv(ctx, 0, 1)
		require.NoError(t, err)
		assert.Equal(t, want, string(got))
	}
}

// TestCloseEndsRecv: Close ends a pending Recv with ErrAborted, and later
// calls fail so too.
func TestCloseEndsRecv(t *testing.T) {
	t.Parallel()
	bs, ctx := startRanks(t, 2)
	recvd := recvAsync(ctx, bs[0], 1, 1)
	bs[0].Close()
	peerErr(t, <-recvd, errs.ErrAborted, 1, "bootstrap closed")
	peerErr(t, bs[0].Send(ctx, 1, 1, nil), errs.ErrAborted, 1, "bootstrap closed")
	_, err := bs[0].Recv(ctx, 1, 1)
	peerErr(t, err, errs.ErrAborted, 1, "bootstrap closed")
}

// TestP2PGoroutines: after point-to-point traffic between every pair and a
// Recv left waiting, Close leaves no goroutine behind. It must not run in
// parallel with other tests.
func TestP2PGoroutines(t *testing.T) {
	before := runtime.NumGoroutine()
	const n = 3
	id, err := StartRoot("127.0.0.1:0", testSecret(4))
	require.NoError(t, err)
	ctx := testCtx(t)
	var cs []<-chan joined
	for r := range n {
		cs = append(cs, joinAsync(ctx, id, n, r))
	}
	bs := collect(t, cs...)
	for r, err := range run(bs, func(b *Bootstrap) error {
		for peer := range n {
			if peer == b.Rank() {
				continue
			}
			if err := b.Send(ctx, peer, 1, []byte{byte(b.Rank())}); err != nil {
				return err
			}
			if _, err := b.Recv(ctx, peer, 1); err != nil {
				return err
			}
			if _, err := b.Pair(peer).AllGather(ctx, []byte{byte(b.Rank())}); err != nil {
				return err
			}
		}
		return nil
	}) {
		require.NoError(t, err, "rank %d", r)
	}
	recvd := recvAsync(ctx, bs[0], 1, 9)
	for _, b := range bs {
		require.NoError(t, b.Close())
	}
	require.ErrorIs(t, <-recvd, errs.ErrAborted)
	waitGoroutines(t, before)
}

// waitGoroutines waits until at most want goroutines run, for up to a
// minute, and fails the test with their stacks if more remain. Goroutines
// signal nothing when they end: it polls.
func waitGoroutines(t *testing.T, want int) {
	t.Helper()
	tick := time.NewTicker(10 * time.Millisecond)
	defer tick.Stop()
	deadline := time.Now().Add(time.Minute)
	n := runtime.NumGoroutine()
	for ; n > want && time.Now().Before(deadline); n = runtime.NumGoroutine() {
		<-tick.C
	}
	if n > want {
		buf := make([]byte, 1<<16)
		require.FailNow(t, "goroutines left behind", "%d before, %d after:\n%s", want, n, buf[:runtime.Stack(buf, true)])
	}
}

// TestCrossedConnections drives takePeer through the states of a pair and
// checks whose connection each keeps.
func TestCrossedConnections(t *testing.T) {
	t.Parallel()
	for _, c := range []struct {
		me, peer   int
		connecting bool
		code       byte // 0: taken
	}{
		{1, 2, false, 0},
		{1, 2, true, refuseCrossed}, // this rank, the lower, dials: its connection wins
		{2, 1, true, 0},             // the peer, the lower, dials: its connection wins
		{2, 1, false, 0},
	} {
		b := newBootstrap(newUniqueID(loopbackPort(1), testSecret(8)), 3, c.me)
		b.peers.mu.Lock()
		p, err := b.pairLocked(c.peer)
		require.NoError(t, err)
		p.connecting = c.connecting
		b.peers.mu.Unlock()
		here, there := net.Pipe()
		go readFrame(there) // the accept
		code, reason := b.takePeer(here, c.peer)
		assert.Equal(t, c.code, code, "rank %d, peer %d, connecting %v: %s", c.me, c.peer, c.connecting, reason)
		if code == 0 {
			assert.Equal(t, here, connOf(b, c.peer))
			// A second connection is refused, whatever the ranks.
			code, _ := b.takePeer(here, c.peer)
			assert.Equal(t, refuseCrossed, code)
		}
		b.Close()
		there.Close()
	}
}
