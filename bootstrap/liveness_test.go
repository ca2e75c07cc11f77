package bootstrap

import (
	"runtime"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/ringo-ccl/ringo/internal/errs"
)

// awaitHosts waits until b has the root's hosts frame, and returns it.
func awaitHosts(t *testing.T, b *Bootstrap) []int {
	t.Helper()
	for deadline := time.Now().Add(time.Minute); time.Now().Before(deadline); time.Sleep(time.Millisecond) {
		b.mu.Lock()
		hosts := b.rootHosts
		b.mu.Unlock()
		if hosts != nil {
			return hosts
		}
	}
	require.FailNow(t, "no hosts frame came")
	return nil
}

// lostErr waits for b's PeerLost error.
func lostErr(t *testing.T, b *Bootstrap) error {
	t.Helper()
	select {
	case err := <-b.PeerLost():
		return err
	case <-time.After(time.Minute):
		require.FailNow(t, "no loss reported", "rank %d", b.Rank())
		return nil
	}
}

// TestLostKeepsEveryLoss: Lost lists every rank the root reported, not
// only the first that PeerLost delivers.
func TestLostKeepsEveryLoss(t *testing.T) {
	t.Parallel()
	bs, _ := startRanks(t, 4)
	assert.Empty(t, bs[0].Lost())
	crash(bs[3])
	require.ErrorContains(t, lostErr(t, bs[0]), "rank 3 lost")
	crash(bs[1])
	for deadline := time.Now().Add(time.Minute); len(bs[0].Lost()) < 2 && time.Now().Before(deadline); {
		time.Sleep(time.Millisecond)
	}
	assert.Equal(t, []int{1, 3}, bs[0].Lost())
}

// TestRootLossNamesItsRanks: the root tells every rank which ranks share
// its process (here all of them); when the root is lost, a rank for which
// it lived in another rank's process (rank 0's: faked here, as a
// launcher's rank 0 runs it) reports that rank lost, in PeerLost and Lost.
func TestRootLossNamesItsRanks(t *testing.T) {
	t.Parallel()
	id := startTestRoot(t)
	bs := joinRanks(t, id, 3, 0, 1, 2)
	for _, b := range bs {
		assert.Equal(t, []int{0, 1, 2}, awaitHosts(t, b), "rank %d", b.Rank())
	}
	fakeRootIn0(bs[1:])
	bs[0].lis.ln.Close() // as if rank 0's process, running the root, died: its listener first,
	StopRoot(id)         // then the root
	for _, b := range bs[1:] {
		err := lostErr(t, b)
		require.ErrorIs(t, err, errs.ErrPeerLost)
		assert.ErrorContains(t, err, "rank 0 lost: the bootstrap root in its process, at "+id.Addr()+", is lost")
		assert.Equal(t, []int{0}, b.Lost())
	}
}

// fakeRootIn0 makes bs believe the root runs in rank 0's process.
func fakeRootIn0(bs []*Bootstrap) {
	for _, b := range bs {
		b.mu.Lock()
		b.rootHosts = []int{0}
		b.mu.Unlock()
	}
}

// TestRootConnectionEndsProcessLives: when the connection to the root ends
// but rank 0, in the root's process (faked, as above), still listens, the
// root's process lives on: nobody is lost, and the ranks carry on without
// the root — point-to-point messages and ring exchanges work, and a query,
// which needs the root, fails saying so. (On one H200 a PyTorch job's
// shrunk communicator lost its root's connections so, its root logging no
// close: issue 21.)
func TestRootConnectionEndsProcessLives(t *testing.T) {
	t.Parallel()
	id := startTestRoot(t)
	bs := joinRanks(t, id, 3, 0, 1, 2)
	for _, b := range bs {
		awaitHosts(t, b)
	}
	fakeRootIn0(bs[1:])
	StopRoot(id)
	for _, b := range bs[1:] {
		<-b.watchDone // the root connection's end handled
		assert.Empty(t, b.Lost(), "rank %d", b.Rank())
		b.mu.Lock()
		lost := b.lost
		b.mu.Unlock()
		assert.NoError(t, lost, "rank %d", b.Rank())
	}
	ctx := testCtx(t)
	require.NoError(t, bs[1].Send(ctx, 2, 1, []byte("still here")))
	got, err := bs[2].Recv(ctx, 1, 1)
	require.NoError(t, err)
	assert.Equal(t, "still here", string(got))
	_, err = bs[1].Query(ctx)
	assert.ErrorContains(t, err, "the root connection is closed")
}

// TestListenerGoneIsLost: with the root gone (nobody left to report
// losses), a point-to-point connection to a rank whose listener refuses it
// fails at once, naming the rank lost, and Lost lists it; the pairs of
// live ranks still work.
func TestListenerGoneIsLost(t *testing.T) {
	t.Parallel()
	id := startTestRoot(t)
	bs := joinRanks(t, id, 3, 0, 1, 2)
	ctx := testCtx(t)
	StopRoot(id)
	require.ErrorContains(t, lostErr(t, bs[0]), "bootstrap root at "+id.Addr()+" lost")
	crash(bs[2])
	err := bs[0].Send(ctx, 2, 1, []byte("anyone?"))
	peerErr(t, err, errs.ErrPeerLost, 2, "rank 2 lost: its listener at")
	assert.NoError(t, ctx.Err(), "the send waited for its context")
	assert.Equal(t, []int{2}, bs[0].Lost())

	require.NoError(t, bs[0].Send(ctx, 1, 1, []byte("still here")))
	got, err := bs[1].Recv(ctx, 0, 1)
	require.NoError(t, err)
	assert.Equal(t, "still here", string(got))
}

// TestProbeFindsRankGone: with the root gone, a rank whose
// point-to-point connection ends probes the peer's listener: a peer whose
// process is gone counts as lost (AwaitLost, Lost); the pairs of live
// ranks are untouched.
func TestProbeFindsRankGone(t *testing.T) {
	t.Parallel()
	id := startTestRoot(t)
	bs := joinRanks(t, id, 3, 0, 1, 2)
	ctx := testCtx(t)
	for _, q := range []int{1, 2} {
		require.NoError(t, bs[0].Send(ctx, q, 1, []byte("hello")))
		_, err := bs[q].Recv(ctx, 0, 1)
		require.NoError(t, err)
	}
	StopRoot(id)
	lostErr(t, bs[0])
	crash(bs[2])
	require.True(t, bs[0].AwaitLost(ctx, 2))
	assert.Equal(t, []int{2}, bs[0].Lost())
	require.NoError(t, bs[0].Send(ctx, 1, 1, []byte("still here")))
	got, err := bs[1].Recv(ctx, 0, 1)
	require.NoError(t, err)
	assert.Equal(t, "still here", string(got))
}

// TestRevoke: a rank's Revoke reaches every other rank without the root's
// help; it ends their ring call in progress and refuses later ones with
// ErrRevoked naming who revoked, and leaves the point-to-point connections
// working. Close leaves no goroutine behind. It must not run in parallel
// with other tests.
func TestRevoke(t *testing.T) {
	before := runtime.NumGoroutine()
	id, err := StartRoot("127.0.0.1:0", testSecret(8))
	require.NoError(t, err)
	bs := joinRanks(t, id, 3, 0, 1, 2)
	ctx := testCtx(t)

	gathered := make(chan error, 2)
	for _, b := range bs[1:] {
		go func() {
			_, err := b.AllGather(ctx, []byte("waiting for rank 0"))
			gathered <- err
		}()
	}
	bs[0].Revoke("rank 0 called Revoke")
	bs[0].Revoke("rank 0 called Revoke again") // sends nothing more
	for _, b := range bs {
		select {
		case <-b.Revoked():
		case <-time.After(time.Minute):
			require.FailNow(t, "not revoked", "rank %d", b.Rank())
		}
		cause := b.RevokeCause()
		require.ErrorIs(t, cause, errs.ErrRevoked)
		assert.EqualError(t, cause, "rank 0 called Revoke: communicator revoked")
	}
	for range 2 {
		err := <-gathered
		require.ErrorIs(t, err, errs.ErrRevoked)
		assert.ErrorContains(t, err, "rank 0 called Revoke")
	}
	_, err = bs[0].AllGather(ctx, nil)
	require.ErrorIs(t, err, errs.ErrRevoked)

	require.NoError(t, bs[2].Send(ctx, 1, 5, []byte("after the revoke")))
	got, err := bs[1].Recv(ctx, 2, 5)
	require.NoError(t, err)
	assert.Equal(t, "after the revoke", string(got))
	for _, b := range bs {
		require.NoError(t, b.Close())
	}
	waitGoroutines(t, before)
}
