package mark

import (
	"github.com/ringo-ccl/ringo/internal/cuda/nvtx"
	"github.com/ringo-ccl/ringo/reduce"
	"github.com/ringo-ccl/ringo/ring"
	"github.com/ringo-ccl/ringo/trace"
)

// Marks marks one rank's calls: an NVTX range and a RINGO_TRACE event
// each. A nil *Marks marks nothing. Its methods must not be called
// concurrently (the rank's calls hold it), and a rank has one call open
// at a time: Start opens it, End closes it.
type Marks struct {
	rank  int
	trace *trace.Recorder // RINGO_TRACE's; nil when off
	nvtx  *nvtxNames      // NVTX ranges; nil when off
	open  mark            // the call between Start and End
}

// New returns rank's marks, recording on rec (nil: no trace), or nil when
// neither the trace nor NVTX is on.
func New(rank int, rec *trace.Recorder) *Marks {
	n := newNVTX(rank)
	if rec == nil && n == nil {
		return nil
	}
	return &Marks{rank: rank, trace: rec, nvtx: n}
}

// mark is a call's start, for RINGO_TRACE and NVTX.
type mark struct {
	coll  ring.Collective
	count int64
	dt    reduce.DataType
	op    reduce.Op
	t0    float64 // the trace clock at the start
	r     nvtx.Range
}

// Start starts a call's NVTX range and notes its start for the trace;
// End ends both. Neither is more than a test of ms where both are off.
func (ms *Marks) Start(coll ring.Collective, count int64, dt reduce.DataType, op reduce.Op) {
	if ms != nil {
		ms.start(coll, count, dt, op)
	}
}

func (ms *Marks) start(coll ring.Collective, count int64, dt reduce.DataType, op reduce.Op) {
	ms.open = mark{coll: coll, count: count, dt: dt, op: op, r: ms.nvtx.start(coll, dt, op, count)}
	if ms.trace != nil {
		ms.open.t0 = ms.trace.Now()
	}
}

// End ends the open call's NVTX range and records the call, the rank's
// seq-th, from its start to now, with err, on the rank's trace track.
func (ms *Marks) End(seq uint64, err error) {
	if ms != nil {
		ms.end(seq, err)
	}
}

func (ms *Marks) end(seq uint64, err error) {
	m := &ms.open
	ms.nvtx.end(m.r)
	if ms.trace == nil {
		return
	}
	ms.trace.Name(ms.rank, 0)
	what := m.dt.String()
	if m.coll.Reduces() {
		what += " " + m.op.Kind().String()
	}
	if err != nil {
		what += ": " + err.Error()
	}
	ms.trace.Add(m.coll.String(), "collective", m.t0, ms.rank, 0, trace.EventArgs{Seq: seq, Step: -1, Recv: -1, Send: -1, Count: m.count, What: what})
}
