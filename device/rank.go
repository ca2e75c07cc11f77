//go:build cuda

package device

import (
	"cmp"
	"context"
	"fmt"
	"slices"
	"sync/atomic"

	"github.com/ringo-ccl/ringo/internal/cuda"
	"github.com/ringo-ccl/ringo/internal/errs"
	"github.com/ringo-ccl/ringo/kernels"
	"github.com/ringo-ccl/ringo/reduce"
	"github.com/ringo-ccl/ringo/ring"
)

// Rank is one rank's device executor: its GPU, its connection table, its
// abort flag and its cache of plans in device memory. Its methods must not
// be called concurrently, except Abort.
type Rank struct {
	dev      *cuda.Device
	table    cuda.Ptr // RingoConn per channel
	channels int
	flag     *cuda.Mapped // word 0: abort
	plans    map[planKey]*planEntry
	launches uint64       // launches made, the plans' clock
	old      []*planEntry // evict's scratch
	scratch  []byte
	args     [cuda.MaxArgs]uint64
	trace    *gpuTrace // nil unless EnableTrace
}

// PlanCache is how many plans a rank keeps in device memory before it
// frees the least recently used of those no kernel can still read (down to
// half as many): a job that calls collectives of ever new shapes (dynamic
// batch sizes, a soak) does not grow without bound.
const PlanCache = 256

// planEntry is a plan in device memory and what is known of its use.
type planEntry struct {
	key    planKey
	ptr    cuda.Ptr
	done   cuda.Event // a marker recorded after the plan's latest launch
	stream uintptr    // that launch's stream
	last   uint64     // Rank.launches at that launch
	// pinned: kept until Close, because a CUDA graph may replay a launch
	// of it at any time (it was launched into a stream capture), or the
	// marker does not cover every launch (two streams at once, or a
	// record that failed).
	pinned bool
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
}

// New returns the executor of the rank on GPU ordinal whose connection
// table (one kernels.Conn per channel) is at device address table.
func New(ordinal int, table uintptr, channels int) (*Rank, error) {
	dev, err := cuda.Open(ordinal)
	if err != nil {
		return nil, err
	}
	if err := dev.LoadModule(kernels.Fatbin); err != nil {
		return nil, err
	}
	flag, err := dev.AllocMapped(4096)
	if err != nil {
		return nil, err
	}
	return &Rank{dev: dev, table: cuda.Ptr(table), channels: channels, flag: flag, plans: map[planKey]*planEntry{}}, nil
}

// Launch enqueues plan p, the rank's collective seq, over the device
// buffers in and out on stream. f is the reduction (nil for collectives
// that only move data).
func (r *Rank) Launch(p *ring.Plan, seq uint64, in, out uintptr, f *reduce.Func, stream uintptr) error {
	if r.aborted() {
		return fmt.Errorf("%w: an earlier collective was aborted", errs.ErrAborted)
	}
	if len(p.Channels) > r.channels {
		return fmt.Errorf("%w: plan has %d channels, the rank's connections %d", errs.ErrInvalidArgument, len(p.Channels), r.channels)
	}
	plan, err := r.plan(p)
	if err != nil {
		return err
	}
	if plan.last > 0 && plan.stream != stream && !plan.pinned {
		// Its marker will follow this launch only: pin the plan unless
		// the launch on the other stream is over.
		if !r.finished(plan) {
			plan.pinned = true
		}
	}
	name, arg := "ringo_copy", uint64(0)
	if f != nil {
		var op reduce.DeviceOp
		op, arg = f.Device()
		if p.Spec.Variant.Precision() {
			name, err = kernels.WireName(f.Type(), p.Spec.WireSize())
		} else {
			name, err = kernels.Name(f.Type(), op, true)
		}
		if err != nil {
			return err
		}
	}
	fn, err := r.dev.Func(name)
	if err != nil {
		return err
	}
	r.args = [cuda.MaxArgs]uint64{uint64(r.table), uint64(plan.ptr), uint64(in), uint64(out), arg, kernels.Geom(p), uint64(r.flag.Dev)}
	captured, marked, err := r.dev.LaunchMarked(fn, len(p.Channels), kernels.Threads, cuda.Stream(stream), &r.args, 7, plan.done)
	if err != nil {
		return err
	}
	r.launches++
	plan.last, plan.stream = r.launches, stream
	if captured || !marked {
		plan.pinned = true
	}
	if r.trace != nil {
		r.trace.launched(p, seq)
	}
	return nil
}

// plan returns p's encoding in device memory, uploading it on first use.
// A plan stays until Close, or until PlanCache plans are kept and it is
// among the least recently used whose last launch has finished. The upload
// is synchronous and kept out of any stream capture in progress, so a
// collective may be first seen while its stream is being captured.
func (r *Rank) plan(p *ring.Plan) (*planEntry, error) {
	s := &p.Spec
	key := planKey{s.Coll, s.Count, s.EltSize, s.Root, s.Proto, s.Channels, s.BuffSize, s.Variant}
	if e, ok := r.plans[key]; ok {
		return e, nil
	}
	var err error
	r.scratch, err = kernels.EncodePlan(r.scratch[:0], p)
	if err != nil {
		return nil, err
	}
	e := &planEntry{key: key}
	err = r.dev.Uncaptured(func() error {
		if len(r.plans) >= PlanCache {
			r.evict()
		}
		var err error
		if e.done, err = r.dev.NewMarker(); err != nil {
			return err
		}
		if e.ptr, err = r.dev.Alloc(int64(len(r.scratch))); err == nil {
			err = r.dev.CopyHtoD(e.ptr, r.scratch)
		}
		if err != nil {
			r.free(e)
		}
		return err
	})
	if err != nil {
		return nil, err
	}
	r.plans[key] = e
	return e, nil
}

// evict frees the least recently used plans that are not pinned and whose
// last launch has finished, until PlanCache/2 are left or none can go. It
// runs with stream capture relaxed (plan's upload): its queries are not
// allowed in a thread whose capture mode is global.
func (r *Rank) evict() {
	r.old = r.old[:0]
	for _, e := range r.plans {
		if !e.pinned {
			r.old = append(r.old, e)
		}
	}
	slices.SortFunc(r.old, func(a, b *planEntry) int { return cmp.Compare(a.last, b.last) })
	for _, e := range r.old {
		if len(r.plans) <= PlanCache/2 {
			break
		}
		if r.finished(e) {
			r.free(e)
			delete(r.plans, e.key)
		}
	}
}

// finished reports whether e's last launch is over (false when that cannot
// be told: an error the next launch reports).
func (r *Rank) finished(e *planEntry) bool {
	var done bool
	r.dev.Uncaptured(func() (err error) {
		done, err = r.dev.Done(e.done)
		return err
	})
	return done
}

// free releases e's memory and marker.
func (r *Rank) free(e *planEntry) {
	if e.ptr != 0 {
		r.dev.Free(e.ptr)
	}
	if e.done != 0 {
		r.dev.DestroyEvent(e.done)
	}
}

func (r *Rank) flagWord() *atomic.Uint32 { return r.flag.Word(0) }

func (r *Rank) aborted() bool { return r.flagWord().Load() != 0 }

// Abort raises the rank's abort flag: its running and future kernels stop
// at their next check. It is safe to call from any goroutine.
func (r *Rank) Abort() { r.flagWord().Store(1) }

// Wait returns when every launch on stream has finished. When ctx ends
// first it aborts the rank, waits for the kernels to stop, and returns
// ErrTimeout (or ctx's error); an error of the stream's work (an illegal
// memory access, say) is returned as it is.
//
// The wait itself is the driver's stream synchronisation, which spins and
// returns within microseconds of the kernels' end; it runs on a goroutine
// of its own so that ctx can interrupt it. (Polling the stream with timed
// naps instead costs up to a millisecond per wait: Go's timers are not that
// fine.)
func (r *Rank) Wait(ctx context.Context, stream uintptr) error {
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
		r.Abort()
		if err := <-synced; err != nil {
			return err
		}
		if ctx.Err() == context.DeadlineExceeded {
			return fmt.Errorf("%w: the GPU's collective did not finish: %w", errs.ErrTimeout, ctx.Err())
		}
		return ctx.Err()
	}
}

// Close frees the rank's plans and flag. No kernel may be running.
func (r *Rank) Close() error {
	for k, e := range r.plans {
		r.free(e)
		delete(r.plans, k)
	}
	if r.trace != nil {
		r.trace.harvest()
		r.dev.FreeMapped(r.trace.buf)
		r.trace = nil
	}
	return r.dev.FreeMapped(r.flag)
}
