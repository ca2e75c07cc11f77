package bootstrap

import (
	"context"
	"fmt"
	"slices"

	"github.com/ringo-ccl/ringo/internal/errs"
)

// Revoking a communicator (ULFM's MPIX_Comm_revoke, NCCL's
// ncclCommRevoke): the rank that revokes tells every other rank, over the
// point-to-point connections (p2p.go) rather than through the root, which
// may be the very thing that died. The notice is a message of the reserved
// tag revokeTag whose blob says who revoked and why; the receiver's
// routineRead takes it at once (it is never queued for Recv), so a rank
// learns of it whatever it is doing. A rank that is told does not pass the
// notice on: the revoking rank tells everyone itself, and a rank that dies
// before it has told all leaves a loss that the others see anyway.
//
// Revocation leaves the point-to-point connections working — the survivors
// agree on their next communicator over them (package peers' Shrink) — and
// fails the ring's calls (AllGather, Barrier): the one in progress, and
// every later one.

// revokeTag is the reserved tag of revocation notices.
const revokeTag uint32 = MaxTag + 2

// Revoke revokes the communicator: on this rank at once (Revoked is
// closed, RevokeCause returns reason wrapped with errs.ErrRevoked, the
// ring's call in progress ends with it and later ones fail), and on every
// other rank not known lost as the notice reaches it. It returns without
// waiting for the notices, which go out on goroutines that Close ends.
// Calling it again (or after a notice came) sends nothing more. Safe for
// concurrent use.
func (b *Bootstrap) Revoke(reason string) {
	b.setRevoked(fmt.Errorf("%s: %w", reason, errs.ErrRevoked))
	b.mu.Lock()
	sent := b.revokeSent
	b.revokeSent = true
	b.mu.Unlock()
	if sent {
		return
	}
	lost := b.Lost()
	for q := range b.nranks {
		if q == b.rank || slices.Contains(lost, q) {
			continue
		}
		b.peers.mu.Lock()
		if b.peers.closed {
			b.peers.mu.Unlock()
			return
		}
		b.peers.wg.Add(1)
		b.peers.mu.Unlock()
		go b.routineRevoke(q, reason)
	}
}

// routineRevoke sends rank q the notice of this rank's Revoke, within
// connectTimeout (Close ends it sooner, failing the pair).
func (b *Bootstrap) routineRevoke(q int, reason string) {
	defer b.peers.wg.Done()
	ctx, cancel := context.WithTimeout(context.Background(), connectTimeout)
	defer cancel()
	b.send(ctx, q, revokeTag, []byte(truncateReason(reason))) // a rank it cannot reach is lost, or closing
}

// Revoked returns a channel closed once the communicator is revoked, by
// this rank's Revoke or another rank's notice.
func (b *Bootstrap) Revoked() <-chan struct{} { return b.revokedc }

// RevokeCause returns why the communicator was revoked — who revoked it,
// wrapping errs.ErrRevoked — or nil.
func (b *Bootstrap) RevokeCause() error {
	b.mu.Lock()
	defer b.mu.Unlock()
	return b.revoked
}

// setRevoked revokes the communicator on this rank with err, unless it is
// already.
func (b *Bootstrap) setRevoked(err error) {
	b.mu.Lock()
	defer b.mu.Unlock()
	if b.revoked != nil {
		return
	}
	b.revoked = err
	close(b.revokedc)
	if b.cancelOp != nil {
		b.cancelOp(err)
	}
}

// revokedBy handles a revocation notice, which says who revoked and why.
func (b *Bootstrap) revokedBy(reason []byte) {
	b.setRevoked(fmt.Errorf("%s: %w", reason, errs.ErrRevoked))
}
