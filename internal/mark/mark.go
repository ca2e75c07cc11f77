package mark

import (
	"github.com/ringo-ccl/ringo/internal/cuda/nvtx"
	"github.com/ringo-ccl/ringo/reduce"
	"github.com/ringo-ccl/ringo/ring"
	"github.com/ringo-ccl/ringo/trace"
)

// Marks marks one rank's calls: an NVTX range and a RINGO_TRACE event
// each. A nil *Marks marks nothing. Its methods must not be called
// concurrently (the rank's calls hold it).
type Marks struct {
	rank  int
	trace *trace.Recorder // RINGO_TRACE's; nil when off
	nvtx  *nvtxNames      // NVTX ranges; nil when off
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

// Mark is a call's start, for RINGO_TRACE and NVTX.
type Mark struct {
	coll  ring.Collective
	count int64
	dt    reduce.DataType
	op    reduce.Op
	t0    float64 // the trace clock at the start
	r     nvtx.Range
}

// Start starts a call's NVTX range and notes its start for the trace;
// End ends both.
func (ms *Marks) Start(coll ring.Collective, count int64, dt reduce.DataType, op reduce.Op) Mark {
	if ms == nil {
		return Mark{}
	}
	m := Mark{coll: coll, count: count, dt: dt, op: op, r: ms.nvtx.start(coll, dt, op, count)}
	if ms.trace != nil {
		m.t0 = ms.trace.Now()
	}
	return m
}

// End ends m's NVTX range and records the call, the rank's seq-th, from
// m's start to now, with err, on the rank's trace track.
func (ms *Marks) End(m Mark, seq uint64, err error) {
	if ms == nil {
		return
	}
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
