package host

import (
	"context"
	"fmt"
	"sync"
	"time"

	"github.com/ringo-ccl/ringo/internal/errs"
	"github.com/ringo-ccl/ringo/reduce"
	"github.com/ringo-ccl/ringo/ring"
	"github.com/ringo-ccl/ringo/trace"
	"github.com/ringo-ccl/ringo/transport"
)

// Job is one call: a plan and the memory it runs over.
type Job struct {
	Plan *ring.Plan
	In   []byte // input buffer, Plan.Spec.InputLen() elements (a p2p plan's: Plan.P2P.InputLen())
	Out  []byte // output buffer, Plan.Spec.OutputLen() elements (may be the input: in-place)
	// InSegs and OutSegs, when not empty, stand for In and Out: the
	// plan's element offsets then index a buffer made of segments (a
	// point-to-point group's messages, each in memory of its own),
	// segment i covering elements [Off, Off + len(Buf)/EltSize). A step's
	// range lies in one segment.
	InSegs, OutSegs []Seg
	Func            *reduce.Func // the reduction; nil for collectives that do not reduce
	Wire            *reduce.Wire // a precision variant's sum (Plan.Spec.Variant), used instead of Func

	Trace *trace.Recorder // records every step when not nil (RINGO_TRACE)
	Seq   uint64          // the collective's sequence number, for the trace
	Wait  *transport.Waiter
}

// Seg is one segment of a job's input or output (Job.InSegs).
type Seg struct {
	Off int64 // the element offset of Buf's first element
	Buf []byte
}

// Executor runs plans for one rank. Its methods must not be called
// concurrently.
type Executor struct {
	rank  int
	tr    transport.Transport // where connections come from, on first use
	chans []channel
	job   Job
	jobs  uint64 // jobs run, to align each connection once per Simple job
	first uint64 // step counters' start on new connections (tests: 0)

	workers []*worker // index = channel; nil until first needed
	wg      sync.WaitGroup

	stores stores // how Simple copies write the FIFOs, by size of call
	stream bool   // the running job's choice: non-temporal stores
}

// channel is one rank's state on one channel: its ends of the
// connections its plans have used, in the order first used (a ring step
// finds its two at once), and scratch for the LL protocol.
type channel struct {
	ends    []*end
	scratch []byte // one LL slot's payload, for received data being reduced
}

// end is this rank's end of one connection: its FIFO step counter (steps
// produced into it, or consumed from it), which persists across jobs as
// NCCL's conn->step does.
type end struct {
	peer    int
	send    bool
	conn    *transport.Conn
	step    uint64
	aligned uint64 // the job whose Simple steps this end was last aligned for
}

type worker struct {
	start chan struct{}
	done  chan error
}

// New returns an executor for rank running plans of up to nch channels,
// whose steps may name any peer: the connection to or from a peer on a
// channel comes from tr the first time a step uses it, and is kept.
// llSlotPayload is the data bytes of one LL slot (see ring.SlotPayload).
func New(rank int, tr transport.Transport, nch, llSlotPayload int) *Executor {
	e := &Executor{rank: rank, tr: tr, chans: make([]channel, nch), workers: make([]*worker, nch)}
	for i := range e.chans {
		e.chans[i] = channel{scratch: make([]byte, llSlotPayload)}
	}
	return e
}

// end returns this rank's end of the connection with peer on channel c, in
// direction send, asking the transport for it on first use.
func (e *Executor) end(c, peer int, send bool) (*end, error) {
	ch := &e.chans[c]
	for _, x := range ch.ends {
		if x.peer == peer && x.send == send {
			return x, nil
		}
	}
	from, to := peer, e.rank
	if send {
		from, to = e.rank, peer
	}
	if e.tr == nil {
		return nil, fmt.Errorf("rank %d has no connections", e.rank)
	}
	conn, err := e.tr.Conn(context.Background(), from, to, c)
	if err != nil {
		return nil, err
	}
	x := &end{peer: peer, send: send, conn: conn, step: e.first}
	if e.first != 0 { // tests only (setSteps): both ends start the shared counters there
		conn.Tail().Store(e.first)
		conn.Head().Store(e.first)
	}
	ch.ends = append(ch.ends, x)
	return x, nil
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
	e.jobs++
	class := -1
	if p.Spec.Proto == ring.Simple && p.P2P == nil {
		class, e.stream = e.stores.pick(p.Spec.Count * int64(p.Spec.EltSize))
	}
	var start time.Time
	if class >= 0 {
		start = time.Now()
	}
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
	if err == nil {
		e.stores.done(class, e.stream, time.Since(start))
	}
	e.job, e.stream = Job{}, false
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
	var run func(ch *channel, c int, st *ring.Step) (string, error)
	switch p.Spec.Proto {
	case ring.Simple:
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
		what, err := run(ch, c, st)
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

// ends returns the step's receive and send ends (nil where it has none).
// For Simple (align > 0), each end's counter is rounded up to a multiple of
// align the first time the job uses it, as NCCL's Simple primitives do at
// construction, so a multi-slot slice never wraps the FIFO; a receiving end
// returns the skipped slots to the sender as credit. Both ends of a
// connection are used by the same job, so both round alike.
func (e *Executor) ends(c int, st *ring.Step, align uint64) (recv, send *end, what string, err error) {
	if st.Prim.Recvs() {
		if recv, err = e.end(c, int(st.RecvPeer), false); err != nil {
			return nil, nil, connecting, err
		}
		if align > 0 && recv.aligned != e.jobs {
			recv.aligned, recv.step = e.jobs, (recv.step+align-1)/align*align
			recv.conn.PostHead(recv.step)
		}
	}
	if st.Prim.Sends() {
		if send, err = e.end(c, int(st.SendPeer), true); err != nil {
			return nil, nil, connecting, err
		}
		if align > 0 && send.aligned != e.jobs {
			send.aligned, send.step = e.jobs, (send.step+align-1)/align*align
		}
	}
	return recv, send, "", nil
}

// What a failed step was waiting for.
const (
	waitData   = "waiting for data"
	waitCredit = "waiting for credit"
	connecting = "finding the connection"
)

// slices of the job's buffers for a step's range.
func (e *Executor) in(st *ring.Step, off, n int64) []byte {
	return e.view(e.job.In, e.job.InSegs, st.InOff+off, n)
}

func (e *Executor) out(st *ring.Step, off, n int64) []byte {
	return e.view(e.job.Out, e.job.OutSegs, st.OutOff+off, n)
}

// view returns elements [off, off+n) of buf, or of the segments standing
// for it.
func (e *Executor) view(buf []byte, segs []Seg, off, n int64) []byte {
	elt := int64(e.job.Plan.Spec.EltSize)
	if len(segs) > 0 {
		lo, hi := 0, len(segs) // the last segment starting at or before off
		for hi-lo > 1 {
			if m := (lo + hi) / 2; segs[m].Off <= off {
				lo = m
			} else {
				hi = m
			}
		}
		buf, off = segs[lo].Buf, off-segs[lo].Off
	}
	return buf[off*elt : (off+n)*elt]
}
