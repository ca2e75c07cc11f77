package bench

import (
	"context"
	"fmt"
	"math"
	"runtime"
	"time"

	"github.com/ringo-ccl/ringo"
	"github.com/ringo-ccl/ringo/internal/mem"
	"github.com/ringo-ccl/ringo/reduce"
)

// Measure is one timed run: microseconds per call (averaged over ranks),
// bandwidths in GB/s (10⁹ bytes), and the mismatching elements summed over
// ranks (-1 when not checked).
type Measure struct {
	TimeUs float64 `json:"time_us"`
	AlgBW  float64 `json:"algbw_gbs"`
	BusBW  float64 `json:"busbw_gbs"`
	Wrong  int64   `json:"wrong"`
}

// Row is one line of the table.
type Row struct {
	Coll       string  `json:"collective"`
	Bytes      int64   `json:"size_bytes"`
	Count      int64   `json:"count"`
	Type       string  `json:"type"`
	Op         string  `json:"redop"`
	Root       int     `json:"root"`
	OutOfPlace Measure `json:"out_of_place"`
	InPlace    Measure `json:"in_place"`
}

// rankRun is one rank's state during a sweep.
type rankRun struct {
	ctx        context.Context
	c          *ringo.Comm
	o          *Options
	n, rank    int
	send, recv []byte
	one        []float64 // scratch for aggregating over ranks
	vals       []float64
	do         func(ringo.Call) error // runs one collective: c.Do, or a test's stand-in
}

// RunRank runs the sweep of o on c's rank. Every rank of the communicator
// must call it with the same options; all of them return the same rows.
// row, if not nil, is called with each row as soon as it is measured.
func RunRank(ctx context.Context, c *ringo.Comm, o Options, row func(Row)) ([]Row, error) {
	n := c.Size()
	if err := o.Validate(n); err != nil {
		return nil, err
	}
	var maxBuf int64
	for _, t := range o.Types {
		maxBuf = max(maxBuf, o.MaxBytes/int64(t.Size())*int64(t.Size()))
	}
	rr := &rankRun{ctx: ctx, c: c, o: &o, n: n, rank: c.Rank(), one: make([]float64, 1), vals: make([]float64, n)}
	rr.do = func(call ringo.Call) error { return c.Do(ctx, call) }
	rr.send, rr.recv = mem.Alloc(int(maxBuf), 64), mem.Alloc(int(maxBuf), 64)
	runtime.GC() // settle the heap now, not during the first timed sizes
	var rows []Row
	for _, coll := range o.Colls {
		for _, t := range o.Types {
			for _, k := range o.Ops {
				if !coll.Reduces() && k != o.Ops[0] {
					continue // ops mean nothing to copies: one row per size
				}
				for _, size := range o.Sizes() {
					r, err := rr.measureSize(coll, t, k, size)
					if err != nil {
						return rows, err
					}
					rows = append(rows, r)
					if row != nil {
						row(r)
					}
				}
			}
		}
	}
	return rows, nil
}

// counts returns (Call.Count, elements of the larger buffer) for a size.
func counts(coll ringo.Collective, t ringo.DataType, n int, size int64) (int64, int64) {
	elems := size / int64(t.Size())
	switch coll {
	case ringo.CollAllGather, ringo.CollReduceScatter:
		per := elems / int64(n)
		return per, per * int64(n)
	}
	return elems, elems
}

func (rr *rankRun) measureSize(coll ringo.Collective, t ringo.DataType, k reduce.OpKind, size int64) (Row, error) {
	count, elems := counts(coll, t, rr.n, size)
	bytes := elems * int64(t.Size())
	row := Row{Coll: CollName(coll), Bytes: bytes, Count: elems, Type: t.String(), Op: opName(k), Root: -1}
	if coll.Rooted() {
		row.Root = rr.o.Root
	}
	if !coll.Reduces() {
		row.Op = "none"
	}
	op, err := rr.op(t, k)
	if err != nil {
		return row, err
	}
	for _, inPlace := range []bool{false, true} {
		call := rr.call(coll, t, op, count, inPlace)
		for range rr.o.Warmup {
			if err := rr.c.Do(rr.ctx, call); err != nil {
				return row, err
			}
		}
		if err := rr.barrier(); err != nil {
			return row, err
		}
		start := time.Now()
		for range rr.o.Iters {
			if err := rr.c.Do(rr.ctx, call); err != nil {
				return row, err
			}
		}
		sec, err := rr.sum(time.Since(start).Seconds() / float64(rr.o.Iters))
		if err != nil {
			return row, err
		}
		sec /= float64(rr.n)
		m := Measure{TimeUs: sec * 1e6, Wrong: -1}
		if sec > 0 {
			m.AlgBW = float64(bytes) / 1e9 / sec
			m.BusBW = m.AlgBW * busFactor(coll, rr.n)
		}
		if rr.o.Check > 0 {
			wrong := int64(0)
			for rep := range rr.o.Check {
				w, err := rr.check(call, k, uint64(rep+1))
				if err != nil {
					return row, err
				}
				wrong += w
			}
			total, err := rr.sum(float64(wrong))
			if err != nil {
				return row, err
			}
			m.Wrong = int64(total)
		}
		if inPlace {
			row.InPlace = m
		} else {
			row.OutOfPlace = m
		}
	}
	return row, nil
}

// busFactor converts algorithm bandwidth to bus bandwidth (nccl-tests'
// PERFORMANCE.md).
func busFactor(coll ringo.Collective, n int) float64 {
	switch coll {
	case ringo.CollAllReduce:
		return 2 * float64(n-1) / float64(n)
	case ringo.CollAllGather, ringo.CollReduceScatter:
		return float64(n-1) / float64(n)
	}
	return 1
}

// op returns this rank's operator for kind k (mulsum scalars differ by rank).
func (rr *rankRun) op(t ringo.DataType, k reduce.OpKind) (ringo.Op, error) {
	if k != reduce.PreMulSum {
		return reduce.OpOf(k)
	}
	var b [8]byte
	put(t, b[:], 0, scalar(rr.rank))
	bits := uint64(0)
	for i := range t.Size() {
		bits |= uint64(b[i]) << (8 * i)
	}
	return reduce.PreMulBits(t, bits)
}

// call lays out the buffers of one collective, in place or not.
func (rr *rankRun) call(coll ringo.Collective, t ringo.DataType, op ringo.Op, count int64, inPlace bool) ringo.Call {
	elt := int64(t.Size())
	in, out := count, count
	switch coll {
	case ringo.CollReduceScatter:
		in *= int64(rr.n)
	case ringo.CollAllGather:
		out *= int64(rr.n)
	}
	call := ringo.Call{Coll: coll, Count: count, Type: t, Op: op, Root: rr.o.Root}
	seg := int64(rr.rank) * count * elt
	switch {
	case !inPlace:
		call.Send, call.Recv = rr.send[:in*elt], rr.recv[:out*elt]
	case coll == ringo.CollReduceScatter:
		call.Send, call.Recv = rr.recv[:in*elt], rr.recv[seg:seg+out*elt]
	case coll == ringo.CollAllGather:
		call.Send, call.Recv = rr.recv[seg:seg+in*elt], rr.recv[:out*elt]
	default:
		call.Send, call.Recv = rr.recv[:in*elt], rr.recv[:out*elt]
	}
	return call
}

// check fills the inputs with the seed's data, runs the call once and
// returns this rank's mismatching output elements.
func (rr *rankRun) check(call ringo.Call, k reduce.OpKind, seed uint64) (int64, error) {
	t := call.Type
	n, count := rr.n, call.Count
	inLen := int64(len(call.Send)) / int64(t.Size())
	for i := range call.Recv {
		call.Recv[i] = 0xA5 // a pattern no check expects
	}
	for i := range inLen {
		put(t, call.Send, i, value(t, k, n, rr.rank, i, seed))
	}
	if err := rr.do(call); err != nil {
		return 0, err
	}
	if call.Coll == ringo.CollReduce && rr.rank != call.Root {
		return 0, nil
	}
	// input returns rank q's input element i as stored in t.
	input := func(q int, i int64) float64 {
		var b [8]byte
		put(t, b[:], 0, value(t, k, n, q, i, seed))
		return get(t, b[:], 0)
	}
	var wrong int64
	outLen := int64(len(call.Recv)) / int64(t.Size())
	for i := range outLen {
		var want float64
		switch call.Coll {
		case ringo.CollAllGather:
			want = input(int(i/count), i%count)
		case ringo.CollBroadcast:
			want = input(call.Root, i)
		default:
			src := i
			if call.Coll == ringo.CollReduceScatter {
				src = int64(rr.rank)*count + i
			}
			for q := range n {
				rr.vals[q] = input(q, src)
			}
			want = expect(t, k, rr.vals)
		}
		got := get(t, call.Recv, i)
		if k == reduce.Avg && t.IsFloat() && call.Coll.Reduces() {
			// Each input is multiplied by 1/n rounded, then summed: allow
			// a rounding per term at the terms' magnitude.
			mag := 0.0
			for _, v := range rr.vals {
				mag += math.Abs(v)
			}
			if !(math.Abs(got-want) <= 2*float64(n)*ulp(t, mag/float64(n))) {
				wrong++
			}
			continue
		}
		var wb [8]byte
		put(t, wb[:], 0, want)
		if get(t, wb[:], 0) != got {
			wrong++
		}
	}
	return wrong, nil
}

// barrier waits for every rank.
func (rr *rankRun) barrier() error {
	_, err := rr.sum(0)
	return err
}

// sum adds v over all ranks.
func (rr *rankRun) sum(v float64) (float64, error) {
	rr.one[0] = v
	if err := ringo.AllReduce(rr.ctx, rr.c, rr.one, rr.one, ringo.OpSum); err != nil {
		return 0, fmt.Errorf("aggregating over ranks: %w", err)
	}
	return rr.one[0], nil
}
