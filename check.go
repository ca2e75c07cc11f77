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
	if a.Coll.P2P() && !a.AllRanks {
		if err := ctx.Err(); err != nil {
			return errs.AtDetail(a.OpName(), c.rank, "not started", err)
		}
		return nil
	}
	stream := calls.Stream{GPU: -1}
	if a.Device {
		stream = calls.Stream{GPU: c.gpu.dev, Handle: a.Stream}
	}
	c.rec = calls.Record{Coll: a.Coll, Count: a.Count, Type: a.Type, Op: a.Op.Kind(), Root: a.Root, Stream: stream}
	if err := c.start(ctx, a.Name); err != nil {
		return err
	}
	if a.Device {
		captures.note(c, a.Stream)
	}
	return nil
}

// start numbers a checked collective, c.rec, and enters it in the group,
// unless ctx has ended. name is its name in errors ("": c.rec.Coll's).
func (c *Comm) start(ctx context.Context, name string) error {
	if err := ctx.Err(); err != nil {
		return errs.AtDetail(calls.OpName(c.rec.Coll, name), c.rank, "not started", err)
	}
	c.seq++
	c.rec.Seq = c.seq
	if err := c.group.Enter(c.rank, &c.rec); err != nil {
		c.group.Fail(err)
		return errs.At(calls.OpName(c.rec.Coll, name), c.rank, err)
	}
	return nil
}

// enterHost is enter for a host call (Do). A call with the arguments of
// the last one this rank checked, if Check passed it (c.passed) — a
// training loop's, call after call — is neither made into calls.Args nor
// checked again: Check reads nothing but what hostKey keeps, so it would
// pass again. Skipping both took a world of one's 8-byte all-reduce from
// 55 to 41 ns on the 2-core development VM (BENCHMARKS.md, issue 25).
func (c *Comm) enterHost(ctx context.Context, call *Call) error {
	if why := c.claim(false); why != "" {
		return errs.Invalid(call.Coll.String(), c.rank, "%s", why)
	}
	var err error
	if c.passed.is(call) {
		if err = c.Err(); err != nil {
			err = errs.AtDetail(call.Coll.String(), c.rank, "not started", err)
		} else {
			c.rec = calls.Record{Coll: call.Coll, Count: call.Count, Type: call.Type, Op: call.Op.Kind(), Root: call.Root, Stream: calls.Stream{GPU: -1}}
			err = c.start(ctx, "")
		}
	} else {
		a := call.args()
		if err = c.admit(ctx, &a); err == nil && !call.Coll.P2P() {
			c.passed = keyOf(call) // a point-to-point call's entry differs (admit)
		}
	}
	if err != nil {
		c.release()
	}
	return err
}

// hostKey is what calls.Args.Check reads of a host call: all of it but
// its buffers' bytes, the buffers by address and length.
type hostKey struct {
	coll         Collective
	count        int64
	typ          DataType
	op           Op
	root         int
	send, recv   uintptr
	nSend, nRecv int
	passed       bool // a call's key (the zero key is none)
}

// is reports whether k is call's key, field by field: building call's key
// and comparing the two structs cost a world of one's call ~8 ns more
// (BENCHMARKS.md, issue 25).
func (k *hostKey) is(call *Call) bool {
	return k.passed && k.coll == call.Coll && k.count == call.Count && k.typ == call.Type && k.op == call.Op && k.root == call.Root &&
		k.send == mem.Addr(call.Send) && k.recv == mem.Addr(call.Recv) && k.nSend == len(call.Send) && k.nRecv == len(call.Recv)
}

// keyOf returns call's hostKey.
func keyOf(call *Call) hostKey {
	return hostKey{coll: call.Coll, count: call.Count, typ: call.Type, op: call.Op, root: call.Root,
		send: mem.Addr(call.Send), recv: mem.Addr(call.Recv), nSend: len(call.Send), nRecv: len(call.Recv), passed: true}
}

// failed returns the error that makes this communicator unusable, if any,
// located at op.
func (c *Comm) failed(op string) error {
	if err := c.Err(); err != nil {
		return errs.AtDetail(op, c.rank, "not started", err)
	}
	return nil
}
