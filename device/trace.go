//go:build cuda

package device

import (
	"encoding/binary"
	"fmt"
	"time"

	"github.com/ringo-ccl/ringo/internal/cuda"
	"github.com/ringo-ccl/ringo/kernels"
	"github.com/ringo-ccl/ringo/ring"
	"github.com/ringo-ccl/ringo/trace"
)

// gpuTrace is a rank's step tracing (RINGO_TRACE): each channel's kernel
// appends (start, end) %globaltimer pairs to its buffer in mapped host
// memory (kernels.TraceBytes per channel), and the launches not yet read
// wait in pending until a Wait has seen them finish.
type gpuTrace struct {
	rec     *trace.Recorder
	rank    int
	buf     *cuda.Mapped
	read    []uint64 // per channel: steps read so far
	pending []launched
	dropped int // steps lost to the buffers' wrap, or launches to pending's bound
}

// launched is what a trace needs of one launch: every channel's steps.
type launched struct {
	seq   uint64
	steps [][]ring.Step
}

// maxPending bounds the launches kept for a Wait that may never come (a
// caller synchronising the stream itself).
const maxPending = 1024

// enableTrace is EnableTrace in a build with the cuda tag.
func (r *Rank) enableTrace(rec *trace.Recorder, rank int) error {
	buf, err := r.dev.AllocMapped(r.channels * kernels.TraceBytes)
	if err != nil {
		return err
	}
	t := &gpuTrace{rec: rec, rank: rank, buf: buf, read: make([]uint64, r.channels)}
	if r.table != 0 {
		if err := t.into(r.dev, r.table); err != nil {
			r.dev.FreeMapped(buf)
			return err
		}
	}
	r.trace = t
	return nil
}

// into points the first entries of the connection table at table, one per
// channel, at the channels' trace buffers.
func (t *gpuTrace) into(dev *cuda.Device, table cuda.Ptr) error {
	for c := range t.read {
		var p [8]byte
		binary.LittleEndian.PutUint64(p[:], uint64(t.buf.Dev)+uint64(c*kernels.TraceBytes))
		if err := dev.CopyHtoD(table+cuda.Ptr(c*kernels.ConnBytes+kernels.ConnTraceOffset), p[:]); err != nil {
			return err
		}
	}
	return nil
}

// launched records a launch of p (collective seq) for the trace.
func (t *gpuTrace) launched(p *ring.Plan, seq uint64) {
	if len(t.pending) == maxPending {
		t.pending = t.pending[1:]
		t.dropped++
	}
	l := launched{seq: seq, steps: make([][]ring.Step, len(p.Channels))}
	for c, ch := range p.Channels {
		l.steps[c] = append([]ring.Step(nil), ch.Steps...)
	}
	t.pending = append(t.pending, l)
}

// harvest turns the steps of finished launches into events. GPU time is
// placed on the trace clock by taking the last step's end as now: harvest
// runs right after Wait saw the stream finish, so events sit a few µs
// early at most.
func (t *gpuTrace) harvest() {
	host := t.buf.Host
	written := make([]uint64, len(t.read))
	var last uint64
	for c := range written {
		b := host[c*kernels.TraceBytes:]
		written[c] = binary.LittleEndian.Uint64(b)
		if n := written[c]; n > 0 {
			last = max(last, binary.LittleEndian.Uint64(b[16+16*((n-1)%kernels.TraceCap)+8:]))
		}
	}
	offset := float64(time.Now().UnixNano())/1e3 - float64(last)/1e3
	done := 0
	for _, l := range t.pending {
		complete := true
		for c, steps := range l.steps {
			if t.read[c]+uint64(len(steps)) > written[c] {
				complete = false
			}
		}
		if !complete {
			break
		}
		for c, steps := range l.steps {
			if len(steps) > 0 {
				t.rec.Name(t.rank, c+1)
			}
			for i, st := range steps {
				k := t.read[c]
				t.read[c]++
				if written[c]-k > kernels.TraceCap {
					t.dropped++
					continue
				}
				e := host[c*kernels.TraceBytes+16+16*int(k%kernels.TraceCap):]
				start, end := binary.LittleEndian.Uint64(e), binary.LittleEndian.Uint64(e[8:])
				t.rec.Event(trace.Event{Name: st.Prim.String(), Cat: "gpu-step", Ph: "X", Ts: float64(start)/1e3 + offset,
					Dur: float64(end-start) / 1e3, Pid: t.rank, Tid: c + 1,
					Args: trace.EventArgs{Seq: l.seq, Step: i, Recv: int(st.RecvPeer), Send: int(st.SendPeer), Count: st.Count}})
			}
		}
		done++
	}
	t.pending = t.pending[done:]
	if t.dropped > 0 {
		t.rec.Event(trace.Event{Name: fmt.Sprintf("%d steps not recorded (trace buffers full)", t.dropped), Cat: "gpu-step",
			Ph: "X", Ts: float64(time.Now().UnixNano()) / 1e3, Pid: t.rank, Tid: 0})
		t.dropped = 0
	}
}
