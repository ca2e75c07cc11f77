package bench

import (
	"context"
	"fmt"
	"math"
	"runtime"
	"sync"
	"sync/atomic"
	"time"

	"github.com/ringo-ccl/ringo"
	"github.com/ringo-ccl/ringo/internal/commhook"
	"github.com/ringo-ccl/ringo/reduce"
)

// Measure is one timed run: microseconds per call (averaged over ranks),
// bandwidths in GB/s (10⁹ bytes), and the mismatching elements summed over
// ranks (-1 when not checked). A call not run — sendrecv and alltoall in
// place, which the library refuses — is notRun: every figure -1.
type Measure struct {
	TimeUs float64 `json:"time_us"`
	AlgBW  float64 `json:"algbw_gbs"`
	BusBW  float64 `json:"busbw_gbs"`
	Wrong  int64   `json:"wrong"`
	// RelErr is the relative RMS error against the exact sum,
	// √(Σ(out−exact)² / Σexact²) over every rank's output (Options.Error;
	// -1 when not measured).
	RelErr float64 `json:"rel_err"`
}

// notRun is the Measure of a call not run.
var notRun = Measure{TimeUs: -1, AlgBW: -1, BusBW: -1, Wrong: -1, RelErr: -1}

// Ran reports whether m was measured (is not notRun).
func (m Measure) Ran() bool { return m.TimeUs >= 0 }

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
	ctx     context.Context
	c       *ringo.Comm // the rank
	agg     *ringo.Comm // a host communicator of the same ranks, for barriers and sums
	t       target
	o       *Options
	n, rank int
	one     []float64           // scratch for aggregating over ranks
	do      func(*layout) error // runs one collective to completion: the target's, or a test's stand-in
}

// RunRank runs the sweep of o on c's rank, a rank of a host communicator.
// Every rank of the communicator must call it with the same options; all of
// them return the same rows. row, if not nil, is called with each row as
// soon as it is measured.
func RunRank(ctx context.Context, c *ringo.Comm, o Options, row func(Row)) ([]Row, error) {
	if err := o.Validate(c.Size()); err != nil {
		return nil, err
	}
	if o.Graph > 0 {
		return nil, fmt.Errorf("CUDA graphs (-G %d) time GPU communicators only", o.Graph)
	}
	t, err := newHostTargetFor(ctx, c, o.maxBytes(c.Size()), o.Windows)
	if err != nil {
		return nil, err
	}
	defer t.close()
	return sweep(ctx, c, c, t, &o, row)
}

// RunGPURank runs the sweep on c's rank, a rank of a GPU communicator, with
// its buffers in GPU memory and its collectives on a stream of its own. agg
// is a host communicator of the same ranks (the same size, the same rank)
// that the ranks use to agree on timings and error counts.
func RunGPURank(ctx context.Context, c, agg *ringo.Comm, o Options, row func(Row)) ([]Row, error) {
	if err := o.Validate(c.Size()); err != nil {
		return nil, err
	}
	if agg.Size() != c.Size() || agg.Rank() != c.Rank() || agg.GPU() >= 0 {
		return nil, fmt.Errorf("bench: the aggregating communicator must be a host rank %d of %d", c.Rank(), c.Size())
	}
	t, err := newGPUTarget(ctx, c, o.maxBytes(c.Size()), o.Windows)
	if err != nil {
		return nil, err
	}
	defer t.close()
	// No rank launches before every rank has its buffers: ranks of one
	// process sharing a GPU share its context, where CUDA may keep a kernel
	// launched after a memory allocation from running beside one launched
	// before it (implicit synchronization) — and the earlier, a peer's,
	// waits for it. README asks this of every program; the deadlocks that
	// 4-rank sweeps met had another cause (package cuda's legacy-stream wait).
	if err := ringo.AllReduce(ctx, agg, []float64{0}, []float64{0}, ringo.OpSum); err != nil {
		return nil, fmt.Errorf("bench: waiting for every rank's buffers: %w", err)
	}
	return sweep(ctx, c, agg, t, &o, row)
}

func sweep(ctx context.Context, c, agg *ringo.Comm, t target, o *Options, row func(Row)) ([]Row, error) {
	n := c.Size()
	rr := newRankRun(ctx, c, agg, t, o)
	runtime.GC() // settle the heap now, not during the first timed sizes
	var rows []Row
	for _, coll := range o.Colls {
		for _, dt := range o.Types {
			for _, k := range o.Ops {
				if !coll.Reduces() && k != o.Ops[0] {
					continue // ops mean nothing to copies: one row per size
				}
				for _, sh := range o.shapes(coll, dt, n) {
					r, err := rr.measure(coll, dt, k, sh)
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

// newRankRun returns rank c's state for running o on t, aggregating over
// agg; its check runs each collective to completion on t.
func newRankRun(ctx context.Context, c, agg *ringo.Comm, t target, o *Options) *rankRun {
	rr := &rankRun{ctx: ctx, c: c, agg: agg, t: t, o: o, n: c.Size(), rank: c.Rank(), one: make([]float64, 1)}
	rr.do = func(l *layout) error {
		if err := t.run(l); err != nil {
			return err
		}
		return t.sync()
	}
	return rr
}

func (rr *rankRun) measure(coll Coll, t ringo.DataType, k reduce.OpKind, sh shape) (Row, error) {
	bytes := sh.elems * int64(t.Size())
	row := Row{Coll: coll.String(), Bytes: bytes, Count: sh.elems, Type: t.String(), Op: opName(k), Root: -1}
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
	row.InPlace = notRun
	for _, inPlace := range []bool{false, true} {
		if inPlace && !coll.runsInPlace() {
			continue
		}
		l := rr.layout(coll, t, op, sh.count, inPlace)
		for range rr.o.Warmup {
			if err := rr.t.run(&l); err != nil {
				return row, err
			}
		}
		if err := rr.t.sync(); err != nil {
			return row, err
		}
		timed, calls, done, err := rr.timed(&l)
		if err != nil {
			return row, err
		}
		if err := rr.barrier(); err != nil {
			done()
			return row, err
		}
		start := time.Now()
		err = timed()
		if err == nil {
			err = rr.t.sync()
		}
		elapsed := time.Since(start)
		done()
		if err != nil {
			return row, err
		}
		sec, err := rr.sum(elapsed.Seconds() / float64(calls))
		if err != nil {
			return row, err
		}
		sec /= float64(rr.n)
		m := Measure{TimeUs: sec * 1e6, Wrong: -1, RelErr: -1}
		if sec > 0 {
			m.AlgBW = float64(bytes) / 1e9 / sec
			m.BusBW = m.AlgBW * coll.BusFactor(rr.n)
		}
		if rr.o.Check > 0 {
			var wrong int64
			var e errSums
			for rep := range rr.o.Check {
				w, err := rr.checkOne(&l, k, uint64(rep+1), &e)
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
			if rr.o.Error {
				if m.RelErr, err = rr.relErr(e); err != nil {
					return row, err
				}
			}
		}
		if inPlace {
			row.InPlace = m
		} else {
			row.OutOfPlace = m
		}
	}
	return row, nil
}

// timed returns what the timed loop of l runs and how many calls that is:
// Iters calls, or, with Options.Graph, that many replays of a graph of
// Iters calls (captured now: the warm-up has made the connections and
// plans). done releases the graph.
func (rr *rankRun) timed(l *layout) (run func() error, calls int, done func(), err error) {
	if rr.o.Graph == 0 {
		return func() error { return rr.runN(l, rr.o.Iters) }, rr.o.Iters, func() {}, nil
	}
	g, err := rr.capture(l, rr.o.Iters)
	if err != nil {
		return nil, 0, nil, err
	}
	return func() error {
		for range rr.o.Graph {
			if err := rr.t.(grapher).launch(g); err != nil {
				return err
			}
		}
		return nil
	}, rr.o.Iters * rr.o.Graph, func() { g.Close() }, nil
}

// checkOne is check of one call of l: run by rr.do, or, with
// Options.Graph, as the replay of a graph of that one call.
func (rr *rankRun) checkOne(l *layout, k reduce.OpKind, seed uint64, e *errSums) (int64, error) {
	if rr.o.Graph == 0 {
		return rr.check(l, k, seed, e)
	}
	g, err := rr.capture(l, 1)
	if err != nil {
		return 0, err
	}
	defer g.Close()
	// No rank replays before every rank has its graph: ranks of one process
	// sharing a GPU share its context, and one whose kernel waits for a
	// peer's replay while that peer instantiates its graph (which may wait
	// for the GPU) never returns. A 4-rank -G -c 1 sweep hung so at its
	// first size (call V); the timed graphs had this barrier already.
	if err := rr.barrier(); err != nil {
		return 0, err
	}
	do := rr.do
	rr.do = func(*layout) error {
		if err := rr.t.(grapher).launch(g); err != nil {
			return err
		}
		return rr.t.sync()
	}
	defer func() { rr.do = do }()
	return rr.check(l, k, seed, e)
}

// runN enqueues (a GPU's) or runs n calls of l.
func (rr *rankRun) runN(l *layout, n int) error {
	for range n {
		if err := rr.t.run(l); err != nil {
			return err
		}
	}
	return nil
}

// capture captures n calls of l into a CUDA graph on the rank's stream.
func (rr *rankRun) capture(l *layout, n int) (*ringo.Graph, error) {
	gt, ok := rr.t.(grapher)
	if !ok {
		return nil, fmt.Errorf("CUDA graphs (-G) on a target without them")
	}
	g, err := gt.capture(func() error { return rr.runN(l, n) })
	if err != nil {
		return nil, fmt.Errorf("capturing %d calls of %v into a CUDA graph: %w", n, l.coll, err)
	}
	return g, nil
}

// op returns this rank's operator for kind k (mulsum scalars differ by rank).
func (rr *rankRun) op(t ringo.DataType, k reduce.OpKind) (ringo.Op, error) {
	if k != reduce.PreMulSum {
		return reduce.OpOf(k)
	}
	var b [8]byte
	Put(t, b[:], 0, scalar(rr.rank))
	bits := uint64(0)
	for i := range t.Size() {
		bits |= uint64(b[i]) << (8 * i)
	}
	return reduce.PreMulBits(t, bits)
}

// layout places the buffers of one collective, in place or not, shifted
// by Options.Unalign elements; a point-to-point collective's call is bound
// to them (target.bind) once, here. In place, both are in the receive
// buffer, the smaller at this rank's block of the larger (NCCL's in-place
// layout).
func (rr *rankRun) layout(coll Coll, t ringo.DataType, op ringo.Op, count int64, inPlace bool) layout {
	elt := int64(t.Size())
	in, out := coll.elems(count, rr.n)
	shift := rr.o.Unalign * elt
	l := layout{coll: coll, typ: t, op: op, count: count, root: rr.o.Root, inPlace: inPlace,
		inBuf: 0, outBuf: 1, inOff: shift, outOff: shift, inLen: in * elt, outLen: out * elt}
	seg := int64(rr.rank) * count * elt
	if inPlace {
		l.inBuf = 1
		switch {
		case in > out:
			l.outOff += seg
		case out > in:
			l.inOff += seg
		}
	}
	if _, ring := coll.Ring(); !ring {
		rr.t.bind(&l)
	}
	return l
}

// check fills the inputs with the seed's data, runs the call once and
// returns this rank's mismatching output elements (adding, in error mode,
// to e). Filling and checking are spread over the machine's cores: a check
// of 2³⁰ elements must not take minutes.
func (rr *rankRun) check(l *layout, k reduce.OpKind, seed uint64, e *errSums) (int64, error) {
	t := l.typ
	elt := int64(t.Size())
	n, count := rr.n, l.count
	bufs := rr.t.buffers()
	outB := bufs[l.outBuf][l.outOff : l.outOff+l.outLen]
	for i := range outB {
		outB[i] = poison
	}
	inB := bufs[l.inBuf][l.inOff : l.inOff+l.inLen]
	gen := value
	if rr.o.Error {
		gen = randomValue
	} else if l.coll == AllReduce && k == reduce.Sum {
		// Partial sums that travel in a narrower type (a precision
		// variant's wire) must be exact there too.
		if w := commhook.SumPathOf(rr.c, t).Wire; exactLimit(w) < exactLimit(t) {
			gen = func(_ ringo.DataType, k reduce.OpKind, n, rank int, i int64, seed uint64) float64 {
				return value(w, k, n, rank, i, seed)
			}
		}
	}
	parallel(l.inLen/elt, n, func(lo, hi int64, _ []float64) {
		for i := lo; i < hi; i++ {
			Put(t, inB, i, gen(t, k, n, rr.rank, i, seed))
		}
	})
	if err := rr.t.upload(l); err != nil {
		return 0, err
	}
	if err := rr.do(l); err != nil {
		return 0, err
	}
	if err := rr.t.download(l); err != nil {
		return 0, err
	}
	if l.coll == Reduce && rr.rank != l.root {
		return 0, nil
	}
	// input returns rank q's input element i as stored in t.
	input := func(q int, i int64) float64 { return roundTo(t, gen(t, k, n, q, i, seed)) }
	if rr.o.Error {
		return rr.checkSums(t, outB, input, e), nil
	}
	var wrong atomic.Int64
	parallel(l.outLen/elt, n, func(lo, hi int64, vals []float64) {
		bad := int64(0)
		for i := lo; i < hi; i++ {
			var want float64
			if l.coll.Reduces() {
				src := i
				if l.coll == ReduceScatter {
					src = int64(rr.rank)*count + i
				}
				for q := range n {
					vals[q] = input(q, src)
				}
				want = expect(t, k, vals)
			} else if q, j, ok := rr.source(l, i); ok {
				want = input(q, j)
			} else {
				if !poisoned(outB[i*elt : (i+1)*elt]) {
					bad++
				}
				continue
			}
			got := Get(t, outB, i)
			if k == reduce.Avg && t.IsFloat() && l.coll.Reduces() {
				// Each input is multiplied by 1/n rounded, then summed:
				// allow a rounding per term at the terms' magnitude.
				mag := 0.0
				for _, v := range vals {
					mag += math.Abs(v)
				}
				if !(math.Abs(got-want) <= 2*float64(n)*ulp(t, mag/float64(n))) {
					bad++
				}
				continue
			}
			if roundTo(t, want) != got {
				bad++
			}
		}
		wrong.Add(bad)
	})
	return wrong.Load(), nil
}

// poison fills every output before a check: a pattern no check expects.
const poison = 0xA5

// poisoned reports whether an element's bytes b are all poison.
func poisoned(b []byte) bool {
	for _, v := range b {
		if v != poison {
			return false
		}
	}
	return true
}

// source returns where element i of this rank's output of a collective
// that copies (no reduction) comes from: element j of rank q's input. ok
// is false where the output must keep the poison it held: a gather's
// output at a rank other than the root, but for its own block in place.
func (rr *rankRun) source(l *layout, i int64) (q int, j int64, ok bool) {
	count, rank := l.count, int64(rr.rank)
	switch l.coll {
	case Broadcast:
		return l.root, i, true
	case SendRecv:
		return (rr.rank + rr.n - 1) % rr.n, i, true
	case AllToAll:
		return int(i / count), rank*count + i%count, true
	case Scatter:
		return l.root, rank*count + i, true
	case Gather:
		if rr.rank != l.root && !(l.inPlace && i/count == rank) {
			return 0, 0, false
		}
	}
	return int(i / count), i % count, true // all-gather, gather
}

// errSums accumulates the squared errors of error mode and the squared
// exact sums they are relative to.
type errSums struct{ err2, ref2 float64 }

// relErr returns √(Σerr²/Σref²) over every rank's sums.
func (rr *rankRun) relErr(e errSums) (float64, error) {
	err2, err := rr.sum(e.err2)
	if err != nil {
		return 0, err
	}
	ref2, err := rr.sum(e.ref2)
	if err != nil || ref2 == 0 {
		return 0, err
	}
	return math.Sqrt(err2 / ref2), nil
}

// checkSums is check's error mode for an all-reduce sum: every output
// element must equal the sum of one rotation of the ring as the
// communicator computes it (commhook.SumPath), and its distance to the
// exact sum goes into e. It returns the elements that match no rotation.
func (rr *rankRun) checkSums(t ringo.DataType, out []byte, input func(q int, i int64) float64, e *errSums) int64 {
	path := commhook.SumPathOf(rr.c, t)
	orders := [][]int{path.Ring}
	if path.Backwards {
		rev := make([]int, len(path.Ring))
		for i, r := range path.Ring {
			rev[len(rev)-1-i] = r
		}
		orders = append(orders, rev)
	}
	n := rr.n
	var wrong atomic.Int64
	var mu sync.Mutex
	parallel(int64(len(out)/t.Size()), n, func(lo, hi int64, vals []float64) {
		o := sumOrder{orders: orders, groups: path.Groups, wire: path.Wire, buf: t, part: make([]float64, len(path.Groups))}
		bad := int64(0)
		var err2, ref2 float64
		for i := lo; i < hi; i++ {
			exact := 0.0
			for q := range n {
				vals[q] = input(q, i)
				exact += vals[q]
			}
			got := Get(t, out, i)
			err2 += (got - exact) * (got - exact)
			ref2 += exact * exact
			if !o.matches(got, vals) {
				bad++
			}
		}
		wrong.Add(bad)
		mu.Lock()
		e.err2 += err2
		e.ref2 += ref2
		mu.Unlock()
	})
	return wrong.Load()
}

// sumOrder is the order and rounding of a communicator's all-reduce sums
// (commhook.SumPath) as one checking worker reproduces them: each hop adds in
// float32, as the executors do, then rounds once to the wire type (the
// float64 sum of two values rounded to float32 is float32's correctly
// rounded sum; a float32 input added to a bfloat16 partial sum can round
// differently through float32 than at once); the final value is rounded
// to the buffers' type.
type sumOrder struct {
	orders    [][]int // the ring, and its reverse for backward channels
	groups    [][]int // the hierarchical variant's groups, or nil
	wire, buf ringo.DataType
	part      []float64 // scratch: one partial sum per group
}

func (o *sumOrder) hop(acc, v float64) float64 { return roundTo(o.wire, float64(float32(acc+v))) }

// matches reports whether got is Buf(Wire(…Wire(Wire(x₀) + x₁)… + xₙ₋₁))
// for the inputs vals in the order of some rotation of one of the orders,
// or the hierarchical sum of some rotation of the groups.
func (o *sumOrder) matches(got float64, vals []float64) bool {
	for _, order := range o.orders {
		n := len(order)
		for s := range n {
			acc := roundTo(o.wire, vals[order[s]])
			for j := 1; j < n; j++ {
				acc = o.hop(acc, vals[order[(s+j)%n]])
			}
			if roundTo(o.buf, acc) == got {
				return true
			}
		}
	}
	return o.matchesHierarchy(got, vals)
}

// matchesHierarchy reports whether got is the hierarchical variant's sum:
// every group's inputs summed round it from the same position, then those
// sums round the groups from one of them.
func (o *sumOrder) matchesHierarchy(got float64, vals []float64) bool {
	if len(o.groups) == 0 {
		return false
	}
	g, ng := len(o.groups[0]), len(o.groups)
	for s1 := range g {
		for k, grp := range o.groups {
			o.part[k] = roundTo(o.wire, vals[grp[s1]])
			for j := 1; j < g; j++ {
				o.part[k] = o.hop(o.part[k], vals[grp[(s1+j)%g]])
			}
		}
		for s2 := range ng {
			acc := o.part[s2]
			for k := 1; k < ng; k++ {
				acc = o.hop(acc, o.part[(s2+k)%ng])
			}
			if roundTo(o.buf, acc) == got {
				return true
			}
		}
	}
	return false
}

// parallel runs f over [0, total) in pieces on every core; each piece gets
// a scratch slice of n float64s.
func parallel(total int64, n int, f func(lo, hi int64, scratch []float64)) {
	const piece = 1 << 16
	workers := int64(runtime.GOMAXPROCS(0))
	if total <= piece || workers == 1 {
		f(0, total, make([]float64, n))
		return
	}
	per := (total + workers - 1) / workers
	var wg sync.WaitGroup
	for lo := int64(0); lo < total; lo += per {
		wg.Add(1)
		go func() {
			defer wg.Done()
			f(lo, min(lo+per, total), make([]float64, n))
		}()
	}
	wg.Wait()
}

// barrier waits for every rank.
func (rr *rankRun) barrier() error {
	_, err := rr.sum(0)
	return err
}

// sum adds v over all ranks.
func (rr *rankRun) sum(v float64) (float64, error) {
	rr.one[0] = v
	if err := ringo.AllReduce(rr.ctx, rr.agg, rr.one, rr.one, ringo.OpSum); err != nil {
		return 0, fmt.Errorf("aggregating over ranks: %w", err)
	}
	return rr.one[0], nil
}
