package main

import (
	"cmp"
	"context"
	"fmt"
	"slices"
)

// p2pPart is one communicator's share of a run of sends and receives: its
// messages, in order, on one stream.
type p2pPart struct {
	comm   rankComm
	stream uintptr
	msgs   []p2pMsg
}

// sendRecvFunc runs parts together, as one group, and returns once each is
// enqueued on its stream: ringo.SendRecv (gpuSendRecv), or a fake in tests.
type sendRecvFunc func(ctx context.Context, parts []p2pPart) error

// streamCUDA is the work the C ABI enqueues itself, around ringo's launch,
// on streams of GPU dev (in its primary context): scratch memory for
// receives in place (stage.go) and the joining of a communicator's several
// streams in a group. Fields, so that tests use fakes.
type streamCUDA struct {
	alloc func(dev int, stream uintptr, n int64) (uintptr, error) // cuMemAllocAsync
	copy  func(dev int, stream, dst, src uintptr, n int64) error  // cuMemcpyDtoDAsync
	free  func(dev int, stream, p uintptr) error                  // cuMemFreeAsync
	wait  func(dev int, waiter, on uintptr) error                 // waiter waits for the work enqueued on on so far
}

// p2pRun is one communicator's part of a run and what it needs around it.
type p2pRun struct {
	entry   *commEntry
	part    p2pPart
	dev     int
	others  []uintptr // the streams of its ops besides part.stream, joined to it
	stage   stagePlan
	scratch uintptr // stage's memory, on part.stream
}

// p2pScratch is what runP2P needs besides its ops, kept from run to run
// (library.runs) so that a training step's group allocates nothing.
type p2pScratch struct {
	runs   []p2pRun // by communicator, in the order they first appear
	locked []*p2pRun
	parts  []p2pPart
}

// keep takes sc back once its run is over, dropping what it pointed to.
func (l *library) keep(sc *p2pScratch) {
	for i := range sc.runs {
		r := &sc.runs[i]
		clear(r.part.msgs)
		*r = p2pRun{part: p2pPart{msgs: r.part.msgs[:0]}, others: r.others[:0]}
	}
	clear(sc.locked)
	clear(sc.parts)
	sc.locked, sc.parts = sc.locked[:0], sc.parts[:0]
	l.runs.put(sc)
}

// runP2P runs ops, of one call outside a group or of a whole group (fn
// names it), as one ringo.SendRecv: each communicator's ops, in order,
// as one launch, on the stream of its first op. As NCCL does, a
// communicator whose ops are on several streams gets its launch ordered
// after the work enqueued on each of the others before it, and each of the
// others ordered after the launch. The communicators are driven one call
// at a time each (commEntry.mu), taken in handle order.
func (l *library) runP2P(fn string, ops []p2pOp) error {
	sc := l.runs.get()
	defer l.keep(sc)
	runs := sc.runs[:0] // values: taken by address once all are in
	for i := range ops {
		op := &ops[i]
		k := slices.IndexFunc(runs, func(r p2pRun) bool { return r.entry == op.entry })
		if k < 0 {
			if _, err := l.handles.lookup(fn, op.entry.handle); err != nil {
				return fmt.Errorf("%s: a communicator of the %s was destroyed before it ran: %w", fn, op.fn, err)
			}
			if k = len(runs); k < cap(runs) {
				runs = runs[:k+1] // its slices' arrays kept from an earlier run
			} else {
				runs = append(runs, p2pRun{})
			}
			r := &runs[k]
			*r = p2pRun{entry: op.entry, part: p2pPart{comm: op.comm, stream: op.stream, msgs: r.part.msgs[:0]}, dev: op.comm.GPU(), others: r.others[:0]}
		}
		r := &runs[k]
		if op.stream != r.part.stream && !slices.Contains(r.others, op.stream) {
			r.others = append(r.others, op.stream)
		}
		r.part.msgs = append(r.part.msgs, op.msg)
	}
	sc.runs = runs
	for i := range runs {
		r := &runs[i]
		r.stage = planStage(r.part.msgs, r.part.comm.Rank())
		r.part.msgs = r.stage.msgs
	}

	locked := sc.locked[:0]
	for i := range runs {
		locked = append(locked, &runs[i])
	}
	sc.locked = locked
	slices.SortFunc(locked, func(a, b *p2pRun) int { return cmp.Compare(uintptr(a.entry.handle), uintptr(b.entry.handle)) })
	held := 0
	defer func() { // a panicking launch must not leave a rank locked
		for _, r := range locked[:held] {
			r.entry.mu.Unlock()
		}
	}()
	for _, r := range locked {
		r.entry.mu.Lock()
		held++
	}

	var err error
	for i := range runs { // before the launch: scratch, and the other streams' work
		r := &runs[i]
		for _, s := range r.others {
			err = cmp.Or(err, l.streams.wait(r.dev, r.part.stream, s))
		}
		if r.stage.scratch > 0 && err == nil {
			if r.scratch, err = l.streams.alloc(r.dev, r.part.stream, r.stage.scratch); err == nil {
				r.stage.apply(r.part.msgs, r.scratch)
			}
		}
	}
	launched := false
	if err == nil {
		parts := sc.parts[:0]
		for i := range runs {
			if r := &runs[i]; len(r.part.msgs) > 0 {
				parts = append(parts, r.part)
			}
		}
		sc.parts = parts
		if len(parts) > 0 {
			err = l.sendRecv(context.Background(), parts)
		}
		launched = err == nil
	}
	for i := range runs { // after it: the received copies, and the other streams
		r := &runs[i]
		if r.scratch != 0 {
			if launched {
				for _, s := range r.stage.copies {
					err = cmp.Or(err, l.streams.copy(r.dev, r.part.stream, s.dst, r.scratch+uintptr(s.off), s.n))
				}
			}
			err = cmp.Or(err, l.streams.free(r.dev, r.part.stream, r.scratch))
		}
		for _, s := range r.others {
			err = cmp.Or(err, l.streams.wait(r.dev, s, r.part.stream))
		}
	}
	if err != nil {
		return fmt.Errorf("%s: %w", fn, err)
	}
	return nil
}
