package calls

import (
	"encoding/binary"
	"fmt"

	"github.com/ringo-ccl/ringo/internal/errs"
	"github.com/ringo-ccl/ringo/reduce"
	"github.com/ringo-ccl/ringo/ring"
)

// Record is what one rank entered as its Seq-th collective.
type Record struct {
	Seq   uint64 // collectives entered, this one included; 0: none yet
	Coll  ring.Collective
	Count int64
	Type  reduce.DataType
	Op    reduce.OpKind
	Root  int
	Done  bool
	// Where a GPU rank enqueued it (not exchanged between processes);
	// GPU -1 for a host rank.
	Stream Stream
}

// Stream is a GPU and one of its streams, as a process sees them.
type Stream struct {
	GPU    int
	Handle uintptr
}

// SameStream returns the error of ranks a and b of one process enqueueing
// collective #seq on the same stream of one GPU, or nil. Each one's kernel
// would wait for the other's, which the stream runs only after it: a hang
// NCCL meets too, with ranks sharing a GPU (which it refuses).
func SameStream(seq uint64, a int, sa Stream, b int, sb Stream) error {
	if sa.GPU < 0 || sa != sb {
		return nil
	}
	return fmt.Errorf("%w: ranks %d and %d share GPU %d and enqueued collective #%d on the same stream (%#x): each rank's kernel waits for the other's, which the stream runs only after it; give every rank a stream of its own",
		errs.ErrInvalidArgument, a, b, sa.GPU, seq, sa.Handle)
}

// ReplayCount is the count of a record that stands for the replay of a
// CUDA graph of collectives (package ringo's Graph.Launch), numbered and
// ordered as a call is: no call has a negative count.
const ReplayCount = -1

// Replay returns the record of a graph's replay, the rank's call #seq, on
// stream s.
func Replay(seq uint64, s Stream) Record { return Record{Seq: seq, Count: ReplayCount, Stream: s} }

// Mismatch returns the error of rank's call rec disagreeing with rank r's
// call o of the same sequence number, or nil.
func (rec Record) Mismatch(rank int, o Record, r int) error {
	if o.Seq != rec.Seq || o.Coll != rec.Coll || o.Count != rec.Count || o.Type != rec.Type ||
		(rec.Coll.Reduces() && o.Op != rec.Op) || (rec.Coll.Rooted() && o.Root != rec.Root) {
		return fmt.Errorf("%w: collective #%d differs between ranks: rank %d called %s, rank %d called %s",
			errs.ErrInvalidArgument, rec.Seq, rank, rec, r, o)
	}
	return nil
}

// Encode is the record as RINGO_CHECK exchanges it: seq, count and root
// (8 bytes each), collective, datatype and op (a byte each).
func (rec Record) Encode() []byte {
	b := binary.BigEndian.AppendUint64(nil, rec.Seq)
	b = binary.BigEndian.AppendUint64(b, uint64(rec.Count))
	b = binary.BigEndian.AppendUint64(b, uint64(int64(rec.Root)))
	return append(b, byte(rec.Coll), byte(rec.Type), byte(rec.Op))
}

// Decode reads a record Encode wrote.
func Decode(b []byte) (Record, error) {
	if len(b) != 27 {
		return Record{}, fmt.Errorf("record of %d bytes, want 27", len(b))
	}
	return Record{Seq: binary.BigEndian.Uint64(b), Count: int64(binary.BigEndian.Uint64(b[8:])),
		Root: int(int64(binary.BigEndian.Uint64(b[16:]))), Coll: ring.Collective(b[24]), Type: reduce.DataType(b[25]),
		Op: reduce.OpKind(b[26])}, nil
}

func (rec Record) String() string {
	if rec.Count == ReplayCount {
		return "a CUDA graph's replay"
	}
	s := fmt.Sprintf("%v(count %d, %v", rec.Coll, rec.Count, rec.Type)
	if rec.Coll.Reduces() {
		s += fmt.Sprintf(", %v", rec.Op)
	}
	if rec.Coll.Rooted() {
		s += fmt.Sprintf(", root %d", rec.Root)
	}
	return s + ")"
}
