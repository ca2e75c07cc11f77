package ringo

import (
	"context"
	"errors"
	"fmt"

	"github.com/ringo-ccl/ringo/host"
	"github.com/ringo-ccl/ringo/internal/errs"
	"github.com/ringo-ccl/ringo/internal/mem"
	"github.com/ringo-ccl/ringo/reduce"
	"github.com/ringo-ccl/ringo/ring"
	"github.com/ringo-ccl/ringo/transport"
)

// Call is one collective with untyped buffers, in NCCL's terms: Count is the
// element count of each buffer for all-reduce, broadcast and reduce, of the
// output for reduce-scatter (the input holds Count × Size()), and of the
// input for all-gather (the output holds Count × Size()). Buffers may be
// longer than needed, must be aligned to the element size, and may be the
// same memory for an in-place call (for reduce-scatter, Recv is Send's
// segment of this rank; for all-gather, Send is Recv's segment). Send is
// unused by non-root broadcast ranks and Recv by non-root reduce ranks.
type Call struct {
	Coll       Collective
	Send, Recv []byte
	Count      int64
	Type       DataType
	Op         Op  // for reductions
	Root       int // for Broadcast and Reduce
}

// AllReduce combines every rank's send with op into every rank's recv. send
// and recv have the same length; they may be the same slice.
func AllReduce[T Elem](ctx context.Context, c *Comm, send, recv []T, op Op) error {
	if len(send) != len(recv) {
		return errs.Invalid("allreduce", c.rank, "send has %d elements, recv %d", len(send), len(recv))
	}
	return c.do(ctx, &Call{Coll: CollAllReduce, Send: mem.Bytes(send), Recv: mem.Bytes(recv), Count: int64(len(recv)), Type: TypeOf[T](), Op: op})
}

// ReduceScatter combines every rank's send with op and leaves segment r of
// the result in rank r's recv: len(send) = Size() × len(recv).
func ReduceScatter[T Elem](ctx context.Context, c *Comm, send, recv []T, op Op) error {
	if int64(len(send)) != int64(len(recv))*int64(c.size) {
		return errs.Invalid("reducescatter", c.rank, "send has %d elements, need %d ranks × recv's %d", len(send), c.size, len(recv))
	}
	return c.do(ctx, &Call{Coll: CollReduceScatter, Send: mem.Bytes(send), Recv: mem.Bytes(recv), Count: int64(len(recv)), Type: TypeOf[T](), Op: op})
}

// AllGather concatenates every rank's send, in rank order, into every rank's
// recv: len(recv) = Size() × len(send).
func AllGather[T Elem](ctx context.Context, c *Comm, send, recv []T) error {
	if int64(len(recv)) != int64(len(send))*int64(c.size) {
		return errs.Invalid("allgather", c.rank, "recv has %d elements, need %d ranks × send's %d", len(recv), c.size, len(send))
	}
	return c.do(ctx, &Call{Coll: CollAllGather, Send: mem.Bytes(send), Recv: mem.Bytes(recv), Count: int64(len(send)), Type: TypeOf[T]()})
}

// Broadcast copies root's send into every rank's recv. Only the root reads
// send (others may pass nil); at the root it has recv's length.
func Broadcast[T Elem](ctx context.Context, c *Comm, send, recv []T, root int) error {
	if c.rank == root && len(send) != len(recv) {
		return errs.Invalid("broadcast", c.rank, "root's send has %d elements, recv %d", len(send), len(recv))
	}
	return c.do(ctx, &Call{Coll: CollBroadcast, Send: mem.Bytes(send), Recv: mem.Bytes(recv), Count: int64(len(recv)), Type: TypeOf[T](), Root: root})
}

// Reduce combines every rank's send with op into root's recv. Only the root
// writes recv (others may pass nil); at the root it has send's length.
func Reduce[T Elem](ctx context.Context, c *Comm, send, recv []T, op Op, root int) error {
	if c.rank == root && len(send) != len(recv) {
		return errs.Invalid("reduce", c.rank, "send has %d elements, root's recv %d", len(send), len(recv))
	}
	return c.do(ctx, &Call{Coll: CollReduce, Send: mem.Bytes(send), Recv: mem.Bytes(recv), Count: int64(len(send)), Type: TypeOf[T](), Op: op, Root: root})
}

// Do runs one collective on this rank and returns when this rank's part is
// complete: its output is written and its input may be reused.
func (c *Comm) Do(ctx context.Context, call Call) error { return c.do(ctx, &call) }

// do is Do on a call of the caller's. The typed collectives call it
// rather than Do: a Call that a caller writes field by field and Do's
// copy then reads 16 bytes at a time stalls each read, whose bytes come
// from several of the stores still in flight (~3 ns of a world of one's
// 8-byte all-reduce on the 2-core development VM).
func (c *Comm) do(ctx context.Context, call *Call) error {
	if err := c.enterHost(ctx, call); err != nil {
		return err
	}
	defer c.release()
	c.marks.Start(call.Coll, call.Count, call.Type, call.Op)
	err := c.run(ctx, call)
	c.marks.End(c.seq, err)
	return c.leave(err)
}

// leave ends an entered call with its error: a timeout's gains the stall
// report (which shows this rank still inside), the rank leaves the group,
// and a failure breaks the group.
func (c *Comm) leave(err error) error {
	if err != nil && errors.Is(err, ErrTimeout) {
		if stall := c.group.Stalled(c.seq); stall != "" {
			err = fmt.Errorf("%w; %s", err, stall)
		}
	}
	c.group.Leave(c.rank)
	if err != nil {
		c.group.Fail(err)
	}
	return err
}

// RunSchedule runs this rank's program of a schedule — every rank's plans
// of one collective as ring.Schedule.Plans returns them, made by a tool or
// by hand rather than by ringo's planner — on this host communicator. Every
// rank calls it with the same plans; plans[Rank()] is this rank's. Steps may
// name any peer: the connections the schedule needs that the communicator
// has not made yet are made first (between processes, by every rank at
// once) and kept. call gives the buffers, type and operation; its
// collective, count and root must be the schedule's, and the plans' FIFO
// size and channels must fit the communicator's connections. GPU
// communicators run schedules with RunScheduleDevice.
func (c *Comm) RunSchedule(ctx context.Context, plans []*ring.Plan, call Call) error {
	op := call.Coll.String()
	if c.gpu != nil {
		return errs.Invalid(op, c.rank, "RunSchedule on a GPU communicator: its buffers are on the GPU (RunScheduleDevice)")
	}
	a := call.args()
	if err := a.CheckSchedule(plans, c.rank, c.size, c.cfg.Channels, c.cfg.BuffSize); err != nil {
		return err
	}
	if err := c.enter(ctx, &a); err != nil {
		return err
	}
	defer c.release()
	err := c.group.Connect(ctx, c.rank, transport.PlanEdges(plans...))
	if err == nil {
		err = c.execute(ctx, plans[c.rank], &call, nil)
	} else {
		err = errs.At(op, c.rank, err)
	}
	c.group.Leave(c.rank)
	if err != nil {
		c.group.Fail(err)
	}
	return err
}

// run plans and executes a validated call.
func (c *Comm) run(ctx context.Context, call *Call) error {
	if call.Count == 0 {
		return nil
	}
	if c.size == 1 {
		return c.runOne(call)
	}
	if c.hier.Covers(call.Coll, call.Op.Kind(), call.Count) {
		return c.runHier(ctx, call)
	}
	oneShot := c.oneShot(call)
	if (!oneShot || host.WindowsFirst(call.Coll, int(call.Count)*call.Type.Size(), c.size, c.boardCrowded)) && c.windowRuns(call) {
		if ran, err := c.runWindowed(ctx, call); ran || err != nil {
			return err
		}
	}
	if oneShot {
		return c.runOneShot(ctx, call)
	}
	if c.twoShotRuns(call) {
		return c.runTwoShot(ctx, call)
	}
	if c.directRuns(call) {
		return c.runDirect(ctx, call)
	}
	return c.runRing(ctx, call)
}

// oneShot reports whether call takes the board's one exchange: boardRuns
// and a call that reads no more than host.OneShotLimit.
func (c *Comm) oneShot(call *Call) bool {
	if !c.boardRuns() {
		return false
	}
	limit := host.OneShotLimit(call.Coll, c.boardCrowded)
	read, fits := host.OneShotBytes(call.Coll, int(call.Count)*call.Type.Size(), c.size, limit)
	return fits && read <= limit
}

// boardRuns reports whether calls may skip the ring for the board: every
// rank shares this host, the ring variants' exact reductions, and no
// protocol forced (NCCL_PROTO, Config.Protocol: who forces one wants it
// run).
func (c *Comm) boardRuns() bool {
	if c.board == nil || c.cfg.ProtoFrom != "" {
		return false
	}
	switch c.cfg.Variant {
	case ring.BF16Wire, ring.FP32Wire:
		return false
	}
	return true
}

// runOneShot runs a call that oneShot admits on the board.
func (c *Comm) runOneShot(ctx context.Context, call *Call) error {
	f, err := c.funcFor(call)
	if err != nil {
		return err
	}
	c.shot = host.OneShot{Coll: call.Coll, In: call.Send, Out: call.Recv, Bytes: int(call.Count) * call.Type.Size(), Root: call.Root, Func: f}
	c.resetWait(ctx)
	return host.RunOneShot(c.board, &c.wait, c.rank, c.size, &c.shot)
}

// twoShotRuns reports whether call takes the board's rounds
// (host.RunTwoShot): an all-reduce too large for one exchange, up to
// host.TwoShotCrowdedMax, on a host whose ranks outnumber its cores, and
// boardRuns. It comes before the reads of the peers' buffers (directRuns),
// even with RINGO_CMA=1: on a crowded host a call's waits, not its copies,
// cost most at these sizes, and the two-shot waits twice where the reads
// wait three times.
func (c *Comm) twoShotRuns(call *Call) bool {
	return c.boardCrowded && c.boardRuns() && call.Coll == ring.AllReduce && int(call.Count)*call.Type.Size() <= host.TwoShotCrowdedMax
}

// windowRuns reports whether call may try the windows
// (host.RunWindowed): a communicator whose ranks registered host windows
// and directRuns' other conditions. A call small enough for the board's
// one exchange tries them first only where host.WindowsFirst says they
// are quicker. It does not look at the call's buffers: whether every
// rank's are in windows, the ranks learn together in the attempt.
func (c *Comm) windowRuns(call *Call) bool {
	if !c.windowed.Load() || !c.boardRuns() {
		return false
	}
	f, err := c.funcFor(call)
	return err == nil && host.DirectRuns(call.Coll, f)
}

// runWindowed runs a call that windowRuns admits, if every rank's buffers
// are in windows, and reports whether it did.
func (c *Comm) runWindowed(ctx context.Context, call *Call) (bool, error) {
	f, err := c.funcFor(call)
	if err != nil {
		return false, err
	}
	x := &c.win
	x.Coll, x.In, x.Out, x.Bytes, x.Root, x.Func = call.Coll, call.Send, call.Recv, int(call.Count)*call.Type.Size(), call.Root, f
	c.resetWait(ctx)
	ran, err := host.RunWindowed(c.board, &c.wait, c.rank, c.size, x)
	if ran {
		c.windowedCalls++
	}
	return ran, err
}

// runTwoShot runs a call that twoShotRuns admits.
func (c *Comm) runTwoShot(ctx context.Context, call *Call) error {
	f, err := c.funcFor(call)
	if err != nil {
		return err
	}
	t := &c.two
	t.In, t.Out, t.Bytes, t.Func = call.Send, call.Recv, int(call.Count)*call.Type.Size(), f
	c.resetWait(ctx)
	return host.RunTwoShot(c.board, &c.wait, c.rank, c.size, &c.two)
}

// directRuns reports whether call reads the peers' buffers (host.RunDirect):
// ranks of one host that the kernel lets read each other, a call too large
// for the board, and oneShot's other conditions.
func (c *Comm) directRuns(call *Call) bool {
	if c.attach == nil || !c.boardRuns() {
		return false
	}
	f, err := c.funcFor(call)
	return err == nil && host.DirectRuns(call.Coll, f)
}

// runDirect runs a call that directRuns admits.
func (c *Comm) runDirect(ctx context.Context, call *Call) error {
	f, err := c.funcFor(call)
	if err != nil {
		return err
	}
	d := &c.direct
	d.Coll, d.In, d.Out, d.Bytes, d.Root, d.Func = call.Coll, call.Send, call.Recv, int(call.Count)*call.Type.Size(), call.Root, f
	c.resetWait(ctx)
	return host.RunDirect(c.board, c.attach, &c.wait, c.rank, c.size, d)
}

// runOne runs a call of a one-rank communicator, where every collective's
// output is its input: nothing moves in place, a copy out of place, and a
// reduction applies only the op's pre- and post-operations (PreMulSum's
// scaling; Avg of one rank is the identity). No ring, no executor.
func (c *Comm) runOne(call *Call) error {
	n := call.Count * int64(call.Type.Size())
	in, out := call.Send[:n], call.Recv[:n]
	if call.Coll.Reduces() {
		f, err := c.funcs.Get(call.Type, call.Op, 1)
		if err != nil {
			return errs.Invalid(call.Coll.String(), c.rank, "%v", err)
		}
		f.Final(out, in)
	} else if !mem.Same(in, out) {
		copy(out, in)
	}
	return nil
}

// runRing runs a call on the communicator's own ring.
func (c *Comm) runRing(ctx context.Context, call *Call) error {
	elt := call.Type.Size()
	variant, wire, err := c.variantFor(call.Coll, call.Type, call.Op)
	if err != nil {
		return err
	}
	proto := c.cfg.Protocol(call.Count * int64(elt))
	if wire != nil {
		proto = ring.Simple
	}
	spec := ring.Spec{
		Coll: call.Coll, Ring: c.cfg.Ring, Rank: c.rank, Root: call.Root,
		Count: call.Count, EltSize: elt, Channels: c.cfg.Channels, Proto: proto, BuffSize: c.cfg.BuffSize(proto),
		Variant: variant,
	}
	if err := c.plan.Build(spec); err != nil {
		return errs.InvalidErr(call.Coll.String(), c.rank, err)
	}
	return c.execute(ctx, &c.plan, call, wire)
}

// execute runs plan p of a checked call on the host executor.
func (c *Comm) execute(ctx context.Context, p *ring.Plan, call *Call, wire *reduce.Wire) error {
	f, err := c.funcFor(call)
	if err != nil {
		return err
	}
	job := host.Job{Plan: p, In: call.Send, Out: call.Recv, Wait: &c.wait, Wire: wire, Trace: c.trace, Seq: c.seq, Func: f}
	return c.runJob(ctx, job)
}

// funcFor returns the reduction of a call that reduces, nil for one that
// does not.
func (c *Comm) funcFor(call *Call) (*reduce.Func, error) {
	if !call.Coll.Reduces() {
		return nil, nil
	}
	f, err := c.funcs.Get(call.Type, call.Op, c.size)
	if err != nil {
		return nil, errs.InvalidErr(call.Coll.String(), c.rank, err)
	}
	return f, nil
}

// runJob runs job on the host executor, bounded by ctx, the timeout and
// the aborts.
func (c *Comm) runJob(ctx context.Context, job host.Job) error {
	job.Wait = &c.wait
	c.resetWait(ctx)
	return c.exec.Run(job)
}

// resetWait readies the rank's waits for a call bounded by ctx, the
// timeout and the aborts. How the waits poll is the communicator's: set in
// its first call, kept after (transport.Waiter.Again).
func (c *Comm) resetWait(ctx context.Context) {
	if c.waitSet {
		c.wait.Again(ctx)
		return
	}
	c.waitSet = true
	timeout := c.cfg.Timeout
	if timeout < 0 {
		timeout = 0
	}
	c.wait.Reset(ctx, timeout, &c.abort, c.group.Broken(), c.parentBroken)
	if c.group.Proxied() {
		c.wait.SleepSoon()
	}
	if c.crowd {
		c.wait.YieldCores()
	} else if c.board != nil {
		c.wait.Patient() // a process of its own on a core of its own
	}
}

// variantFor returns the variant call runs with, and the wire sum of a
// precision variant. A precision variant applies to the sums of all-reduces
// of its buffer types (float32 for bf16wire; float16 and bfloat16 for
// fp32wire) on two or more ranks; every other call runs the ring, exact.
func (c *Comm) variantFor(coll Collective, dt DataType, op Op) (ring.Variant, *reduce.Wire, error) {
	v := c.cfg.Variant
	on, carried := reduce.Float32, false
	switch v {
	case ring.BF16Wire:
		on, carried = reduce.BF16, dt == reduce.Float32
	case ring.FP32Wire:
		carried = dt == reduce.Half || dt == reduce.BF16
	case ring.Hierarchical: // its calls that run flat run the ring
		return ring.RingVariant, nil, nil
	default:
		return v, nil, nil
	}
	if !carried || coll != CollAllReduce || op.Kind() != reduce.Sum || c.size < 2 {
		return ring.RingVariant, nil, nil
	}
	if w := c.wires[dt]; w != nil {
		return v, w, nil
	}
	w, err := reduce.NewWire(dt, on)
	if err != nil {
		return 0, nil, errs.InvalidErr(coll.String(), c.rank, err)
	}
	c.wires[dt] = w
	return v, w, nil
}
