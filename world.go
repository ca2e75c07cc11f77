package ringo

import (
	"context"
	"encoding/binary"
	"fmt"
	"strings"
	"sync"

	"github.com/ringo-ccl/ringo/bootstrap"
	"github.com/ringo-ccl/ringo/device"
	"github.com/ringo-ccl/ringo/reduce"
	"github.com/ringo-ccl/ringo/ring"
	"github.com/ringo-ccl/ringo/transport"
)

// world is what the in-process ranks of one communicator share: the
// transport, an abort flag that fails every rank once the ring is broken,
// and a record of each rank's calls, used to detect ranks that disagree on a
// collective and to name the ranks a stalled collective waits for.
type world struct {
	n     int
	tr    transport.Transport
	abort transport.Abort
	done  func() error   // frees what the ranks share, when the last one closes
	gpus  []*device.Rank // the ranks' device executors, for a GPU world

	mu    sync.Mutex // guards calls and open
	calls []callRecord
	open  int // ranks not yet closed
}

// callRecord is what one rank entered as its seq-th collective.
type callRecord struct {
	seq   uint64 // collectives entered, this one included; 0: none yet
	coll  ring.Collective
	count int64
	dt    DataType
	op    reduce.OpKind
	root  int
	done  bool
	// Where a GPU rank enqueued it (not exchanged between processes);
	// gpu -1 for a host rank.
	stream gpuStream
}

// gpuStream is a GPU and one of its streams, as a process sees them.
type gpuStream struct {
	gpu    int
	handle uintptr
}

// sameStream returns the error of ranks a and b of one process enqueueing
// collective #seq on the same stream of one GPU, or nil. Each one's kernel
// would wait for the other's, which the stream runs only after it: a hang
// NCCL meets too, with ranks sharing a GPU (which it refuses).
func sameStream(seq uint64, a int, sa gpuStream, b int, sb gpuStream) error {
	if sa.gpu < 0 || sa != sb {
		return nil
	}
	return fmt.Errorf("%w: ranks %d and %d share GPU %d and enqueued collective #%d on the same stream (%#x): each rank's kernel waits for the other's, which the stream runs only after it; give every rank a stream of its own",
		ErrInvalidArgument, a, b, sa.gpu, seq, sa.handle)
}

// enter records rank's seq-th call and checks it against every other rank's
// record of the same collective. A mismatch is returned (and the caller
// aborts the world: the ranks already inside will never complete).
func (w *world) enter(rank int, rec callRecord) error {
	w.mu.Lock()
	defer w.mu.Unlock()
	w.calls[rank] = rec
	for r, o := range w.calls {
		if r == rank || o.seq != rec.seq {
			continue
		}
		if err := rec.mismatch(rank, o, r); err != nil {
			return err
		}
		if err := sameStream(rec.seq, r, o.stream, rank, rec.stream); err != nil {
			return err
		}
	}
	return nil
}

// mismatch returns the error of rank's call rec disagreeing with rank r's
// call o of the same sequence number, or nil.
func (rec callRecord) mismatch(rank int, o callRecord, r int) error {
	if o.seq != rec.seq || o.coll != rec.coll || o.count != rec.count || o.dt != rec.dt ||
		(rec.coll.Reduces() && o.op != rec.op) || (rec.coll.Rooted() && o.root != rec.root) {
		return fmt.Errorf("%w: collective #%d differs between ranks: rank %d called %s, rank %d called %s",
			ErrInvalidArgument, rec.seq, rank, rec, r, o)
	}
	return nil
}

// encode is the record as RINGO_CHECK exchanges it: seq, count and root
// (8 bytes each), collective, datatype and op (a byte each).
func (rec callRecord) encode() []byte {
	b := binary.BigEndian.AppendUint64(nil, rec.seq)
	b = binary.BigEndian.AppendUint64(b, uint64(rec.count))
	b = binary.BigEndian.AppendUint64(b, uint64(int64(rec.root)))
	return append(b, byte(rec.coll), byte(rec.dt), byte(rec.op))
}

func decodeCallRecord(b []byte) (callRecord, error) {
	if len(b) != 27 {
		return callRecord{}, fmt.Errorf("record of %d bytes, want 27", len(b))
	}
	return callRecord{seq: binary.BigEndian.Uint64(b), count: int64(binary.BigEndian.Uint64(b[8:])),
		root: int(int64(binary.BigEndian.Uint64(b[16:]))), coll: ring.Collective(b[24]), dt: DataType(b[25]),
		op: reduce.OpKind(b[26])}, nil
}

// leave marks rank's current call finished.
func (w *world) leave(rank int) {
	w.mu.Lock()
	w.calls[rank].done = true
	w.mu.Unlock()
}

// stalled describes, for a call that timed out, which ranks have not yet
// entered it and which are still inside it.
func (w *world) stalled(seq uint64) string {
	w.mu.Lock()
	defer w.mu.Unlock()
	ps := make([]bootstrap.Progress, len(w.calls))
	for r, c := range w.calls {
		ps[r] = bootstrap.NewProgress(r, c.seq, c.done)
	}
	return stallReport(seq, ps)
}

// stallReport describes where every rank is when this rank's collective
// #seq timed out, Horovod's stall inspector's way: the ranks that have not
// called it (with the collective each is at), those still inside it, those
// done with it, and those that did not answer or are gone.
func stallReport(seq uint64, ps []bootstrap.Progress) string {
	var missing, inside, finished, silent, gone []int
	var at []string
	for _, p := range ps {
		switch {
		case p.State == bootstrap.Silent:
			silent = append(silent, p.Rank)
		case p.State == bootstrap.Gone:
			gone = append(gone, p.Rank)
		case p.Seq < seq:
			missing = append(missing, p.Rank)
			at = append(at, fmt.Sprintf("rank %d at #%d", p.Rank, p.Seq))
		case p.Seq == seq && p.State == bootstrap.Inside:
			inside = append(inside, p.Rank)
		default:
			finished = append(finished, p.Rank)
		}
	}
	out := fmt.Sprintf("collective #%d: ranks that never called it %v, ranks still inside it %v", seq, missing, inside)
	for _, l := range []struct {
		what  string
		ranks []int
	}{{"ranks past it", finished}, {"ranks not answering", silent}, {"ranks gone", gone}} {
		if len(l.ranks) > 0 {
			out += fmt.Sprintf(", %s %v", l.what, l.ranks)
		}
	}
	if len(at) > 0 {
		out += " (" + strings.Join(at, ", ") + ")"
	}
	return out
}

func (c callRecord) String() string {
	s := fmt.Sprintf("%v(count %d, %v", c.coll, c.count, c.dt)
	if c.coll.Reduces() {
		s += fmt.Sprintf(", %v", c.op)
	}
	if c.coll.Rooted() {
		s += fmt.Sprintf(", root %d", c.root)
	}
	return s + ")"
}

var _ group = (*world)(nil)

func (w *world) broken() *transport.Abort { return &w.abort }

func (w *world) proxied() bool { return false }

// fail breaks the world: every rank's waits end, and every rank's kernels
// stop at their next check of the abort flag.
func (w *world) fail(cause error) {
	w.abort.Set(cause)
	for _, g := range w.gpus {
		g.Abort()
	}
}

// release closes the transport when the last rank leaves.
func (w *world) release(int) error {
	w.mu.Lock()
	w.open--
	last := w.open == 0
	w.mu.Unlock()
	if last {
		return w.done()
	}
	return nil
}

// connect does nothing: in-memory connections are made on first use.
func (w *world) connect(context.Context, []transport.Edge) error { return nil }
