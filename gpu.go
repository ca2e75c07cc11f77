package ringo

import (
	"context"
	"errors"
	"fmt"
	"slices"
	"sync"
	"sync/atomic"

	"github.com/ringo-ccl/ringo/device"
	"github.com/ringo-ccl/ringo/internal/calls"
	"github.com/ringo-ccl/ringo/internal/direct"
	"github.com/ringo-ccl/ringo/internal/errs"
	"github.com/ringo-ccl/ringo/internal/mem"
	"github.com/ringo-ccl/ringo/kernels"
	"github.com/ringo-ccl/ringo/reduce"
	"github.com/ringo-ccl/ringo/ring"
	"github.com/ringo-ccl/ringo/transport"
)

// DevPtr is n elements of T in the memory of one GPU: an address, a length
// and the GPU's ordinal. The element type keeps a float16 buffer from being
// passed where float32 is expected. A DevPtr from DeviceAlloc owns its memory
// until Free; one made with DevicePointer wraps memory allocated elsewhere.
type DevPtr[T Elem] struct {
	addr uintptr
	n    int
	dev  int
}

// DevicePointer wraps n elements of T at address addr of GPU dev.
func DevicePointer[T Elem](dev int, addr uintptr, n int) DevPtr[T] {
	return DevPtr[T]{addr: addr, n: n, dev: dev}
}

// DeviceAlloc allocates n elements of T on GPU dev.
func DeviceAlloc[T Elem](dev, n int) (DevPtr[T], error) {
	if n < 0 {
		return DevPtr[T]{}, fmt.Errorf("%w: %d elements", ErrInvalidArgument, n)
	}
	addr, err := device.Alloc(dev, int64(n)*int64(TypeOf[T]().Size()))
	return DevPtr[T]{addr: addr, n: n, dev: dev}, err
}

// DeviceAllocShared allocates n elements of T on GPU dev as NCCL's
// ncclMemAlloc does: memory of CUDA's virtual memory API (cuMemCreate; its
// size rounded up to CUDA's granularity, 2 MiB on an H200), which every
// GPU with peer access reaches and ranks in other processes map through a
// file descriptor when it lies in a window (RegisterWindow). An error
// wraps ErrNotSupported where the driver has no virtual memory management.
func DeviceAllocShared[T Elem](dev, n int) (DevPtr[T], error) {
	if n < 0 {
		return DevPtr[T]{}, fmt.Errorf("%w: %d elements", ErrInvalidArgument, n)
	}
	addr, err := device.AllocShared(dev, int64(n)*int64(TypeOf[T]().Size()))
	return DevPtr[T]{addr: addr, n: n, dev: dev}, err
}

// Free releases memory from DeviceAlloc or DeviceAllocShared once the GPU
// has finished its work.
func (p DevPtr[T]) Free() error { return device.Free(p.dev, p.addr) }

// Len returns the number of elements.
func (p DevPtr[T]) Len() int { return p.n }

// Device returns the GPU's ordinal.
func (p DevPtr[T]) Device() int { return p.dev }

// Addr returns the device address of the first element.
func (p DevPtr[T]) Addr() uintptr { return p.addr }

// Slice returns elements [i, j) of p; it panics when they are out of range,
// as slicing a Go slice does.
func (p DevPtr[T]) Slice(i, j int) DevPtr[T] {
	if i < 0 || j < i || j > p.n {
		panic(fmt.Sprintf("ringo: DevPtr slice [%d:%d] of %d elements", i, j, p.n))
	}
	return DevPtr[T]{addr: p.addr + uintptr(i*TypeOf[T]().Size()), n: j - i, dev: p.dev}
}

// CopyFrom copies src (at most Len() elements) to the start of p.
func (p DevPtr[T]) CopyFrom(src []T) error {
	if len(src) > p.n {
		return fmt.Errorf("%w: copying %d elements into a buffer of %d", ErrInvalidArgument, len(src), p.n)
	}
	return device.CopyHtoD(p.dev, p.addr, mem.Bytes(src))
}

// CopyTo copies the start of p into dst (at most Len() elements).
func (p DevPtr[T]) CopyTo(dst []T) error {
	if len(dst) > p.n {
		return fmt.Errorf("%w: copying %d elements out of a buffer of %d", ErrInvalidArgument, len(dst), p.n)
	}
	return device.CopyDtoH(p.dev, mem.Bytes(dst), p.addr)
}

// Stream is a CUDA stream of one GPU. The Stream returned by DefaultStream
// is the GPU's legacy default stream.
type Stream struct {
	dev int
	h   uintptr
}

// NewStream creates a stream on GPU dev (one that does not synchronise
// with the default stream).
func NewStream(dev int) (Stream, error) {
	h, err := device.NewStream(dev)
	return Stream{dev: dev, h: h}, err
}

// DefaultStream returns GPU dev's legacy default stream.
func DefaultStream(dev int) Stream { return Stream{dev: dev} }

// StreamHandle wraps a CUstream made elsewhere (a framework's stream).
func StreamHandle(dev int, h uintptr) Stream { return Stream{dev: dev, h: h} }

// Handle returns the CUstream.
func (s Stream) Handle() uintptr { return s.h }

// Sync waits for all work on the stream.
func (s Stream) Sync() error { return device.SyncStream(s.dev, s.h) }

// Graph is a CUDA graph of the work captured from a stream (CaptureGraph):
// ringo's calls on that stream, and anything else enqueued there, replayed
// by Launch on any stream of the GPU. A replay of a graph of collectives
// must be matched by the other ranks' replays, in order, as the calls
// themselves would be: each replay is one call of the communicators whose
// collectives the graph holds, numbered among their calls.
type Graph struct {
	dev   int
	exec  uintptr
	comms []*Comm // whose numbered calls (collectives) the capture recorded
}

// CaptureGraph runs fn, capturing what it enqueues on s into a graph
// instead of running it (CUDA's stream capture, in relaxed mode, so that
// other goroutines — ranks of this process capturing or synchronising at
// the same time — neither break the capture nor are refused because of
// it; ringo's calls also work under PyTorch's global-mode captures): fn
// makes ringo calls on s, which record their launches. Each
// collective's plan is uploaded when first seen, outside the capture, and
// kept while any graph may launch it. A failing fn, or one whose capture
// fails (a call the capture cannot record, such as a synchronisation),
// returns the error and no graph.
func CaptureGraph(s Stream, fn func() error) (*Graph, error) {
	if err := device.BeginCapture(s.dev, s.h); err != nil {
		return nil, err
	}
	captures.begin(s.h)
	ferr := fn()
	comms := captures.end(s.h)
	exec, err := device.EndCapture(s.dev, s.h)
	if ferr != nil || err != nil {
		if err == nil {
			device.DestroyGraph(s.dev, exec)
		}
		return nil, errors.Join(ferr, err)
	}
	return &Graph{dev: s.dev, exec: exec, comms: comms}, nil
}

// Launch enqueues a replay of the graph on stream s of its GPU. The replay
// is a call of each communicator whose collectives the graph holds: it is
// refused once one is closed or broken (its kernels would use what the
// communicator has given back), and, as a collective is, it waits until
// the other ranks of this process that share the GPU have enqueued their
// call before it (Comm.enterReplay), so that no rank's replay lands in a
// hardware queue ahead of a peer's kernel it waits for (BENCHMARKS "The
// graph hang outside ringo").
func (g *Graph) Launch(s Stream) error {
	if s.dev != g.dev {
		return fmt.Errorf("%w: a graph of GPU %d launched on a stream of GPU %d", ErrInvalidArgument, g.dev, s.dev)
	}
	for i, c := range g.comms {
		if err := c.enterReplay(s); err != nil {
			for _, e := range g.comms[:i] {
				e.leaveReplay()
			}
			return err
		}
	}
	err := device.LaunchGraph(g.dev, g.exec, s.h)
	for _, c := range g.comms {
		if err != nil {
			c.group.Fail(errs.At("graph replay", c.rank, err))
		}
		c.leaveReplay()
	}
	return err
}

// enterReplay enters a replay of a graph holding c's collectives, on
// stream s, as c's next call: held, numbered and entered in c's group
// (calls.Replay), which orders it after the calls before it of the ranks
// sharing c's GPU.
func (c *Comm) enterReplay(s Stream) error {
	const op = "graph replay"
	if err := c.hold(op, true); err != nil {
		return err
	}
	if err := c.failed(op); err != nil {
		c.release()
		return err
	}
	c.seq++
	c.rec = calls.Replay(c.seq, calls.Stream{GPU: c.gpu.dev, Handle: s.h})
	if err := c.group.Enter(c.rank, &c.rec); err != nil {
		c.group.Fail(err)
		c.release()
		return errs.At(op, c.rank, err)
	}
	return nil
}

// leaveReplay ends the replay enterReplay entered.
func (c *Comm) leaveReplay() {
	c.group.Leave(c.rank)
	c.release()
}

// captures are the streams CaptureGraph is capturing, each with the
// communicators whose numbered calls it has recorded (Comm.admit notes
// them): what a replay of the graph is a call of.
var captures captureSet

type captureSet struct {
	n  atomic.Int32 // captures under way: a call reads only this when there are none
	mu sync.Mutex
	by map[uintptr][]*Comm // by stream
}

func (cs *captureSet) begin(stream uintptr) {
	cs.mu.Lock()
	defer cs.mu.Unlock()
	if cs.by == nil {
		cs.by = map[uintptr][]*Comm{}
	}
	if _, ok := cs.by[stream]; !ok {
		cs.by[stream] = nil
		cs.n.Add(1)
	}
}

func (cs *captureSet) end(stream uintptr) []*Comm {
	cs.mu.Lock()
	defer cs.mu.Unlock()
	comms, ok := cs.by[stream]
	if ok {
		delete(cs.by, stream)
		cs.n.Add(-1)
	}
	return comms
}

// note records that c made a numbered call on stream, if CaptureGraph is
// capturing it.
func (cs *captureSet) note(c *Comm, stream uintptr) {
	if cs.n.Load() == 0 {
		return
	}
	cs.mu.Lock()
	defer cs.mu.Unlock()
	if comms, ok := cs.by[stream]; ok && !slices.Contains(comms, c) {
		cs.by[stream] = append(comms, c)
	}
}

// Close releases the graph (replays already enqueued run to the end).
func (g *Graph) Close() error { return device.DestroyGraph(g.dev, g.exec) }

// Close destroys a stream made by NewStream.
func (s Stream) Close() error {
	if s.h == 0 {
		return nil
	}
	return device.DestroyStream(s.dev, s.h)
}

// DeviceCall is Call for GPU buffers: device addresses of the rank's GPU,
// with NCCL's count (see Call). Any alignment works; 16-byte aligned
// buffers are fastest.
type DeviceCall struct {
	Coll       Collective
	Send, Recv uintptr
	Count      int64
	Type       DataType
	Op         Op
	Root       int
}

// gpuRank is what a rank of a GPU communicator has besides its Comm.
type gpuRank struct {
	dev   int
	exec  *device.Rank
	check *device.Checker // the argument checks' memory of the GPU's allocations and stream
	// direct: the communicator's ranks share this process, so a send may
	// write into its receiver's buffer (ring.P2PSpec.Direct) unless
	// NCCL_P2P_DIRECT_DISABLE says not to.
	direct bool
	// stripe: with direct, on a communicator whose ranks all share one GPU,
	// the rank's share of Settings.P2PStripe (Settings.RankStripe,
	// ring.P2PSpec.Stripe); else 0.
	stripe int64
	// reads: every rank's GPU reaches the others' memory and the rank's
	// executor knows their sync areas (package direct), so all-reduces that
	// Settings.Direct picks read the inputs directly; nil: the ring only.
	reads *direct.Peers
}

// GPU returns the ordinal of the rank's GPU, or -1 for a host rank.
func (c *Comm) GPU() int {
	if c.gpu == nil {
		return -1
	}
	return c.gpu.dev
}

// DoDevice enqueues one collective on stream s of the rank's GPU and
// returns; the collective runs when the stream reaches it, as with NCCL.
// Arguments are checked before anything is enqueued. Use Wait (or the
// stream) to learn when it is done.
func (c *Comm) DoDevice(ctx context.Context, call DeviceCall, s Stream) error {
	a := call.args(s)
	if err := c.enter(ctx, &a); err != nil {
		return err
	}
	defer c.release()
	defer c.group.Leave(c.rank)
	if call.Count == 0 {
		return nil
	}
	var err error
	c.marks.Start(call.Coll, call.Count, call.Type, call.Op) // the enqueue: the kernels' steps are traced apart
	if c.hier.Covers(call.Coll, call.Op.Kind(), call.Count) {
		err = c.hierDevice(ctx, call, s)
	} else {
		err = c.launch(call, s)
	}
	c.marks.End(c.seq, err)
	if err != nil {
		c.group.Fail(err)
	}
	return err
}

// RunScheduleDevice is RunSchedule for a GPU communicator: it enqueues
// this rank's plan of the schedule on stream s, once the connections the
// schedule needs that the communicator has not made yet are made (by
// every rank at once: each calls it with the same plans) and kept.
func (c *Comm) RunScheduleDevice(ctx context.Context, plans []*ring.Plan, call DeviceCall, s Stream) error {
	op := call.Coll.String()
	if c.gpu == nil {
		return errs.Invalid(op, c.rank, "RunScheduleDevice on a host communicator (RunSchedule)")
	}
	a := call.args(s)
	if err := a.CheckSchedule(plans, c.rank, c.size, c.cfg.Channels, c.cfg.BuffSize); err != nil {
		return err
	}
	if sp := &plans[c.rank].Spec; c.group.Proxied() && sp.BuffSize != c.cfg.BuffSize(sp.Proto) {
		return errs.Invalid(op, c.rank, "the schedule's %v FIFOs of %d bytes over the net transport, whose proxies forward this communicator's slots (FIFOs of %d bytes)",
			sp.Proto, sp.BuffSize, c.cfg.BuffSize(sp.Proto))
	}
	if err := c.enter(ctx, &a); err != nil {
		return err
	}
	defer c.release()
	defer c.group.Leave(c.rank)
	f, err := c.funcs.Get(call.Type, call.Op, c.size)
	if err != nil {
		return errs.InvalidErr(op, c.rank, err)
	}
	if !call.Coll.Reduces() {
		f = nil
	}
	if err := c.group.Connect(ctx, c.rank, transport.PlanEdges(plans...)); err != nil {
		err = errs.At(op, c.rank, err)
		c.group.Fail(err)
		return err
	}
	if err := c.gpu.exec.LaunchSchedule(plans[c.rank], c.seq, call.Send, call.Recv, f, s.h); err != nil {
		err = c.launchErr(op, err)
		c.group.Fail(err)
		return err
	}
	return nil
}

// launch enqueues a validated call on the communicator's own ring, or, on
// a communicator of one rank, as a copy (see device.Rank.Local).
func (c *Comm) launch(call DeviceCall, s Stream) error {
	op := call.Coll.String()
	bytes := call.Count * int64(call.Type.Size())
	if c.size == 1 {
		var f *reduce.Func
		if call.Coll.Reduces() {
			var err error
			if f, err = c.funcs.Get(call.Type, call.Op, 1); err != nil {
				return errs.Invalid(op, c.rank, "%v", err)
			}
		}
		if err := c.gpu.exec.Local(call.Send, call.Recv, bytes, f, s.h); err != nil {
			return c.launchErr(op, err)
		}
		return nil
	}
	if kind := c.cfg.Direct(call.Coll, bytes, c.size); c.gpu.reads != nil && kind != kernels.NotDirect {
		var f *reduce.Func
		if call.Coll.Reduces() {
			var err error
			if f, err = c.funcs.Get(call.Type, call.Op, c.size); err != nil {
				return errs.InvalidErr(op, c.rank, err)
			}
		}
		input := bytes // what the others read
		if kind == kernels.DirectReduceScatter {
			input *= int64(c.size)
		}
		how, at := c.gpu.reads.Source(call.Send, input)
		if err := c.gpu.exec.LaunchDirect(kind, call.Send, call.Recv, bytes, f, how, at, s.h); err != nil {
			return c.launchErr(op, err)
		}
		return nil
	}
	if call.Coll == CollAllGather || call.Coll == CollReduceScatter {
		bytes *= int64(c.size)
	}
	variant, wire, err := c.variantFor(call.Coll, call.Type, call.Op)
	if err != nil {
		return err
	}
	protos := c.cfg.Protos
	if wire != nil { // a precision variant: Simple, its wire bytes
		protos = [3]bool{ring.Simple: true}
		bytes = bytes / int64(call.Type.Size()) * int64(variant.WireSize(call.Type.Size()))
	}
	proto, channels := c.cfg.GPUChoice(call.Coll, c.size, bytes, protos)
	spec := ring.Spec{
		Coll: call.Coll, Ring: c.cfg.Ring, Rank: c.rank, Root: call.Root, Count: call.Count,
		EltSize: call.Type.Size(), Channels: channels, Proto: proto, BuffSize: c.cfg.BuffSize(proto),
		Variant: variant,
	}
	if err := c.plan.Build(spec); err != nil {
		return errs.InvalidErr(op, c.rank, err)
	}
	f, err := c.funcs.Get(call.Type, call.Op, c.size)
	if err != nil {
		return errs.InvalidErr(op, c.rank, err)
	}
	if !call.Coll.Reduces() {
		f = nil
	}
	if err := c.gpu.exec.Launch(&c.plan, c.seq, call.Send, call.Recv, f, s.h); err != nil {
		return c.launchErr(op, err)
	}
	return nil
}

// launchErr locates a failed launch. A rank's executor refuses to launch
// once its abort flag is up, which whatever raised it does after breaking
// the communicator with the reason (a lost peer, an Abort): the reason is
// the error, not the flag.
func (c *Comm) launchErr(op string, err error) error {
	if errors.Is(err, ErrAborted) {
		if cause := c.Err(); cause != nil {
			err = cause
		}
	}
	return errs.AtDetail(op, c.rank, "launch", err)
}

// Wait returns when every collective this rank enqueued on s has finished.
// It is bounded by ctx's deadline or, without one, by Config.Timeout: when
// that passes, the collective is aborted on every rank of the communicator
// (the GPUs' kernels stop at their next check) and Wait returns ErrTimeout.
func (c *Comm) Wait(ctx context.Context, s Stream) error {
	if c.gpu == nil {
		return errs.Invalid("wait", c.rank, "this communicator's ranks are on the host")
	}
	if _, ok := ctx.Deadline(); !ok && c.cfg.Timeout > 0 {
		var cancel context.CancelFunc
		ctx, cancel = context.WithTimeout(ctx, c.cfg.Timeout)
		defer cancel()
	}
	if c.hier != nil { // the stream also runs the sub-communicators' kernels
		defer context.AfterFunc(ctx, c.hier.Abort)()
	}
	if err := c.gpu.exec.Wait(ctx, s.h); err != nil {
		err = errs.At("wait", c.rank, err)
		c.group.Fail(err)
		return err
	}
	return c.failed("wait")
}

// AllReduceDevice enqueues an all-reduce of GPU buffers of one length.
func AllReduceDevice[T Elem](ctx context.Context, c *Comm, send, recv DevPtr[T], op Op, s Stream) error {
	if send.n != recv.n {
		return errs.Invalid("allreduce", c.rank, "send has %d elements, recv %d", send.n, recv.n)
	}
	return c.DoDevice(ctx, DeviceCall{Coll: CollAllReduce, Send: send.addr, Recv: recv.addr, Count: int64(recv.n), Type: TypeOf[T](), Op: op}, s)
}

// ReduceScatterDevice enqueues a reduce-scatter: send holds Size() × recv's
// elements.
func ReduceScatterDevice[T Elem](ctx context.Context, c *Comm, send, recv DevPtr[T], op Op, s Stream) error {
	if int64(send.n) != int64(recv.n)*int64(c.size) {
		return errs.Invalid("reducescatter", c.rank, "send has %d elements, need %d ranks × recv's %d", send.n, c.size, recv.n)
	}
	return c.DoDevice(ctx, DeviceCall{Coll: CollReduceScatter, Send: send.addr, Recv: recv.addr, Count: int64(recv.n), Type: TypeOf[T](), Op: op}, s)
}

// AllGatherDevice enqueues an all-gather: recv holds Size() × send's
// elements.
func AllGatherDevice[T Elem](ctx context.Context, c *Comm, send, recv DevPtr[T], s Stream) error {
	if int64(recv.n) != int64(send.n)*int64(c.size) {
		return errs.Invalid("allgather", c.rank, "recv has %d elements, need %d ranks × send's %d", recv.n, c.size, send.n)
	}
	return c.DoDevice(ctx, DeviceCall{Coll: CollAllGather, Send: send.addr, Recv: recv.addr, Count: int64(send.n), Type: TypeOf[T]()}, s)
}

// BroadcastDevice enqueues a broadcast from root's send into every recv.
func BroadcastDevice[T Elem](ctx context.Context, c *Comm, send, recv DevPtr[T], root int, s Stream) error {
	if c.rank == root && send.n != recv.n {
		return errs.Invalid("broadcast", c.rank, "root's send has %d elements, recv %d", send.n, recv.n)
	}
	return c.DoDevice(ctx, DeviceCall{Coll: CollBroadcast, Send: send.addr, Recv: recv.addr, Count: int64(recv.n), Type: TypeOf[T](), Root: root}, s)
}

// ReduceDevice enqueues a reduce of every send into root's recv.
func ReduceDevice[T Elem](ctx context.Context, c *Comm, send, recv DevPtr[T], op Op, root int, s Stream) error {
	if c.rank == root && send.n != recv.n {
		return errs.Invalid("reduce", c.rank, "send has %d elements, root's recv %d", send.n, recv.n)
	}
	return c.DoDevice(ctx, DeviceCall{Coll: CollReduce, Send: send.addr, Recv: recv.addr, Count: int64(send.n), Type: TypeOf[T](), Op: op, Root: root}, s)
}
