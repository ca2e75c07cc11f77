//go:build cuda

package device

import (
	"cmp"
	"context"
	"encoding/binary"
	"fmt"
	"math/bits"
	"slices"
	"sync"
	"sync/atomic"

	"github.com/ringo-ccl/ringo/internal/cuda"
	"github.com/ringo-ccl/ringo/internal/errs"
	"github.com/ringo-ccl/ringo/kernels"
	"github.com/ringo-ccl/ringo/reduce"
	"github.com/ringo-ccl/ringo/ring"
)

// rankState is a Rank in a build with the cuda tag.
type rankState struct {
	dev      *cuda.Device
	sms      int            // the GPU's multiprocessors
	table    cuda.Ptr       // the connection table (RingoConn per entry)
	entries  *kernels.Table // what it holds
	channels int
	overlap  bool         // launches overlap their stream predecessor's end (New)
	flag     *cuda.Mapped // word 0: abort
	// flagMu orders Abort, which any goroutine may call (a watcher that
	// saw a peer lost, a proxy whose connection broke), before Close frees
	// the flag: an Abort after that finds flagFreed and does nothing.
	flagMu    sync.Mutex
	flagFreed bool
	plans     map[planKey]*planEntry
	p2pKeys   map[*ring.Plan]uint64 // the schedule keys of point-to-point plans launched (see plan)
	// reduceNames are the reducing kernels' names, by type and device op,
	// as launches first ask for them.
	reduceNames kernelNames
	spare       map[int][]*planEntry // evicted plans' memory, by size, for new plans
	// uploads is pinned host memory that plans are uploaded from on the
	// call's stream (see plan), handed out to plans uploadsUsed bytes
	// at a time; dropped holds plans whose launch failed after their
	// upload was enqueued, freed at Close.
	uploads     *cuda.Mapped
	uploadsUsed int
	dropped     []*planEntry
	launches    uint64         // launches made, the plans' clock
	churn       bool           // PlanCache/2 plans were kept once: launches are watched
	fences      [nFences]fence // the latest, round robin
	nfences     int            // fences recorded
	old         []*planEntry   // evict's scratch
	scratch     []byte
	args        [cuda.MaxArgs]uint64
	trace       *gpuTrace // nil unless EnableTrace
	// The direct collectives': the rank's sync area (DirectArea) with its
	// staging buffer's bytes, and its RingoDirect (SetDirect), 0 until made;
	// directNames by kind (less one), type and op.
	area, direct cuda.Ptr
	stage        int64
	directRank   int // its rank and the ranks of its SetDirect
	directRanks  int
	directNames  [kernels.DirectReduceScatter]kernelNames
	// Launch order across streams (orderFor): mark is recorded after every
	// launch that is not captured into a graph; marked says it has been,
	// latest on stream markedOn.
	mark     cuda.Event
	marked   bool
	markedOn uintptr
}

// Streams. A rank's kernels share its connections, FIFO counters and sync
// areas, so two of them must never run at once: when a rank's calls go on
// several streams (PyTorch's FSDP puts all-gathers on one and
// reduce-scatters on another), each launch waits for the rank's previous
// one, as NCCL's launches wait for their communicator's. One marker event
// is recorded after every launch, in the launch's cgo crossing, and a
// launch on another stream than the previous one's waits for it first. A
// launch captured into a graph neither waits nor is recorded (the graph
// orders its own replays); the launches around it keep their order.

// PlanCache is how many plans a rank keeps in device memory before it
// evicts the least recently used of those no kernel can still read (down
// to half as many): a job that calls collectives of ever new shapes
// (dynamic batch sizes, a soak) does not grow without bound. An evicted
// plan's memory serves the next new plan of its size class; it is freed at
// Close only, because cuMemFree waits for the whole device — for another
// rank's kernel on the same GPU, which may be waiting for this rank's next
// launch.
const PlanCache = 256

// uploadBytes is a rank's pinned memory for plans' uploads (see plan):
// every plan of up to 4 KiB (2 ranks' point-to-point plans over 64
// channels, every collective's on 32) in a full cache of PlanCache.
const uploadBytes = PlanCache * 4 << 10

// Watching launches. A rank that has never kept PlanCache/2 plans launches
// plainly, as before the cache was bounded: nothing is evicted, so nothing
// needs to be known. The first time it keeps that many it enters churn:
// every plan it has is pinned (any may have been captured into a graph),
// and from then on each launch asks whether its stream is being captured
// (pinning the plan if so), and every fenceEvery-th records a fence after
// it: a marker event that, once done, shows every earlier launch on its
// stream finished, which is what eviction asks. A fence per launch cost
// ~1 µs of GPU time at 128–512 KiB on 2×H200.
const fenceEvery = 16

// nFences is how many of the latest fences a rank keeps.
const nFences = 4

// planEntry is a plan in device memory and what is known of its use.
type planEntry struct {
	key    planKey
	ptr    cuda.Ptr
	size   int      // bytes at ptr: a power of two
	host   []byte   // size bytes of Rank.uploads it is uploaded from; nil: synchronously
	hostAt cuda.Ptr // where the GPU reads host
	grid   int      // its launches' blocks (kernels.Grid)
	stream uintptr  // the stream of its latest launch
	last   uint64   // Rank.launches at that launch
	// pinned: kept until Close, because a CUDA graph may replay a launch
	// of it at any time (it was launched into a stream capture), or it was
	// launched on another stream before its last launch was known to be
	// over.
	pinned bool
}

// fence is a marker recorded on stream after the launch that made
// Rank.launches at.
type fence struct {
	done   cuda.Event
	stream uintptr
	at     uint64
}

// planKey is everything a rank's plan depends on besides the rank's ring,
// which is fixed per communicator.
type planKey struct {
	coll     ring.Collective
	count    int64
	eltSize  int
	root     int
	proto    ring.Protocol
	channels int
	buff     int
	variant  ring.Variant
	sched    uint64 // a schedule's: its encoding's hash (never 0); 0 for the planner's plans
}

// newRank is New in a build with the cuda tag.
func newRank(ordinal, channels int, overlap bool) (*Rank, error) {
	dev, err := cuda.Open(ordinal)
	if err != nil {
		return nil, err
	}
	if err := LoadKernels(dev); err != nil {
		return nil, err
	}
	sms, err := dev.SMCount()
	if err != nil {
		return nil, err
	}
	flag, err := dev.AllocMapped(4096)
	if err != nil {
		return nil, err
	}
	uploads, err := dev.AllocMapped(uploadBytes)
	if err != nil {
		dev.FreeMapped(flag)
		return nil, err
	}
	return &Rank{rankState{dev: dev, sms: sms, channels: channels, overlap: overlap && dev.Overlaps(), flag: flag, uploads: uploads,
		plans: map[planKey]*planEntry{}, p2pKeys: map[*ring.Plan]uint64{}, spare: map[int][]*planEntry{}}}, nil
}

// LoadKernels loads ringo's kernels, every module of package kernels, into
// dev, and every kernel of them (once per device; later calls are no-ops).
//
// Every kernel now, not at its first launch: CUDA loads a kernel's code
// lazily (the default since CUDA 12.2), and loading it can wait for the
// GPU, while ranks of one process share it and a rank's kernel there
// spins until a peer launches — which the peer, waiting for the same
// device to find its own next kernel, never did. On one H200, 2 ranks'
// back-to-back calls (TestGPUBackToBack) hung so in every fresh process,
// 8 of 8, and only passed after other tests had used the kernels
// (BENCHMARKS "Point-to-point in tiles").
func LoadKernels(dev *cuda.Device) error {
	for _, m := range kernels.Modules() {
		if err := dev.LoadModule(m.Name, m.Fatbin); err != nil {
			return err
		}
	}
	for _, name := range kernels.Names() {
		if _, err := dev.Func(name); err != nil {
			return err
		}
	}
	return nil
}

var resident sync.Map // ordinal → int

// residentBlocks is Resident in a build with the cuda tag.
func residentBlocks(ordinal int) (int, error) {
	if n, ok := resident.Load(ordinal); ok {
		return n.(int), nil
	}
	dev, err := cuda.Open(ordinal)
	if err != nil {
		return 0, err
	}
	if err := LoadKernels(dev); err != nil {
		return 0, err
	}
	sms, err := dev.SMCount()
	if err != nil {
		return 0, err
	}
	perSM := -1
	for _, name := range kernels.Collectives() {
		fn, err := dev.Func(name)
		if err != nil {
			return 0, err
		}
		n, err := dev.Occupancy(fn, kernels.Threads)
		if err != nil {
			return 0, err
		}
		if perSM < 0 || n < perSM {
			perSM = n
		}
	}
	resident.Store(ordinal, sms*perSM)
	return sms * perSM, nil
}

// launchPlan is Launch in a build with the cuda tag.
func (r *Rank) launchPlan(p *ring.Plan, sched bool, seq uint64, in, out uintptr, f *reduce.Func, stream uintptr) error {
	if r.aborted() {
		return fmt.Errorf("%w: an earlier collective was aborted", errs.ErrAborted)
	}
	if len(p.Channels) > r.channels {
		return fmt.Errorf("%w: plan has %d channels, the rank's connections %d", errs.ErrInvalidArgument, len(p.Channels), r.channels)
	}
	if r.entries == nil {
		return fmt.Errorf("device: rank on GPU %d launched before it has a connection table", r.dev.Ordinal)
	}
	name, arg, err := "ringo_copy", uint64(0), error(nil)
	if p.P2P != nil {
		name, arg = kernels.P2PName, kernels.P2PArg(p)
	}
	if f != nil {
		var op reduce.DeviceOp
		op, arg = f.Device()
		if p.Spec.Variant.Precision() {
			name, err = kernels.WireName(f.Type(), p.Spec.WireSize())
		} else {
			name, err = r.reduceKernel(f.Type(), op)
		}
		if err != nil {
			return err
		}
	}
	fn, err := r.dev.Func(name)
	if err != nil {
		return err
	}
	plan, fresh, err := r.plan(p, sched, stream)
	if err != nil {
		return err
	}
	if r.churn && plan.last > 0 && plan.stream != stream && !plan.pinned && !r.finished(plan, r.doneFences()) {
		plan.pinned = true // fences on this stream will not show the other's launch over
	}
	r.args = [cuda.MaxArgs]uint64{uint64(r.table), uint64(plan.ptr), uint64(in), uint64(out), arg, kernels.Geom(p), uint64(r.flag.Dev)}
	if err := r.launch(fn, p, plan, stream); err != nil {
		if fresh { // its upload may land later: no launch on another stream may read it
			delete(r.plans, plan.key)
			r.dropped = append(r.dropped, plan)
		}
		return err
	}
	if r.trace != nil {
		r.trace.launched(p, seq)
	}
	return nil
}

// reduceKernel returns the name of the reducing kernel of type t and op,
// made once (kernels.Name builds it: an allocation per call otherwise).
func (r *Rank) reduceKernel(t reduce.DataType, op reduce.DeviceOp) (string, error) {
	return cachedName(&r.reduceNames, t, op, ringName)
}

func ringName(t reduce.DataType, op reduce.DeviceOp) (string, error) {
	return kernels.Name(t, op, true)
}

// directNamers name the reducing direct kernels by kind (less one).
var directNamers = [kernels.DirectReduceScatter]func(reduce.DataType, reduce.DeviceOp) (string, error){
	func(t reduce.DataType, op reduce.DeviceOp) (string, error) {
		return kernels.DirectName(t, op, kernels.OneShot)
	},
	func(t reduce.DataType, op reduce.DeviceOp) (string, error) {
		return kernels.DirectName(t, op, kernels.TwoShot)
	},
	func(t reduce.DataType, op reduce.DeviceOp) (string, error) {
		return kernels.DirectName(t, op, kernels.DirectReduceScatter)
	},
}

// kernelNames are kernel names by type and device op.
type kernelNames = [reduce.NumTypes][reduce.DevSumPostDiv + 1]string

// cachedName returns the kernel of type t and op that name makes, kept in
// cache after the first time.
func cachedName(cache *kernelNames, t reduce.DataType, op reduce.DeviceOp, name func(reduce.DataType, reduce.DeviceOp) (string, error)) (string, error) {
	if int(t) >= len(cache) || int(op) >= len(cache[t]) {
		return name(t, op)
	}
	if n := cache[t][op]; n != "" {
		return n, nil
	}
	n, err := name(t, op)
	if err == nil {
		cache[t][op] = n
	}
	return n, err
}

// directSync is DirectSync in a build with the cuda tag.
func (r *Rank) directSync() (*kernels.DirectSync, error) {
	if r.area == 0 {
		return nil, nil
	}
	b := make([]byte, kernels.DirectSyncBytes)
	if err := r.dev.CopyDtoH(b, r.area); err != nil {
		return nil, err
	}
	return kernels.DecodeDirectSync(b)
}

// directArea is DirectArea in a build with the cuda tag.
func (r *Rank) directArea(stage int64) (uintptr, error) {
	if r.area == 0 {
		p, err := r.dev.AllocZeroed(kernels.DirectSyncBytes+stage, kernels.DirectSyncBytes)
		if err != nil {
			return 0, err
		}
		r.area, r.stage = p, stage
	}
	return uintptr(r.area), nil
}

// directWindowsAt is where the windows' table sits in the allocation of
// RingoDirect: after it, 128-byte aligned.
const directWindowsAt = 128

// setDirect is SetDirect in a build with the cuda tag.
func (r *Rank) setDirect(rank int, areas []uintptr, order []int) error {
	r.directRank, r.directRanks = rank, len(areas)
	if r.direct == 0 {
		const size = directWindowsAt + kernels.DirectWindowsBytes
		p, err := r.dev.AllocZeroed(size, size)
		if err != nil {
			return err
		}
		r.direct = p
	}
	words := make([]uint64, len(areas))
	for i, a := range areas {
		words[i] = uint64(a)
	}
	b, err := kernels.EncodeDirect(words, rank, order, uint64(r.direct)+directWindowsAt)
	if err != nil {
		return err
	}
	return r.dev.CopyHtoD(r.direct, b)
}

// setWindow is SetWindow in a build with the cuda tag.
func (r *Rank) setWindow(w int, addrs []uintptr) error {
	if r.direct == 0 {
		return fmt.Errorf("device: a window on GPU %d before SetDirect", r.dev.Ordinal)
	}
	if w < 0 || w >= kernels.DirectMaxWindows || len(addrs) > kernels.DirectMaxRanks {
		return fmt.Errorf("%w: window %d of %d ranks (at most %d windows of %d ranks)", errs.ErrInvalidArgument, w, len(addrs), kernels.DirectMaxWindows, kernels.DirectMaxRanks)
	}
	b := make([]byte, 8*kernels.DirectMaxRanks)
	for q, a := range addrs {
		binary.LittleEndian.PutUint64(b[8*q:], uint64(a))
	}
	return r.dev.CopyHtoD(r.direct+directWindowsAt+cuda.Ptr(w*len(b)), b)
}

func (r *Rank) setWindowOf(w, q int, addr uintptr) error {
	if r.direct == 0 {
		return fmt.Errorf("device: a window on GPU %d before SetDirect", r.dev.Ordinal)
	}
	if w < 0 || w >= kernels.DirectMaxWindows || q < 0 || q >= kernels.DirectMaxRanks {
		return fmt.Errorf("%w: rank %d's window %d (at most %d windows of %d ranks)", errs.ErrInvalidArgument, q, w, kernels.DirectMaxWindows, kernels.DirectMaxRanks)
	}
	b := binary.LittleEndian.AppendUint64(nil, uint64(addr))
	return r.dev.CopyHtoD(r.direct+directWindowsAt+cuda.Ptr((w*kernels.DirectMaxRanks+q)*8), b)
}

// launchDirect is LaunchDirect in a build with the cuda tag.
func (r *Rank) launchDirect(kind kernels.DirectKind, in, out uintptr, bytes int64, f *reduce.Func, how, at uint64, stream uintptr) error {
	if r.aborted() {
		return fmt.Errorf("%w: an earlier collective was aborted", errs.ErrAborted)
	}
	if r.direct == 0 {
		return fmt.Errorf("device: a direct collective on GPU %d before SetDirect", r.dev.Ordinal)
	}
	if err := directFits(kind, bytes, how, r.directRanks, r.stage); err != nil {
		return err
	}
	name, arg := kernels.DirectAllGatherName, uint64(0)
	if kind != kernels.DirectAllGather {
		if f == nil {
			return fmt.Errorf("%w: a %v without a reduction", errs.ErrInvalidArgument, kind)
		}
		var op reduce.DeviceOp
		op, arg = f.Device()
		var err error
		if name, err = cachedName(&r.directNames[kind-1], f.Type(), op, directNamers[kind-1]); err != nil {
			return err
		}
	}
	fn, err := r.dev.Func(name)
	if err != nil {
		return err
	}
	o, err := r.orderFor(stream)
	if err != nil {
		return err
	}
	r.args = [cuda.MaxArgs]uint64{uint64(r.direct), uint64(in), uint64(out), uint64(bytes), arg, how, at, uint64(r.flag.Dev)}
	captured, _, err := r.dev.LaunchWatched(fn, kernels.DirectGrid(bytes), kernels.DirectThreads, cuda.Stream(stream), &r.args, 8, 0, o)
	if err != nil {
		return err
	}
	r.ordered(stream, captured)
	return nil
}

// orderFor returns the Order of a launch on stream (see Streams above):
// record the rank's marker after it, and first wait for the marker's
// latest record if the previous launch went on another stream; overlap
// the previous kernel's end where the rank does (New). Only launches of
// kernels that wait for their predecessor (ring.cuh's, direct.cu's) take
// it.
func (r *Rank) orderFor(stream uintptr) (cuda.Order, error) {
	if r.mark == 0 {
		m, err := r.dev.NewMarker()
		if err != nil {
			return cuda.Order{}, err
		}
		r.mark = m
	}
	o := cuda.Order{Mark: r.mark, Overlap: r.overlap}
	if r.marked && stream != r.markedOn {
		o.After = r.mark
	}
	return o, nil
}

// ordered notes a launch on stream made with orderFor's Order: one not
// captured holds the marker's latest record.
func (r *Rank) ordered(stream uintptr, captured bool) {
	if !captured {
		r.marked, r.markedOn = true, stream
	}
}

// local is Local in a build with the cuda tag.
func (r *Rank) local(in, out uintptr, bytes int64, f *reduce.Func, stream uintptr) error {
	if r.aborted() {
		return fmt.Errorf("%w: an earlier collective was aborted", errs.ErrAborted)
	}
	s := cuda.Stream(stream)
	if f == nil || !f.HasPre() {
		if in == out || bytes == 0 {
			return nil
		}
		return r.dev.CopyAsync(cuda.Ptr(out), cuda.Ptr(in), bytes, s)
	}
	name, err := kernels.ScaleName(f.Type())
	if err != nil {
		return err
	}
	fn, err := r.dev.Func(name)
	if err != nil {
		return err
	}
	// A block moves 4 packs of 16 bytes per thread a round: enough blocks
	// for a round each, up to four per multiprocessor.
	const perBlock = kernels.ScaleThreads * 16 * 4
	grid := int(min((bytes+perBlock-1)/perBlock, int64(4*r.sms)))
	_, arg := f.Device()
	r.args = [cuda.MaxArgs]uint64{uint64(in), uint64(out), uint64(bytes), arg}
	return r.dev.Launch(fn, max(grid, 1), kernels.ScaleThreads, s, &r.args, 4)
}

// launch launches fn over plan on stream, in order (orderFor), with a
// fence after it every fenceEvery launches in churn.
func (r *Rank) launch(fn cuda.Func, p *ring.Plan, plan *planEntry, stream uintptr) error {
	grid, s := plan.grid, cuda.Stream(stream)
	o, err := r.orderFor(stream)
	if err != nil {
		return err
	}
	var fe *fence
	var mark cuda.Event
	if r.churn && r.launches%fenceEvery == fenceEvery-1 {
		if fe = &r.fences[r.nfences%nFences]; fe.done == 0 {
			if fe.done, err = r.dev.NewMarker(); err != nil {
				return err
			}
		}
		mark = fe.done
	}
	captured, marked, err := r.dev.LaunchWatched(fn, grid, kernels.Threads, s, &r.args, 7, mark, o)
	if err != nil {
		return err
	}
	r.ordered(stream, captured)
	r.launches++
	plan.last, plan.stream = r.launches, stream
	plan.pinned = plan.pinned || captured
	if marked {
		fe.stream, fe.at = stream, r.launches
		r.nfences++
	}
	return nil
}

// setTable is SetTable in a build with the cuda tag.
func (r *Rank) setTable(table uintptr, t *kernels.Table) error {
	if len(t.Entries) < r.channels {
		return fmt.Errorf("device: a connection table of %d entries for %d channels", len(t.Entries), r.channels)
	}
	if r.trace != nil {
		if err := r.trace.into(r.dev, cuda.Ptr(table)); err != nil {
			return err
		}
	}
	r.table, r.entries = cuda.Ptr(table), t
	return nil
}

// plan returns p's encoding in device memory, uploading it on first use
// for a launch on stream. A plan stays until Close, or until PlanCache
// plans are kept and it is among the least recently used whose last launch
// has finished; its memory then serves a later plan.
//
// Uploads. A plan is copied from its share of the rank's pinned upload
// memory, which the GPU reads directly, by a kernel (ringo_upload) on
// stream itself, ahead of its launch, and the host goes on at once (fresh:
// enqueued so; the launch that follows orders it for the other streams).
// The host used to wait for each new plan's copy on the device's own
// stream, and that wait stalled once a peer sharing the GPU had kernels
// queued (TestGPUStreams' first version). A kernel on the call's stream
// neither waits on the host nor goes through the copy engines' queues,
// which every stream's host-to-device copies share. (That first version
// still hangs with 2 ranks, now on the GPU: the test waits in its first
// round.) While stream is being captured, or once the upload memory is
// spent, the upload is synchronous (on the device's stream), and kept out
// of the capture, so a collective may be first seen while its stream is
// being captured.
func (r *Rank) plan(p *ring.Plan, sched bool, stream uintptr) (e *planEntry, fresh bool, err error) {
	s := &p.Spec
	key := planKey{coll: s.Coll, count: s.Count, eltSize: s.EltSize, root: s.Root, proto: s.Proto, channels: s.Channels, buff: s.BuffSize, variant: s.Variant}
	encoded := false // r.scratch holds p's encoding
	if sched {
		// A schedule's plan is not the planner's for its spec: it is
		// known by its encoding. A point-to-point plan (package ringo's,
		// made once per call it serves and never changed) is known by
		// its address after its first launch: encoding and hashing it
		// each call cost ~0.9 µs of the call's host side. The table only
		// grows, so its encoding stays what it was; the map holds the
		// plan, so its address is not reused while the key is.
		k, ok := r.p2pKeys[p]
		if !ok {
			if r.scratch, err = kernels.EncodePlan(r.scratch[:0], p, r.entries); err != nil {
				return nil, false, err
			}
			encoded, k = true, fnv64a(r.scratch)|1
			if p.P2P != nil {
				if len(r.p2pKeys) >= 2*PlanCache {
					clear(r.p2pKeys)
				}
				r.p2pKeys[p] = k
			}
		}
		key.sched = k
	}
	if e, ok := r.plans[key]; ok {
		return e, false, nil
	}
	if !encoded {
		if r.scratch, err = kernels.EncodePlan(r.scratch[:0], p, r.entries); err != nil {
			return nil, false, err
		}
	}
	size := max(256, 1<<bits.Len(uint(len(r.scratch)-1)))
	err = r.dev.Uncaptured(func() error {
		switch {
		case len(r.plans) >= PlanCache:
			r.evict()
		case len(r.plans) >= PlanCache/2 && !r.churn:
			r.churn = true
			for _, e := range r.plans {
				e.pinned = true
			}
		}
		if list := r.spare[size]; len(list) > 0 {
			e, r.spare[size] = list[len(list)-1], list[:len(list)-1]
			*e = planEntry{ptr: e.ptr, size: size, host: e.host, hostAt: e.hostAt}
		} else {
			ptr, err := r.dev.Alloc(int64(size))
			if err != nil {
				return err
			}
			e = &planEntry{ptr: ptr, size: size}
			if u := r.uploadsUsed; u+size <= len(r.uploads.Host) {
				e.host, e.hostAt, r.uploadsUsed = r.uploads.Host[u:u+size:u+size], r.uploads.Dev+cuda.Ptr(u), u+size
			}
		}
		if e.host != nil {
			enqueued, err := r.upload(e, stream)
			if err != nil {
				r.spare[size] = append(r.spare[size], e)
				return err
			}
			if fresh = enqueued; fresh {
				return nil
			}
		}
		if err := r.dev.CopyHtoD(e.ptr, r.scratch); err != nil {
			r.spare[size] = append(r.spare[size], e)
			return err
		}
		return nil
	})
	if err != nil {
		return nil, false, err
	}
	e.key, e.grid = key, kernels.Grid(p)
	r.plans[key] = e
	return e, fresh, nil
}

// upload enqueues the upload of r.scratch into e from e's pinned memory
// on stream, with ringo_upload, unless stream is being captured (enqueued
// false: plan uploads synchronously then).
func (r *Rank) upload(e *planEntry, stream uintptr) (enqueued bool, err error) {
	s := cuda.Stream(stream)
	if captured, err := r.dev.Capturing(s); err != nil || captured {
		return false, err
	}
	fn, err := r.dev.Func(kernels.UploadName)
	if err != nil {
		return false, err
	}
	copy(e.host, r.scratch)
	args := [cuda.MaxArgs]uint64{uint64(e.hostAt), uint64(e.ptr), uint64(e.size / 16)}
	return true, r.dev.Launch(fn, 1, kernels.UploadThreads, s, &args, 3)
}

// evict moves the least recently used plans that are not pinned and whose
// last launch has finished to the spare lists, until PlanCache/2 are left
// or none can go. It runs with stream capture relaxed (in plan's upload):
// its queries are not allowed in a thread whose capture mode is global.
func (r *Rank) evict() {
	r.old = r.old[:0]
	for _, e := range r.plans {
		if !e.pinned {
			r.old = append(r.old, e)
		}
	}
	slices.SortFunc(r.old, func(a, b *planEntry) int { return cmp.Compare(a.last, b.last) })
	done := r.doneFences()
	for _, e := range r.old {
		if len(r.plans) <= PlanCache/2 {
			break
		}
		if r.finished(e, done) {
			delete(r.plans, e.key)
			r.spare[e.size] = append(r.spare[e.size], e)
		}
	}
}

// doneFences returns the fences whose marker is done (the others zero).
func (r *Rank) doneFences() [nFences]fence {
	var done [nFences]fence
	r.dev.Uncaptured(func() error {
		for i, f := range r.fences {
			if f.at == 0 {
				continue
			}
			if ok, err := r.dev.Done(f.done); err != nil {
				return err // told at the next launch
			} else if ok {
				done[i] = f
			}
		}
		return nil
	})
	return done
}

// finished reports whether e's last launch is over: it was never launched,
// or a done fence on its stream was recorded after it.
func (r *Rank) finished(e *planEntry, done [nFences]fence) bool {
	if e.last == 0 {
		return true
	}
	for _, f := range done {
		if f.at >= e.last && f.stream == e.stream {
			return true
		}
	}
	return false
}

func (r *Rank) flagWord() *atomic.Uint32 { return r.flag.Word(0) }

func (r *Rank) aborted() bool { return r.flagWord().Load() != 0 }

// abort is Abort in a build with the cuda tag.
func (r *Rank) abort() {
	r.flagMu.Lock()
	defer r.flagMu.Unlock()
	if !r.flagFreed {
		r.flagWord().Store(1)
	}
}

// wait is Wait in a build with the cuda tag. The wait itself is the
// driver's stream synchronisation, which spins and returns within
// microseconds of the kernels' end; it runs on a goroutine of its own so
// that ctx can interrupt it. (Polling the stream with timed naps instead
// costs up to a millisecond per wait: Go's timers are not that fine.)
func (r *Rank) wait(ctx context.Context, stream uintptr) error {
	s := cuda.Stream(stream)
	if r.trace != nil {
		defer r.trace.harvest()
	}
	if done, err := r.dev.Query(s); err != nil || done {
		return err
	}
	synced := make(chan error, 1)
	go func() { synced <- r.dev.Sync(s) }()
	select {
	case err := <-synced:
		return err
	case <-ctx.Done():
		r.abort()
		if err := <-synced; err != nil {
			return err
		}
		if ctx.Err() == context.DeadlineExceeded {
			return fmt.Errorf("%w: the GPU's collective did not finish%s: %w", errs.ErrTimeout, r.stalledDirect(), ctx.Err())
		}
		return ctx.Err()
	}
}

// stalledDirect says which ranks a direct all-reduce's blocks were waiting
// for when its kernels stopped (kernels.DirectSync.Stalled), as a clause
// of a timeout's error; "" if none was, or the area cannot be read.
func (r *Rank) stalledDirect() string {
	if r.direct == 0 {
		return ""
	}
	d, err := r.directSync()
	if err != nil || d == nil {
		return ""
	}
	if s := d.Stalled(r.directRank, r.directRanks); s != "" {
		return fmt.Sprintf(" (direct collective, rank %d: %s)", r.directRank, s)
	}
	return ""
}

// close is Close in a build with the cuda tag.
func (r *Rank) close() error {
	for k, e := range r.plans {
		r.dev.Free(e.ptr)
		delete(r.plans, k)
	}
	for size, list := range r.spare {
		for _, e := range list {
			r.dev.Free(e.ptr)
		}
		delete(r.spare, size)
	}
	for _, e := range r.dropped {
		r.dev.Free(e.ptr)
	}
	r.dropped = nil
	for i, f := range r.fences {
		if f.done != 0 {
			r.dev.DestroyEvent(f.done)
		}
		r.fences[i] = fence{}
	}
	if r.mark != 0 {
		r.dev.DestroyEvent(r.mark)
		r.mark, r.marked = 0, false
	}
	for _, p := range []*cuda.Ptr{&r.area, &r.direct} {
		if *p != 0 {
			r.dev.Free(*p)
			*p = 0
		}
	}
	if r.trace != nil {
		r.trace.harvest()
		r.dev.FreeMapped(r.trace.buf)
		r.trace = nil
	}
	r.flagMu.Lock()
	r.flagFreed = true
	r.flagMu.Unlock()
	r.dev.FreeMapped(r.uploads)
	return r.dev.FreeMapped(r.flag)
}

// fnv64a is the 64-bit FNV-1a hash of b (hash/fnv's, without its
// allocation).
func fnv64a(b []byte) uint64 {
	h := uint64(14695981039346656037)
	for _, c := range b {
		h = (h ^ uint64(c)) * 1099511628211
	}
	return h
}
