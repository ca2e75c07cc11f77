package host

import (
	"fmt"
	"sync"

	"github.com/ringo-ccl/ringo/internal/errs"
	"github.com/ringo-ccl/ringo/reduce"
	"github.com/ringo-ccl/ringo/ring"
	"github.com/ringo-ccl/ringo/trace"
	"github.com/ringo-ccl/ringo/transport"
)

// Links are one channel's connections: Send to the ring successor, Recv from
// the predecessor. Both are nil on a communicator of one rank.
type Links struct {
	Send, Recv *transport.Conn
}

// Job is one call: a plan and the memory it runs over.
type Job struct {
	Plan *ring.Plan
	In   []byte       // input buffer, Plan.Spec.InputLen() elements
	Out  []byte       // output buffer, Plan.Spec.OutputLen() elements (may be the input: in-place)
	Func *reduce.Func // the reduction; nil for collectives that do not reduce
	Wire *reduce.Wire // a precision variant's sum (Plan.Spec.Variant), used instead of Func

	Trace *trace.Recorder // records every step when not nil (RINGO_TRACE)
	Seq   uint64          // the collective's sequence number, for the trace
	Wait  *transport.Waiter
}

// Executor runs plans for one rank. Its methods must not be called
// concurrently.
type Executor struct {
	rank  int
	chans []channel
	job   Job

	workers []*worker // index = channel; nil until first needed
	wg      sync.WaitGroup
}

// channel is one rank's state on one channel.
type channel struct {
	Links
	sendStep, recvStep uint64 // FIFO steps this rank has produced / consumed
	scratch            []byte // one LL slot's payload, for received data being reduced
}

type worker struct {
	start chan struct{}
	done  chan error
}

// New returns an executor for rank with one Links per channel. llSlotPayload
// is the data bytes of one LL slot (see ring.SlotPayload).
func New(rank int, links []Links, llSlotPayload int) *Executor {
	e := &Executor{rank: rank, chans: make([]channel, len(links)), workers: make([]*worker, len(links))}
	for i, l := range links {
		e.chans[i] = channel{Links: l, scratch: make([]byte, llSlotPayload)}
	}
	return e
}

// Run executes job and returns the first failure, an *errs.Error naming the
// channel, step and peer.
func (e *Executor) Run(job Job) error {
	p := job.Plan
	if len(p.Channels) > len(e.chans) {
		return errs.Invalid(p.Spec.Coll.String(), e.rank, "plan has %d channels, executor %d", len(p.Channels), len(e.chans))
	}
	if p.Spec.Variant.Precision() && (job.Wire == nil || job.Wire.Buf().Size() != p.Spec.EltSize || job.Wire.On().Size() != p.Spec.WireSize()) {
		return errs.Invalid(p.Spec.Coll.String(), e.rank, "variant %v needs a matching wire sum", p.Spec.Variant)
	}
	e.job = job
	for c := 1; c < len(p.Channels); c++ {
		if len(p.Channels[c].Steps) == 0 {
			continue
		}
		e.worker(c).start <- struct{}{}
	}
	err := e.runChannel(0)
	for c := 1; c < len(p.Channels); c++ {
		if len(p.Channels[c].Steps) == 0 {
			continue
		}
		if werr := <-e.workers[c].done; err == nil {
			err = werr
		}
	}
	e.job = Job{}
	return err
}

// worker returns channel c's worker, starting it on first use.
func (e *Executor) worker(c int) *worker {
	if w := e.workers[c]; w != nil {
		return w
	}
	w := &worker{start: make(chan struct{}), done: make(chan error)}
	e.workers[c] = w
	e.wg.Add(1)
	go e.routineChannel(c, w)
	return w
}

// routineChannel runs channel c of every job it is started for, until Close.
func (e *Executor) routineChannel(c int, w *worker) {
	defer e.wg.Done()
	for range w.start {
		w.done <- e.runChannel(c)
	}
}

// Close stops the worker goroutines. The Executor must be idle.
func (e *Executor) Close() {
	for i, w := range e.workers {
		if w != nil {
			close(w.start)
			e.workers[i] = nil
		}
	}
	e.wg.Wait()
}

func (e *Executor) runChannel(c int) error {
	p := e.job.Plan
	steps := p.Channels[c].Steps
	if len(steps) == 0 {
		return nil
	}
	ch := &e.chans[c]
	var run func(ch *channel, st *ring.Step) (string, error)
	switch p.Spec.Proto {
	case ring.Simple:
		ch.alignSteps(uint64(p.SlotsPerStep()))
		run = e.simpleStep
	case ring.LL:
		run = e.llStep
	default:
		return &errs.Error{Op: p.Spec.Coll.String(), Rank: e.rank, Peer: -1, Channel: c, Step: -1,
			Err: fmt.Errorf("%w: protocol %v on the host executor", errs.ErrNotSupported, p.Spec.Proto)}
	}
	tr := e.job.Trace
	if tr != nil {
		tr.Name(e.rank, c+1)
	}
	for i := range steps {
		st := &steps[i]
		var t0 float64
		if tr != nil {
			t0 = tr.Now()
		}
		what, err := run(ch, st)
		if tr != nil {
			tr.Add(st.Prim.String(), "step", t0, e.rank, c+1,
				trace.EventArgs{Seq: e.job.Seq, Step: i, Recv: int(st.RecvPeer), Send: int(st.SendPeer), Count: st.Count})
		}
		if err != nil {
			peer := int(st.RecvPeer)
			if what == waitCredit {
				peer = int(st.SendPeer)
			}
			return &errs.Error{Op: p.Spec.Coll.String(), Rank: e.rank, Peer: peer, Channel: c, Step: i,
				Detail: st.Prim.String() + ": " + what, Err: err}
		}
	}
	return nil
}

// alignSteps rounds both step counters up to a multiple of per, as NCCL's
// Simple primitives do at construction, so a multi-slot slice never wraps the
// FIFO, and returns the skipped slots to the sender as credit.
func (ch *channel) alignSteps(per uint64) {
	ch.sendStep = (ch.sendStep + per - 1) / per * per
	if ch.Recv != nil {
		ch.recvStep = (ch.recvStep + per - 1) / per * per
		ch.Recv.PostHead(ch.recvStep)
	}
}

// What a failed step was waiting for.
const (
	waitData   = "waiting for data"
	waitCredit = "waiting for credit"
)

// slices of the job's buffers for a step's range.
func (e *Executor) in(st *ring.Step, off, n int64) []byte {
	elt := int64(e.job.Plan.Spec.EltSize)
	return e.job.In[(st.InOff+off)*elt : (st.InOff+off+n)*elt]
}

func (e *Executor) out(st *ring.Step, off, n int64) []byte {
	elt := int64(e.job.Plan.Spec.EltSize)
	return e.job.Out[(st.OutOff+off)*elt : (st.OutOff+off+n)*elt]
}
