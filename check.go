package ringo

import (
	"context"

	"github.com/ringo-ccl/ringo/internal/calls"
	"github.com/ringo-ccl/ringo/internal/errs"
	"github.com/ringo-ccl/ringo/internal/mem"
)

// Every call, host or device, starts in enter and is checked by
// calls.Args.Check, as NCCL routes every call through ncclEnqueueCheck
// (src/enqueue.cc).

func (call *Call) args() calls.Args {
	return calls.Args{Coll: call.Coll, Count: call.Count, Type: call.Type, Op: call.Op, Root: call.Root,
		Host: [2][]byte{call.Send, call.Recv}}
}

func (call *DeviceCall) args(s Stream) calls.Args {
	return calls.Args{Coll: call.Coll, Count: call.Count, Type: call.Type, Op: call.Op, Root: call.Root,
		Device: true, Dev: [2]uintptr{call.Send, call.Recv}, StreamGPU: s.dev, Stream: s.h}
}

// enter starts a call on this rank. In this order, it refuses a call of
// the other kind than the communicator's ranks, a call while another runs,
// a closed or broken communicator, bad arguments (Args.Check) and an ended ctx;
// then it numbers the call and enters it in the group, which compares it
// with the other ranks' calls. On success the caller holds the rank (busy)
// and releases it when the call is over; on failure nothing is held.
func (c *Comm) enter(ctx context.Context, a *calls.Args) error {
	if why := c.claim(a.Device); why != "" {
		return errs.Invalid(a.OpName(), c.rank, "%s", why) // the name only now: the common case needs none
	}
	if err := c.admit(ctx, a); err != nil {
		c.release()
		return err
	}
	return nil
}

// hold is enter's first part, for calls that name themselves op: it
// refuses a call of the other kind than the communicator's ranks (device:
// a GPU call) and a call while another runs or after Close, and otherwise
// holds the rank (busy).
func (c *Comm) hold(op string, device bool) error {
	if why := c.claim(device); why != "" {
		return errs.Invalid(op, c.rank, "%s", why)
	}
	return nil
}

// claim is hold without the error: it returns why the rank cannot be
// held, or "" once it holds it.
func (c *Comm) claim(device bool) string {
	switch {
	case device && c.gpu == nil:
		return "this communicator's ranks are on the host: use Do"
	case !device && c.gpu != nil:
		return "this communicator's ranks are GPUs: use DoDevice"
	}
	if !c.busy.CompareAndSwap(false, true) {
		if c.closed.Load() {
			return "communicator is closed"
		}
		return "another call is running on this rank's communicator (one goroutine at a time)"
	}
	return ""
}

// release ends what hold began: the rank is free for its next call. A
// release store, not Store's XCHG, which would wait for the call's stores
// to reach the cache first: this and the group's two progress stores cost
// a world of one's 8-byte all-reduce ~20 ns of its ~100 as XCHGs
// (`ringo bench --ranks 1`: 0.10 → 0.08 µs).
func (c *Comm) release() { mem.StoreReleaseBool(&c.busy, false) }

// admit is enter's part once the rank is held. A point-to-point call that
// only some ranks make (Send, Recv, SendRecv) is neither numbered nor
// entered: the ranks' collectives keep their numbers.
func (c *Comm) admit(ctx context.Context, a *calls.Args) error {
	if err := c.Err(); err != nil {
		return errs.AtDetail(a.OpName(), c.rank, "not started", err)
	}
	var dev calls.DeviceCheck
	if c.gpu != nil {
		dev = c.gpu.check
	}
	if err := a.Check(c.rank, c.size, &c.funcs, dev); err != nil {
		return err
	}
	if err := ctx.Err(); err != nil {
		return errs.AtDetail(a.OpName(), c.rank, "not started", err)
	}
	if a.Coll.P2P() && !a.AllRanks {
		return nil
	}
	c.seq++
	rec := calls.Record{Seq: c.seq, Coll: a.Coll, Count: a.Count, Type: a.Type, Op: a.Op.Kind(), Root: a.Root,
		Stream: calls.Stream{GPU: -1}}
	if a.Device {
		rec.Stream = calls.Stream{GPU: c.gpu.dev, Handle: a.Stream}
	}
	if err := c.group.Enter(c.rank, rec); err != nil {
		c.group.Fail(err)
		return errs.At(a.OpName(), c.rank, err)
	}
	if a.Device {
		captures.note(c, a.Stream)
	}
	return nil
}

// failed returns the error that makes this communicator unusable, if any,
// located at op.
func (c *Comm) failed(op string) error {
	if err := c.Err(); err != nil {
		return errs.AtDetail(op, c.rank, "not started", err)
	}
	return nil
}
