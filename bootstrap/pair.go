package bootstrap

import (
	"context"
	"encoding/binary"
	"fmt"

	"github.com/ringo-ccl/ringo/internal/errs"
	"github.com/ringo-ccl/ringo/internal/tcp"
)

// Pair's calls travel as messages of the one tag pairTag, above MaxTag, so
// that no Send or Recv of the caller's can take them. Each message's blob
// starts with a header: the call's kind (pairGather, pairBarrier) and its
// sequence number among the pair's calls, which the receiver checks, so
// that ranks whose calls differ fail (errs.ErrInvalidArgument) rather than
// take each other's blobs.
const (
	pairTag       uint32 = MaxTag + 1
	pairHeaderLen        = 1 + 8 // kind, call sequence
)

// The kinds of Pair's calls.
const (
	pairGather  byte = 1
	pairBarrier byte = 2
)

// Pair returns the transport.Exchanger of the two ranks this one and peer,
// ranked by their ranks here (the lower is rank 0), over Send and Recv (see
// the package doc): its AllGather (blobs of at most 1 MiB) and Barrier
// involve peer alone. Both ranks make the same calls in the same order; the
// Pairs of one peer share the sequence of calls, which run one at a time. A
// call that fails leaves the pair's calls out of step, so every later one
// fails too; Send and Recv go on.
//
// A peer out of range, or this rank (a pair is two ranks), is refused: every
// call of the exchanger fails with errs.ErrInvalidArgument, and its Rank and
// Size mean nothing. Other errors are Send and Recv's.
func (b *Bootstrap) Pair(peer int) *PairExchanger {
	x := &PairExchanger{b: b, peer: peer}
	switch {
	case peer < 0 || peer >= b.nranks:
		x.err = errs.Invalid("bootstrap pair", b.rank, "peer %d out of range [0, %d)", peer, b.nranks)
	case peer == b.rank:
		x.err = errs.Invalid("bootstrap pair", b.rank, "peer %d is this rank: a pair is two ranks", peer)
	}
	return x
}

// PairExchanger is the transport.Exchanger of two ranks that Pair returns.
// (It is named here, not as a transport.Exchanger, because package
// transport's tests import this package.)
type PairExchanger struct {
	b    *Bootstrap
	peer int
	err  error // why peer is refused
}

// Rank returns this rank's rank in the pair: 0 if it is the lower.
func (x *PairExchanger) Rank() int {
	if x.b.rank < x.peer {
		return 0
	}
	return 1
}

// Size returns 2.
func (x *PairExchanger) Size() int { return 2 }

// AllGather returns both ranks' blobs, by their rank in the pair.
func (x *PairExchanger) AllGather(ctx context.Context, blob []byte) ([][]byte, error) {
	if x.err != nil {
		return nil, x.err
	}
	if len(blob) > maxBlobBytes {
		return nil, errs.Invalid("bootstrap pair allgather", x.b.rank, "blob of %d bytes exceeds %d", len(blob), maxBlobBytes)
	}
	theirs, err := x.exchange(ctx, pairGather, blob)
	if err != nil {
		return nil, x.b.wrapPeer("pair allgather", x.peer, err)
	}
	out := make([][]byte, 2)
	out[x.Rank()], out[1-x.Rank()] = append([]byte{}, blob...), theirs
	return out, nil
}

// Barrier returns once both ranks have entered it.
func (x *PairExchanger) Barrier(ctx context.Context) error {
	if x.err != nil {
		return x.err
	}
	if _, err := x.exchange(ctx, pairBarrier, nil); err != nil {
		return x.b.wrapPeer("pair barrier", x.peer, err)
	}
	return nil
}

// exchange sends blob in a call of kind and returns the peer's blob of the
// same call.
func (x *PairExchanger) exchange(ctx context.Context, kind byte, blob []byte) ([]byte, error) {
	b := x.b
	b.peers.mu.Lock()
	p, err := b.pairLocked(x.peer)
	b.peers.mu.Unlock()
	if err != nil {
		return nil, err
	}
	select {
	case p.opSem <- struct{}{}:
	case <-ctx.Done():
		return nil, tcp.Ended(ctx)
	}
	defer func() { <-p.opSem }()
	if p.broken != nil {
		return nil, p.broken
	}
	p.seq++
	h := binary.BigEndian.AppendUint64([]byte{kind}, p.seq)
	err = b.send(ctx, x.peer, pairTag, h, blob)
	var got []byte
	if err == nil {
		got, err = b.recv(ctx, x.peer, pairTag)
	}
	if err == nil {
		err = checkPairHeader(got, kind, p.seq, x.peer)
	}
	if err != nil {
		p.broken = fmt.Errorf("an earlier call of this pair failed, leaving it out of step: %w", err)
		return nil, err
	}
	return got[pairHeaderLen:], nil
}

// checkPairHeader checks that m, from peer, is of the call seq of kind.
func checkPairHeader(m []byte, kind byte, seq uint64, peer int) error {
	if len(m) < pairHeaderLen {
		return fmt.Errorf("rank %d sent a pair message of %d bytes: %w", peer, len(m), errFrame)
	}
	names := map[byte]string{pairGather: "AllGather", pairBarrier: "Barrier"}
	gotKind, gotSeq := m[0], binary.BigEndian.Uint64(m[1:])
	switch {
	case gotKind != kind:
		return fmt.Errorf("rank %d called %s where this rank called %s (call %d): %w", peer, names[gotKind], names[kind], seq, errs.ErrInvalidArgument)
	case gotSeq != seq:
		return fmt.Errorf("rank %d sent its call %d, expected call %d: the ranks made different calls: %w", peer, gotSeq, seq, errs.ErrInvalidArgument)
	}
	return nil
}
