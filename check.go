package ringo

import (
	"context"
	"fmt"
	"math"

	"github.com/ringo-ccl/ringo/internal/calls"
	"github.com/ringo-ccl/ringo/internal/errs"
	"github.com/ringo-ccl/ringo/internal/mem"
)

// Every call, host or device, starts in enter and is checked by check, as
// NCCL routes every call through ncclEnqueueCheck (src/enqueue.cc). What
// depends on where the buffers live — a host slice's length and
// alignment, a device pointer's allocation, the stream — is in checkBuf,
// addrs and the stream's check; the rest is written once.

// The buffers of a call, as indexes of args' arrays.
const (
	sendBuf = iota
	recvBuf
)

var bufNames = [2]string{sendBuf: "send", recvBuf: "recv"}

// args is a call as its entry sees it, whatever its buffers' kind: the
// fields of a Call or a DeviceCall.
type args struct {
	coll  Collective
	count int64
	dt    DataType
	op    Op
	root  int

	host   [2][]byte  // a host call's buffers (Do)
	device bool       // a device call (DoDevice): the fields below apply
	dev    [2]uintptr // its buffers' device addresses
	stream Stream     // the stream it is enqueued on
}

func (call *Call) args() args {
	return args{coll: call.Coll, count: call.Count, dt: call.Type, op: call.Op, root: call.Root,
		host: [2][]byte{call.Send, call.Recv}}
}

func (call *DeviceCall) args(s Stream) args {
	return args{coll: call.Coll, count: call.Count, dt: call.Type, op: call.Op, root: call.Root,
		device: true, dev: [2]uintptr{call.Send, call.Recv}, stream: s}
}

// enter starts a call on this rank. In this order, it refuses a call of
// the other kind than the communicator's ranks, a call while another runs,
// a closed or broken communicator, bad arguments (check) and an ended ctx;
// then it numbers the call and enters it in the group, which compares it
// with the other ranks' calls. On success the caller holds the rank (busy)
// and releases it when the call is over; on failure nothing is held.
func (c *Comm) enter(ctx context.Context, a *args) error {
	op := a.coll.String()
	switch {
	case a.device && c.gpu == nil:
		return errs.Invalid(op, c.rank, "this communicator's ranks are on the host: use Do")
	case !a.device && c.gpu != nil:
		return errs.Invalid(op, c.rank, "this communicator's ranks are GPUs: use DoDevice")
	}
	if !c.busy.CompareAndSwap(false, true) {
		if c.closed.Load() {
			return errs.Invalid(op, c.rank, "communicator is closed")
		}
		return errs.Invalid(op, c.rank, "another call is running on this rank's communicator (one goroutine at a time)")
	}
	if err := c.admit(ctx, a); err != nil {
		c.busy.Store(false)
		return err
	}
	return nil
}

// admit is enter's part once the rank is held.
func (c *Comm) admit(ctx context.Context, a *args) error {
	op := a.coll.String()
	if err := c.failed(op); err != nil {
		return err
	}
	if err := c.check(a); err != nil {
		return err
	}
	if err := ctx.Err(); err != nil {
		return errs.AtDetail(op, c.rank, "not started", err)
	}
	c.seq++
	rec := calls.Record{Seq: c.seq, Coll: a.coll, Count: a.count, Type: a.dt, Op: a.op.Kind(), Root: a.root,
		Stream: calls.Stream{GPU: -1}}
	if a.device {
		rec.Stream = calls.Stream{GPU: c.gpu.dev, Handle: a.stream.h}
	}
	if err := c.group.Enter(c.rank, rec); err != nil {
		c.group.Fail(err)
		return errs.At(op, c.rank, err)
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

// check validates a call's arguments against this rank and communicator:
// the collective, datatype, op, root and count; a device call's stream;
// the bytes each buffer must hold, without overflow; each buffer the rank
// uses (checkBuf); and, where send and recv overlap, that they are NCCL's
// in-place layout.
func (c *Comm) check(a *args) error {
	op := a.coll.String()
	bad := func(format string, x ...any) error { return errs.Invalid(op, c.rank, format, x...) }
	if !a.coll.Valid() {
		return bad("unknown collective %d", a.coll)
	}
	if !a.dt.Valid() {
		return bad("invalid datatype %d", a.dt)
	}
	if a.coll.Reduces() {
		if _, err := c.funcs.get(a.dt, a.op, c.size); err != nil {
			return errs.InvalidErr(op, c.rank, err)
		}
	}
	if a.coll.Rooted() && (a.root < 0 || a.root >= c.size) {
		return bad("root %d outside [0, %d)", a.root, c.size)
	}
	if a.count < 0 {
		return bad("count %d is negative", a.count)
	}
	if a.device {
		if err := c.gpu.check.Stream(a.stream.dev, a.stream.h); err != nil {
			return bad("%v", err)
		}
	}
	elt := int64(a.dt.Size())
	in, out := a.count, a.count
	switch a.coll {
	case CollReduceScatter:
		if a.count > math.MaxInt64/int64(c.size) {
			return bad("count %d × %d ranks overflows", a.count, c.size)
		}
		in *= int64(c.size)
	case CollAllGather:
		if a.count > math.MaxInt64/int64(c.size) {
			return bad("count %d × %d ranks overflows", a.count, c.size)
		}
		out *= int64(c.size)
	}
	if max(in, out) > math.MaxInt64/elt {
		return bad("count %d of %v overflows", max(in, out), a.dt)
	}
	usesSend := a.coll != CollBroadcast || a.root == c.rank
	usesRecv := a.coll != CollReduce || a.root == c.rank
	if usesSend {
		if err := c.checkBuf(a, sendBuf, in*elt); err != nil {
			return bad("%v", err)
		}
	}
	if usesRecv {
		if err := c.checkBuf(a, recvBuf, out*elt); err != nil {
			return bad("%v", err)
		}
	}
	if usesSend && usesRecv && a.count > 0 {
		s, r := a.addrs()
		overlap := s < r+uintptr(out*elt) && r < s+uintptr(in*elt)
		seg := uintptr(int64(c.rank) * a.count * elt)
		if overlap && !inPlace(a.coll, s, r, seg) {
			return bad("send and recv overlap without being in place")
		}
	}
	return nil
}

// checkBuf checks buffer i of a call, of which the rank uses need bytes
// (none when need is 0): a host slice's presence, length and alignment to
// the element size, or that a device buffer lies in one allocation of the
// rank's GPU.
func (c *Comm) checkBuf(a *args, i int, need int64) error {
	name := bufNames[i]
	switch {
	case need == 0:
		return nil
	case a.device:
		if err := c.gpu.check.Ptr(a.dev[i], need); err != nil {
			return fmt.Errorf("%s buffer: %v", name, err)
		}
		return nil
	}
	b := a.host[i]
	switch {
	case b == nil:
		return fmt.Errorf("%s buffer is nil", name)
	case int64(len(b)) < need:
		return fmt.Errorf("%s buffer has %d bytes, need %d", name, len(b), need)
	case !mem.Aligned(b, a.dt.Size()):
		return fmt.Errorf("%s buffer is not aligned to %d-byte %v elements", name, a.dt.Size(), a.dt)
	}
	return nil
}

// addrs returns the addresses of a call's send and recv buffers.
func (a *args) addrs() (send, recv uintptr) {
	if a.device {
		return a.dev[sendBuf], a.dev[recvBuf]
	}
	return mem.Addr(a.host[sendBuf]), mem.Addr(a.host[recvBuf])
}

// inPlace reports whether overlapping buffers at send and recv form NCCL's
// in-place layout: one buffer, except that reduce-scatter's recv is the
// rank's segment of send and all-gather's send the rank's segment of recv,
// seg bytes from the start.
func inPlace(coll Collective, send, recv, seg uintptr) bool {
	switch coll {
	case CollReduceScatter:
		return recv == send+seg
	case CollAllGather:
		return send == recv+seg
	}
	return send == recv
}
