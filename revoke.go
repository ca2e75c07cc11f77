package ringo

import "fmt"

// Revoke revokes the communicator (NCCL's ncclCommRevoke, ULFM's
// MPIX_Comm_revoke): every call in progress on any of its ranks ends with
// an error, and so does every later one, wrapping ErrRevoked (and
// ErrAborted) and naming the rank that revoked. It reaches this process's
// ranks at once and the ranks of other processes through the bootstrap's
// point-to-point connections, not its root (which may be what died), a
// few milliseconds later; Revoke returns without waiting for them. The
// survivors of a failure revoke so that all of them stop, whatever they
// were doing, and agree to shrink (Shrink, whose DEFAULT mode suits a
// revoked communicator) or close. Safe to call from any goroutine, at any
// time, more than once.
func (c *Comm) Revoke() {
	c.group.Revoke(fmt.Sprintf("rank %d called Revoke", c.rank))
}

// Lost returns the ranks of the communicator that the library knows are
// gone, in increasing order (nil when none) — the set a survivor passes to
// ShrinkAbort, so that the application need not agree on it by itself.
// Across processes it is what the bootstrap learned: ranks the root
// reported (a connection to it that closed without Close: the process
// died), the ranks that lived in the root's process when the root is lost,
// and ranks whose bootstrap listener refused a connection (closed, or
// their process gone). Survivors may learn of a loss at slightly different
// times: call it once the communicator has failed (Err names a lost peer).
// In one process (NewLocal) no rank dies alone; ranks are lost only as a
// test marks them. Safe to call from any goroutine at any time.
func (c *Comm) Lost() []int { return c.group.Lost() }
