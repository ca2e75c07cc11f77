package bootstrap

import "context"

// The library's own messages between two ranks, each kind on a tag of its
// own above MaxTag, so that a user's Send and Recv never take them; in
// order per pair, as every tag's messages:
//
//   - Announce: RINGO_CHECK=1's check messages (a point-to-point call's
//     message sizes, which the receiver compares with its own);
//   - Notify: a shrink's word to a rank it excludes (peers.Shrink), so that
//     an excluded rank that calls the shrink anyway fails at once.

// The reserved tags of Announce's and Notify's messages.
const (
	announceTag uint32 = MaxTag + 3
	notifyTag   uint32 = MaxTag + 4
)

// Announce sends blob to rank peer, for peer's Announced; it returns once
// the message is written, as Send does, with Send's errors.
func (b *Bootstrap) Announce(ctx context.Context, peer int, blob []byte) error {
	return b.sendReserved(ctx, "announce", peer, announceTag, blob)
}

// Announced returns the next of rank peer's Announce messages, waiting for
// it until ctx ends, with Recv's errors.
func (b *Bootstrap) Announced(ctx context.Context, peer int) ([]byte, error) {
	return b.recvReserved(ctx, "announced", peer, announceTag)
}

// Notify sends blob to rank peer, for peer's Notified; as Announce.
func (b *Bootstrap) Notify(ctx context.Context, peer int, blob []byte) error {
	return b.sendReserved(ctx, "notify", peer, notifyTag, blob)
}

// Notified returns the next of rank peer's Notify messages; as Announced.
func (b *Bootstrap) Notified(ctx context.Context, peer int) ([]byte, error) {
	return b.recvReserved(ctx, "notified", peer, notifyTag)
}

func (b *Bootstrap) sendReserved(ctx context.Context, op string, peer int, tag uint32, blob []byte) error {
	if err := b.checkPeer(op, peer, 0); err != nil {
		return err
	}
	if err := b.send(ctx, peer, tag, blob); err != nil {
		return b.wrapPeer(op, peer, err)
	}
	return nil
}

func (b *Bootstrap) recvReserved(ctx context.Context, op string, peer int, tag uint32) ([]byte, error) {
	if err := b.checkPeer(op, peer, 0); err != nil {
		return nil, err
	}
	blob, err := b.recv(ctx, peer, tag)
	if err != nil {
		return nil, b.wrapPeer(op, peer, err)
	}
	return blob, nil
}
