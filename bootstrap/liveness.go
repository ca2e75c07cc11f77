package bootstrap

import (
	"context"
	"errors"
	"fmt"
	"net/netip"
	"os"
	"slices"
	"time"

	"github.com/ringo-ccl/ringo/internal/env"
	"github.com/ringo-ccl/ringo/internal/errs"
	"github.com/ringo-ccl/ringo/internal/tcp"
)

// Which ranks are gone. A Bootstrap learns it three ways, and keeps every
// rank it learns of (Lost), not only the first (PeerLost):
//
//   - the root reports a rank whose connection to it closed without a bye
//     (a lost frame);
//   - the root itself is lost: the ranks that live in the root's process —
//     the root tells every rank which, after the table (a hosts frame) —
//     died with it (a root stops only when every rank has left, or by
//     StopRoot, which a process whose ranks live on must not call), unless
//     the first of them still listens: then only the connection ended, and
//     the rank carries on without the root (rootLost). When the root ran in
//     a process of no rank (a launcher's, a test's), its loss names no
//     rank;
//   - a rank's listener, which listens from its Join to its Close, refuses
//     a point-to-point connection (tcp.DialUp): nothing listens there any
//     more, so the rank closed or its process is gone. Such a connection
//     is tried when a Send first needs one, and when a point-to-point
//     connection ends under this rank (routineProbe: a rank that lives on
//     keeps listening; one that closed or died does not). This is how
//     survivors find ranks that died after the root did, when nobody is
//     left to report them.
//
// A rank that closed gracefully is not reported by the root, but it is
// gone too: when a survivor's connection attempt finds its listener
// closed, it counts as lost. Only the root's reports (and its own loss)
// reach PeerLost, and so fail a communicator: a listener found closed
// only adds to Lost (the pair with that rank fails, as it would anyway),
// since ranks that end a job close one after the other.

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

// AwaitLost waits until rank is known gone (Lost lists it) or ctx ends,
// and reports whether it is. A caller that saw rank's connection fail
// waits so for the bootstrap's word (the root's report comes within
// milliseconds), so that Lost is complete when it goes on.
func (b *Bootstrap) AwaitLost(ctx context.Context, rank int) bool {
	for {
		b.mu.Lock()
		gone, more := rank >= 0 && rank < b.nranks && b.lostRanks[rank], b.lostMore
		b.mu.Unlock()
		if gone {
			return true
		}
		select {
		case <-more:
		case <-ctx.Done():
			return false
		}
	}
}

// CountLost counts rank gone on this rank's word alone: for a caller whose
// exchange with rank failed for good (its pair is out of step, so rank can
// take no further part with this one) and that neither the root nor the
// rank's listener has confirmed lost in time — under load a killed
// process's sockets may close only after the caller's grace.
func (b *Bootstrap) CountLost(rank int) { b.markLost(rank) }

// markLost adds rank to the ranks known gone.
func (b *Bootstrap) markLost(rank int) {
	if rank < 0 || rank >= b.nranks || rank == b.rank {
		return
	}
	b.mu.Lock()
	defer b.mu.Unlock()
	if !b.lostRanks[rank] {
		b.lostRanks[rank] = true
		close(b.lostMore)
		b.lostMore = make(chan struct{})
	}
}

// rootLost handles the end of the connection to the root at addr (why: how
// it ended): the ranks of the root's process are lost with it, and the
// PeerLost error names the first of them; without any (or when this rank
// is one of them: the root stopped, this process lives) it names the root.
// But when the first of them still listens (probe), the root's process
// lives on and only the connection ended — its code, or code beside it,
// closed it — so nobody is lost: the rank carries on without the root's
// reports (losses still show on the point-to-point connections) and says
// so at NCCL_DEBUG=INFO.
func (b *Bootstrap) rootLost(addr, why string) {
	env.Info(env.SubBootstrap, "bootstrap rank %d of %d: the connection to the root at %s ended (%s)", b.rank, b.nranks, addr, why)
	b.mu.Lock()
	hosts, closing := b.rootHosts, b.closing
	b.mu.Unlock()
	if len(hosts) == 0 || slices.Contains(hosts, b.rank) {
		b.report(fmt.Errorf("bootstrap root at %s lost: %s: %w", addr, why, errs.ErrPeerLost))
		return
	}
	if !closing && b.probe(hosts[0]) == probeAlive {
		env.Info(env.SubBootstrap, "bootstrap rank %d of %d: rank %d, in the root's process, still listens: carrying on without the root", b.rank, b.nranks, hosts[0])
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

// refusedLost handles a point-to-point connection to rank peer that its
// listener, at addr, refused: peer is lost. It returns the error naming it.
func (b *Bootstrap) refusedLost(peer int, addr netip.AddrPort) error {
	b.markLost(peer)
	return lostError(peer, fmt.Sprintf("its listener at %v refused a connection (the rank closed, or its process is gone)", addr))
}

// routineProbe dials rank peer's listener, whose point-to-point
// connection with this rank just ended or failed: if it refuses, peer is
// lost. A live listener takes the connection and waits for a hello, which
// the probe never sends: silence for probeSilence means peer lives on (the
// probe closes the connection). A connection that ends at once was taken
// by a dying process's listener (the kernel closes a killed process's
// sockets one after the other): the probe dials again. It ends within
// connectTimeout, or with Close.
func (b *Bootstrap) routineProbe(peer int) {
	defer b.peers.wg.Done()
	if b.probe(peer) == probeRefused {
		b.refusedLost(peer, b.table[peer])
	}
}

// probeResult is what probing a rank's listener found.
type probeResult int

const (
	probeUnknown probeResult = iota // no answer before the probe's time ran out (or Close)
	probeAlive                      // it took the connection and stayed silent
	probeRefused                    // nothing listens there any more
)

// probe dials rank peer's listener, as routineProbe describes, within
// connectTimeout or until Close.
func (b *Bootstrap) probe(peer int) probeResult {
	ctx, cancel := context.WithTimeout(b.quit, connectTimeout)
	defer cancel()
	addr := b.table[peer]
	for ctx.Err() == nil {
		c, err := tcp.DialUp(ctx, addr.String())
		if errors.Is(err, tcp.ErrRefused) {
			return probeRefused
		}
		if err != nil {
			return probeUnknown // ctx ended: a host that does not answer is not judged here
		}
		c.SetReadDeadline(time.Now().Add(probeSilence))
		_, err = c.Read(make([]byte, 1))
		c.Close()
		if errors.Is(err, os.ErrDeadlineExceeded) {
			return probeAlive
		}
		t := time.NewTimer(probeRetry)
		select {
		case <-t.C:
		case <-ctx.Done():
		}
		t.Stop()
	}
	return probeUnknown
}

const (
	probeSilence = 100 * time.Millisecond // a live listener says nothing for this long
	probeRetry   = 10 * time.Millisecond  // a dying one's connection ended: dial again after
)
