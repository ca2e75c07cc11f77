package bootstrap

import (
	"fmt"
	"net/netip"
	"slices"

	"github.com/ringo-ccl/ringo/internal/errs"
)

// Which ranks are gone. A Bootstrap learns it three ways, and keeps every
// rank it learns of (Lost), not only the first (PeerLost):
//
//   - the root reports a rank whose connection to it closed without a bye
//     (a lost frame);
//   - the root itself is lost: the ranks that live in the root's process —
//     the root tells every rank which, after the table (a hosts frame) —
//     died with it (a root stops only when every rank has left, or by
//     StopRoot, which a process whose ranks live on must not call). When
//     the root ran in a process of no rank (a launcher's, a test's), its
//     loss names no rank;
//   - a rank's listener, which listens from its Join to its Close, refuses
//     a point-to-point connection (tcp.DialUp): nothing listens there any
//     more, so the rank closed or its process is gone. This is how
//     survivors find ranks that died after the root did, when nobody is
//     left to report them.
//
// A rank that closed gracefully is not reported by the root, but it is
// gone too: when a survivor's connection attempt finds its listener
// closed, it counts as lost.

// Lost returns the ranks this rank knows are gone, in increasing order
// (nil when none): see above for how it learns of them. Safe for
// concurrent use; the set only grows.
func (b *Bootstrap) Lost() []int {
	b.mu.Lock()
	defer b.mu.Unlock()
	var out []int
	for r, gone := range b.lostRanks {
		if gone {
			out = append(out, r)
		}
	}
	return out
}

// markLost adds rank to the ranks known gone.
func (b *Bootstrap) markLost(rank int) {
	if rank < 0 || rank >= b.nranks || rank == b.rank {
		return
	}
	b.mu.Lock()
	b.lostRanks[rank] = true
	b.mu.Unlock()
}

// rootLost handles the loss of the root at addr (why: how its connection
// ended): the ranks of the root's process are lost with it, and the
// PeerLost error names the first of them; without any (or when this rank
// is one of them: the root stopped, this process lives) it names the root.
func (b *Bootstrap) rootLost(addr, why string) {
	b.mu.Lock()
	hosts := b.rootHosts
	b.mu.Unlock()
	if len(hosts) == 0 || slices.Contains(hosts, b.rank) {
		b.report(fmt.Errorf("bootstrap root at %s lost: %s: %w", addr, why, errs.ErrPeerLost))
		return
	}
	reason := fmt.Sprintf("the bootstrap root in its process, at %s, is lost (%s)", addr, why)
	for _, r := range hosts {
		b.markLost(r)
	}
	b.report(lostError(hosts[0], reason))
	for _, r := range hosts {
		b.lose(r, lostError(r, reason))
	}
}

// listenerGone handles a point-to-point connection to rank peer that its
// listener, at addr, refused: peer is lost. It returns the error naming it.
func (b *Bootstrap) listenerGone(peer int, addr netip.AddrPort) error {
	err := lostError(peer, fmt.Sprintf("its listener at %v refused a connection (the rank closed, or its process is gone)", addr))
	b.markLost(peer)
	b.report(err)
	return err
}
