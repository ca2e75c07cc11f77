package bootstrap

import "context"

// The library's own check messages between two ranks (RINGO_CHECK=1: a
// point-to-point call's message sizes, which the receiver compares with
// its own): a tag of their own, above MaxTag, so a user's Send and Recv
// never take them; in order per pair, as every tag's messages.

// announceTag is the reserved tag of Announce's messages.
const announceTag uint32 = MaxTag + 3

// Announce sends blob to rank peer, for peer's Announced; it returns once
// the message is written, as Send does, with Send's errors.
func (b *Bootstrap) Announce(ctx context.Context, peer int, blob []byte) error {
	if err := b.checkPeer("announce", peer, 0); err != nil {
		return err
	}
	if err := b.send(ctx, peer, announceTag, blob); err != nil {
		return b.wrapPeer("announce", peer, err)
	}
	return nil
}

// Announced returns the next of rank peer's Announce messages, waiting for
// it until ctx ends, with Recv's errors.
func (b *Bootstrap) Announced(ctx context.Context, peer int) ([]byte, error) {
	if err := b.checkPeer("announced", peer, 0); err != nil {
		return nil, err
	}
	blob, err := b.recv(ctx, peer, announceTag)
	if err != nil {
		return nil, b.wrapPeer("announced", peer, err)
	}
	return blob, nil
}
