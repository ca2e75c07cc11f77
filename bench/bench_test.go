package bench

import (
	"bytes"
	"context"
	"strings"
	"sync"
	"testing"

	"github.com/ringo-ccl/ringo"
	"github.com/ringo-ccl/ringo/reduce"
)

func runAll(t *testing.T, n int, o Options) [][]Row {
	t.Helper()
	rows := make([][]Row, n)
	eachLocalRank(t, n, func(r int, c *ringo.Comm) (err error) {
		rows[r], err = RunRank(context.Background(), c, o, nil)
		return err
	})
	return rows
}

// eachLocalRank runs f on every rank of a loopback communicator of n ranks
// (small buffers, so that messages take several slices), each in a
// goroutine; a rank that fails is aborted, and the test with it.
func eachLocalRank(t *testing.T, n int, f func(r int, c *ringo.Comm) error) {
	t.Helper()
	comms, err := ringo.NewLocal(n, &ringo.Config{BuffSize: 8 * 1024, LLBuffSize: 8 * 256})
	if err != nil {
		t.Fatal(err)
	}
	defer func() {
		for _, c := range comms {
			c.Close()
		}
	}()
	errs := make([]error, n)
	var wg sync.WaitGroup
	for r, c := range comms {
		wg.Add(1)
		go func() {
			defer wg.Done()
			if errs[r] = f(r, c); errs[r] != nil {
				c.Abort()
			}
		}()
	}
	wg.Wait()
	for r, err := range errs {
		if err != nil {
			t.Fatalf("rank %d: %v", r, err)
		}
	}
}

// TestSweepIsCorrect runs every collective, datatype and op at small sizes:
// the harness's own checks must find nothing wrong.
func TestSweepIsCorrect(t *testing.T) {
	t.Run("3 ranks", testSweepIsCorrect)
	// Eight ranks of the 8-bit floats: ±1 times the mulsum scalars sums to
	// 12, past E5M2's exact integers; the inputs must keep every partial
	// sum exact (this found the harness wrong, not the library).
	t.Run("8 ranks of 8-bit floats", func(t *testing.T) {
		o := Defaults()
		o.Colls, _ = ParseColls("all")
		o.Types = []ringo.DataType{ringo.TypeFloat8E4M3, ringo.TypeFloat8E5M2}
		o.Ops, _ = ParseOps("all")
		o.MinBytes, o.MaxBytes, o.StepFactor = 8, 8<<10, 32
		o.Iters, o.Warmup, o.Root = 1, 0, 5
		for _, r := range runAll(t, 8, o)[0] {
			if r.OutOfPlace.Wrong != 0 || r.InPlace.Wrong != 0 {
				t.Errorf("%+v: wrong results", r)
			}
		}
	})
}

func testSweepIsCorrect(t *testing.T) {
	o := Defaults()
	o.Colls, _ = ParseColls("all")
	o.Types, _ = ParseTypes("all")
	o.Ops, _ = ParseOps("all")
	o.MinBytes, o.MaxBytes, o.StepFactor = 8, 8<<10, 32
	o.Iters, o.Warmup, o.Root = 2, 1, 2
	rows := runAll(t, 3, o)
	// Sizes 8, 256 and 8192 for every type: 6 ops for the 3 reductions,
	// one row for the 2 copies.
	want := 3*12*6*3 + 2*12*3
	if len(rows[0]) != want {
		t.Fatalf("%d rows, want %d", len(rows[0]), want)
	}
	for _, r := range rows[0] {
		if r.OutOfPlace.Wrong != 0 || r.InPlace.Wrong != 0 {
			t.Errorf("%+v: wrong results", r)
		}
		if r.OutOfPlace.TimeUs <= 0 {
			t.Errorf("%+v: no time measured", r)
		}
	}
	var buf bytes.Buffer
	WriteHeader(&buf)
	for _, r := range rows[0] {
		WriteRow(&buf, r)
	}
	if !WriteFooter(&buf, rows[0]) || !strings.Contains(buf.String(), "Out of bounds values : 0 OK") {
		t.Fatalf("footer:\n%s", buf.String())
	}
}

// TestCheckFindsCorruption: the check must count an element that is off.
func TestCheckFindsCorruption(t *testing.T) {
	comms, err := ringo.NewLocal(1, nil)
	if err != nil {
		t.Fatal(err)
	}
	defer comms[0].Close()
	o := Defaults()
	for _, dt := range []ringo.DataType{ringo.TypeFloat32, ringo.TypeFloat16, ringo.TypeFloat8E5M2, ringo.TypeInt8} {
		for _, k := range []reduce.OpKind{reduce.Sum, reduce.Avg, reduce.PreMulSum} {
			h := newHostTarget(context.Background(), comms[0], 64)
			rr := &rankRun{ctx: context.Background(), c: comms[0], agg: comms[0], t: h, o: &o, n: 1, one: make([]float64, 1)}
			rr.do = func(l *layout) error {
				if err := h.run(l); err != nil {
					return err
				}
				h.bufs[l.outBuf][l.outOff+3*int64(dt.Size())] ^= 0x40 // flip a bit of element 3
				return nil
			}
			op, err := rr.op(dt, k)
			if err != nil {
				t.Fatal(err)
			}
			l := rr.layout(AllReduce, dt, op, 8, false)
			wrong, err := rr.check(&l, k, 1, new(errSums))
			if err != nil || wrong != 1 {
				t.Errorf("%v %v: check counted %d wrong (err %v), want 1", dt, k, wrong, err)
			}
		}
	}
}

func TestOptions(t *testing.T) {
	o := Defaults()
	o.MinBytes, o.MaxBytes, o.StepFactor = 8, 64, 2
	if got := o.Sizes(); len(got) != 4 || got[3] != 64 {
		t.Fatalf("sizes %v", got)
	}
	o.StepFactor, o.StepBytes = 0, 20
	if got := o.Sizes(); len(got) != 3 || got[2] != 48 {
		t.Fatalf("additive sizes %v", got)
	}
	bad := []func(*Options){
		func(o *Options) { o.MaxBytes = 1 },
		func(o *Options) { o.StepFactor = 1 },
		func(o *Options) { o.Iters = 0 },
		func(o *Options) { o.Root = 4 },
		func(o *Options) { o.Types = []ringo.DataType{99} },
		func(o *Options) { o.Colls = nil },
		func(o *Options) { o.Graph = -1 },
	}
	for i, mod := range bad {
		o := Defaults()
		mod(&o)
		if o.Validate(4) == nil {
			t.Errorf("bad option %d accepted", i)
		}
	}
	if _, err := ParseColls("all_reduce,scan"); err == nil {
		t.Error("unknown collective accepted")
	}
	if _, err := ParseOps("mulsum"); err != nil {
		t.Error(err)
	}
	if _, err := ParseTypes("float128"); err == nil {
		t.Error("unknown type accepted")
	}
	o = Defaults()
	o.Counts = []int64{7, 0}
	o.Colls, o.Types = []Coll{AllGather}, []ringo.DataType{ringo.TypeFloat64}
	if sh := o.shapes(AllGather, ringo.TypeFloat32, 3); len(sh) != 2 || sh[0] != (shape{7, 21}) {
		t.Errorf("explicit counts: %v", sh)
	}
	if got := o.maxBytes(3); got != 21*8 {
		t.Errorf("maxBytes %d, want %d", got, 21*8)
	}
}

// TestHostGraphsAndWindows: CUDA graphs (-G) are refused on a host
// communicator, saying so, before anything runs; windows (-R) there are
// host memory (HostAlloc's), checked.
func TestHostGraphsAndWindows(t *testing.T) {
	o := Defaults()
	o.Graph = 2
	w := Defaults()
	w.Windows, w.MinBytes, w.MaxBytes = true, 8, 1<<16
	eachLocalRank(t, 2, func(r int, c *ringo.Comm) error {
		_, err := RunRank(context.Background(), c, o, nil)
		if err == nil || !strings.Contains(err.Error(), "CUDA graphs (-G 2) time GPU communicators only") {
			t.Errorf("rank %d: %v", r, err)
		}
		rows, err := RunRank(context.Background(), c, w, nil)
		if err != nil {
			t.Errorf("rank %d: %v", r, err)
		}
		for _, row := range rows {
			if row.OutOfPlace.Wrong != 0 || row.InPlace.Wrong != 0 {
				t.Errorf("rank %d: %+v", r, row)
			}
		}
		return nil
	})
}
