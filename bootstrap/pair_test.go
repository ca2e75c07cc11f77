package bootstrap

import (
	"bytes"
	"fmt"
	"sync"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/ringo-ccl/ringo/internal/errs"
	"github.com/ringo-ccl/ringo/transport"
)

var (
	_ transport.Exchanger = (*Bootstrap)(nil)
	_ transport.Exchanger = (*PairExchanger)(nil)
)

// TestPair: the Pairs of 3 ranks run AllGather and Barrier at once, beside
// Send and Recv on the same connections.
func TestPair(t *testing.T) {
	t.Parallel()
	const n = 3
	bs, ctx := startRanks(t, n)
	for r, err := range run(bs, func(b *Bootstrap) error {
		var wg sync.WaitGroup
		errc := make(chan error, 2*n)
		for peer := range n {
			if peer == b.Rank() {
				continue
			}
			x := b.Pair(peer)
			want := 1
			if b.Rank() < peer {
				want = 0
			}
			if x.Size() != 2 || x.Rank() != want {
				return fmt.Errorf("rank %d's pair with %d: rank %d of %d", b.Rank(), peer, x.Rank(), x.Size())
			}
			wg.Go(func() { // user messages on the largest tag, beside the pair's
				for k := range 10 {
					if err := b.Send(ctx, peer, MaxTag, msgFor(b.Rank(), peer, k)); err != nil {
						errc <- err
						return
					}
					if got, err := b.Recv(ctx, peer, MaxTag); err != nil || !bytes.Equal(got, msgFor(peer, b.Rank(), k)) {
						errc <- fmt.Errorf("rank %d: message %d from %d: %v", b.Rank(), k, peer, err)
						return
					}
				}
			})
			wg.Go(func() {
				for k := range 10 {
					got, err := x.AllGather(ctx, msgFor(b.Rank(), peer, k))
					if err != nil {
						errc <- err
						return
					}
					if !bytes.Equal(got[x.Rank()], msgFor(b.Rank(), peer, k)) || !bytes.Equal(got[1-x.Rank()], msgFor(peer, b.Rank(), k)) {
						errc <- fmt.Errorf("rank %d: pair allgather %d with %d wrong", b.Rank(), k, peer)
						return
					}
					if err := x.Barrier(ctx); err != nil {
						errc <- err
						return
					}
				}
				big, err := x.AllGather(ctx, bytes.Repeat([]byte{byte(b.Rank())}, maxBlobBytes))
				if err == nil && (len(big[1-x.Rank()]) != maxBlobBytes || big[1-x.Rank()][0] != byte(peer)) {
					err = fmt.Errorf("rank %d: 1 MiB pair allgather with %d wrong", b.Rank(), peer)
				}
				if err != nil {
					errc <- err
				}
			})
		}
		wg.Wait()
		close(errc)
		return <-errc
	}) {
		require.NoError(t, err, "rank %d", r)
	}
}

func TestPairMisuse(t *testing.T) {
	t.Parallel()
	bs, ctx := startRanks(t, 2)
	for _, c := range []struct {
		peer int
		want string
	}{{0, "peer 0 is this rank"}, {2, "peer 2 out of range [0, 2)"}, {-1, "peer -1 out of range"}} {
		x := bs[0].Pair(c.peer)
		_, err := x.AllGather(ctx, nil)
		require.ErrorIs(t, err, errs.ErrInvalidArgument)
		assert.Contains(t, err.Error(), c.want)
		require.ErrorIs(t, x.Barrier(ctx), errs.ErrInvalidArgument)
	}
	_, err := bs[0].Pair(1).AllGather(ctx, make([]byte, maxBlobBytes+1))
	require.ErrorIs(t, err, errs.ErrInvalidArgument)

	// Rank 0 gathers while rank 1 waits at a barrier.
	errs2 := run(bs, func(b *Bootstrap) error {
		x := b.Pair(1 - b.Rank())
		if b.Rank() == 0 {
			_, err := x.AllGather(ctx, []byte("x"))
			return err
		}
		return x.Barrier(ctx)
	})
	peerErr(t, errs2[0], errs.ErrInvalidArgument, 1, "rank 1 called Barrier where this rank called AllGather")
	peerErr(t, errs2[1], errs.ErrInvalidArgument, 0, "rank 0 called AllGather where this rank called Barrier")
	// The pair's calls are out of step now, through any Pair of the peer;
	// Send and Recv go on.
	peerErr(t, bs[0].Pair(1).Barrier(ctx), errs.ErrInvalidArgument, 1, "an earlier call of this pair failed")
	require.NoError(t, bs[0].Send(ctx, 1, 0, []byte("still")))
	got, err := bs[1].Recv(ctx, 0, 0)
	require.NoError(t, err)
	assert.Equal(t, []byte("still"), got)
}
