package bootstrap

import (
	"context"
	"errors"
	"fmt"
	"io"

	"github.com/ringo-ccl/ringo/internal/errs"
	"github.com/ringo-ccl/ringo/internal/tcp"
)

// AllGather sends blob (at most 1 MiB) and returns every rank's blob indexed
// by rank (its own, copied, included), moving them around the ring in n−1
// steps. Every rank must call it the same number of times, in the same
// order (with Barrier). Errors: a blob too large, or ranks whose calls do
// not match: errs.ErrInvalidArgument; ctx's end: errs.ErrTimeout or ctx's
// error; a lost rank: errs.ErrPeerLost; after Close: errs.ErrAborted.
func (b *Bootstrap) AllGather(ctx context.Context, blob []byte) ([][]byte, error) {
	if len(blob) > maxBlobBytes {
		return nil, errs.Invalid("bootstrap allgather", b.rank, "blob of %d bytes exceeds %d", len(blob), maxBlobBytes)
	}
	out, err := b.exchange(ctx, frameGather, blob)
	if err != nil {
		return nil, b.wrap("allgather", err)
	}
	return out, nil
}

// Barrier returns once every rank has entered it. It is an AllGather of
// nothing, with AllGather's errors.
func (b *Bootstrap) Barrier(ctx context.Context) error {
	if _, err := b.exchange(ctx, frameBarrier, nil); err != nil {
		return b.wrap("barrier", err)
	}
	return nil
}

// exchange runs one ring all-gather with frames of type t. In step s a rank
// sends the blob of rank−s to its successor while receiving that of rank−s−1
// from its predecessor, so that neither side's send can block the ring.
func (b *Bootstrap) exchange(ctx context.Context, t frameType, blob []byte) ([][]byte, error) {
	b.opMu.Lock()
	defer b.opMu.Unlock()
	if b.broken != nil {
		return nil, b.broken
	}
	op, cancel, err := b.begin(ctx)
	if err != nil {
		return nil, err
	}
	defer b.end(cancel)
	b.seq++
	n := b.nranks
	out := make([][]byte, n)
	out[b.rank] = append([]byte{}, blob...)
	if n == 1 {
		return out, nil
	}
	release := tcp.Bind(op, b.next, b.prev)
	defer release()
	prev, next := (b.rank+n-1)%n, (b.rank+1)%n
	for s := range n - 1 {
		send, recv := (b.rank-s+n)%n, (b.rank-s-1+2*n)%n
		werr := make(chan error, 1)
		go func(seq uint64) { werr <- writeFrame(b.next, t, gatherHeader(seq, send), out[send]) }(b.seq)
		ioErr, err := b.receive(op, t, s, recv, prev, out)
		if ioErr {
			b.next.SetWriteDeadline(tcp.ALongTimeAgo) // the ring is broken: do not wait for the send
		}
		if werr := <-werr; err == nil && werr != nil {
			err = ioFail(op, fmt.Sprintf("step %d: sending rank %d's blob to rank %d", s, send, next), werr)
		}
		if err != nil {
			b.broken = fmt.Errorf("an earlier AllGather or Barrier failed, leaving the ring out of step: %w", err)
			return nil, err
		}
	}
	return out, nil
}

// receive reads step s's frame from rank prev into out[recv]. ioErr reports
// an I/O failure, as opposed to a frame that does not fit (after which this
// rank's own send still goes out, so that its successor sees the mismatch
// too).
func (b *Bootstrap) receive(op context.Context, t frameType, s, recv, prev int, out [][]byte) (ioErr bool, err error) {
	what := fmt.Sprintf("step %d: receiving rank %d's blob from rank %d", s, recv, prev)
	rt, p, err := readFrame(b.prev)
	if errors.Is(err, io.EOF) {
		err = fmt.Errorf("rank %d closed its ring connection: %w", prev, errs.ErrPeerLost)
	}
	if err != nil {
		return true, ioFail(op, what, err)
	}
	if rt != t {
		return false, fmt.Errorf("%s: got a %v frame, expected a %v: the ranks called AllGather and Barrier in different orders: %w",
			what, rt, t, errs.ErrInvalidArgument)
	}
	seq, origin, blob, err := decodeGather(p)
	if err != nil {
		return false, fmt.Errorf("%s: %w", what, err)
	}
	if seq != b.seq || origin != recv {
		return false, fmt.Errorf("%s: got rank %d's blob of call %d, expected call %d: the ranks made different calls: %w",
			what, origin, seq, b.seq, errs.ErrInvalidArgument)
	}
	out[recv] = blob
	return false, nil
}
