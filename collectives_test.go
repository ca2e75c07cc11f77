package ringo_test

import (
	"fmt"
	"math"
	"math/rand/v2"
	"strings"
	"testing"

	"github.com/ringo-ccl/ringo"
	"github.com/ringo-ccl/ringo/bench"
	"github.com/ringo-ccl/ringo/reduce"
)

// TestAllReduce8Ranks: 8 ranks in one process, random float32, float16 and
// bfloat16 data (never zeros), counts from 0 to 10⁶ including primes,
// against a float64 reference within the rounding bound of a 7-addition
// sum; every rank must also hold the same bits.
func TestAllReduce8Ranks(t *testing.T) {
	counts := []int{0, 1, 2, 3, 7, 8, 13, 127, 1021, 4093, 65521, 131071, 999983, 1000000}
	if testing.Short() {
		counts = []int{0, 1, 7, 13, 1021, 65521}
	}
	comms := newComms(t, 8, nil)
	rng := rand.New(rand.NewPCG(7, 8))
	for _, count := range counts {
		t.Run(fmt.Sprintf("float32/%d", count), func(t *testing.T) { allReduceVsRef[float32](t, comms, count, rng, 0x1p-23) })
		t.Run(fmt.Sprintf("float16/%d", count), func(t *testing.T) { allReduceVsRef[ringo.Float16](t, comms, count, rng, 0x1p-10) })
		t.Run(fmt.Sprintf("bfloat16/%d", count), func(t *testing.T) { allReduceVsRef[ringo.BFloat16](t, comms, count, rng, 0x1p-7) })
	}
}

func allReduceVsRef[T ringo.Elem](t *testing.T, comms []*ringo.Comm, count int, rng *rand.Rand, eps float64) {
	n := len(comms)
	sends := make([][]T, n)
	recvs := make([][]T, n)
	for r := range n {
		sends[r] = make([]T, count)
		for i := range sends[r] {
			v := rng.Float64()*2 - 1
			if math.Abs(v) < 1e-3 {
				v = 0.5
			}
			sends[r][i] = fromF64[T](v)
		}
		recvs[r] = make([]T, count)
	}
	noErrors(t, each(comms, func(r int, c *ringo.Comm) error {
		return ringo.AllReduce(bg, c, sends[r], recvs[r], ringo.OpSum)
	}))
	for i := range count {
		exact, mag := 0.0, 0.0
		for r := range n {
			x := toF64(sends[r][i])
			exact += x
			mag += math.Abs(x)
		}
		got := toF64(recvs[0][i])
		// Each of the n−1 additions rounds once; the final one also to T.
		if tol := float64(n) * eps * mag; math.Abs(got-exact) > tol {
			t.Fatalf("element %d: got %v, exact sum %v (tolerance %v)", i, got, exact, tol)
		}
		for r := 1; r < n; r++ {
			if recvs[r][i] != recvs[0][i] {
				t.Fatalf("element %d: rank %d holds %v, rank 0 %v", i, r, recvs[r][i], recvs[0][i])
			}
		}
	}
}

// TestEveryTypeAndOp runs all five collectives for all 12 datatypes and all
// ops with inputs chosen so every result is exactly representable, and
// compares bit for bit, in and out of place, over both protocols — on four
// ranks with the ring and the bidirectional variant, and on two with the
// one-shot variant. Each datatype's all-to-all, all-to-allv, gather and
// scatter run too (checkP2PColls), which no variant changes.
func TestEveryTypeAndOp(t *testing.T) {
	for _, v := range []struct {
		variant string
		n       int
	}{{"ring", 4}, {"oneshot", 2}, {"bidirectional", 4}, {"bf16wire", 4}, {"fp32wire", 3}, {"hierarchical", 4}} {
		for _, proto := range []string{"Simple", "LL"} {
			cfg := &ringo.Config{Protocol: proto, BuffSize: 8 * 512, LLBuffSize: 8 * 256, Channels: 2, Variant: v.variant}
			comms := newComms(t, v.n, cfg)
			rng := rand.New(rand.NewPCG(9, 10))
			t.Run(v.variant+"/"+proto, func(t *testing.T) { everyTypeAndOp(t, comms, rng) })
		}
	}
}

type opCase struct {
	name string
	op   func(r int) ringo.Op
	vals []float64 // inputs are drawn from these
	comb func(a []float64) float64
}

func opCases[T ringo.Elem](n int) []opCase {
	signed := toF64(fromF64[T](-1)) == -1
	small := []float64{1, 2}
	if signed {
		small = []float64{-2, -1, 1, 2}
	}
	sum := func(a []float64) float64 {
		s := 0.0
		for _, x := range a {
			s += x
		}
		return s
	}
	isFloat := toF64(fromF64[T](0.5)) == 0.5
	avgVals := []float64{0, 4, 8}
	avg := func(a []float64) float64 { return math.Trunc(sum(a) / float64(n)) }
	if isFloat {
		avgVals = []float64{-4, 0, 4} // × 1/4: sums stay small integers, exact even in fp8
		avg = func(a []float64) float64 { return sum(a) / float64(n) }
	}
	return []opCase{
		{"sum", func(int) ringo.Op { return ringo.OpSum }, small, sum},
		{"prod", func(int) ringo.Op { return ringo.OpProd }, small, func(a []float64) float64 {
			p := 1.0
			for _, x := range a {
				p *= x
			}
			return p
		}},
		{"min", func(int) ringo.Op { return ringo.OpMin }, []float64{1, 3, 5, 7, 100}, func(a []float64) float64 {
			m := a[0]
			for _, x := range a {
				m = math.Min(m, x)
			}
			return m
		}},
		{"max", func(int) ringo.Op { return ringo.OpMax }, []float64{1, 3, 5, 7, 100}, func(a []float64) float64 {
			m := a[0]
			for _, x := range a {
				m = math.Max(m, x)
			}
			return m
		}},
		{"avg", func(int) ringo.Op { return ringo.OpAvg }, avgVals, avg},
		// Each rank multiplies by its own scalar: 1 on even ranks, 2 on odd.
		{"premulsum", func(r int) ringo.Op { return ringo.PreMul(fromF64[T](float64(1 + r%2))) }, small[len(small)/2-1 : len(small)/2+1], nil},
	}
}

// everyTypeAndOp runs everyOp for all 12 datatypes.
func everyTypeAndOp(t *testing.T, comms []*ringo.Comm, rng *rand.Rand) {
	everyOp[int8](t, comms, rng)
	everyOp[uint8](t, comms, rng)
	everyOp[int32](t, comms, rng)
	everyOp[uint32](t, comms, rng)
	everyOp[int64](t, comms, rng)
	everyOp[uint64](t, comms, rng)
	everyOp[ringo.Float16](t, comms, rng)
	everyOp[float32](t, comms, rng)
	everyOp[float64](t, comms, rng)
	everyOp[ringo.BFloat16](t, comms, rng)
	everyOp[ringo.Float8E4M3](t, comms, rng)
	everyOp[ringo.Float8E5M2](t, comms, rng)
}

func everyOp[T ringo.Elem](t *testing.T, comms []*ringo.Comm, rng *rand.Rand) {
	checkP2PColls[T](t, comms)
	n := len(comms)
	dt := ringo.TypeOf[T]()
	for _, oc := range opCases[T](n) {
		for _, coll := range []ringo.Collective{ringo.CollAllReduce, ringo.CollReduceScatter, ringo.CollAllGather, ringo.CollBroadcast, ringo.CollReduce} {
			if !coll.Reduces() && oc.name != "sum" {
				continue
			}
			for _, count := range []int{1, 5, 300, 2049} {
				for _, inPlace := range []bool{false, true} {
					name := fmt.Sprintf("%v/%s/%v/%d/inplace=%v", dt, oc.name, coll, count, inPlace)
					runExact[T](t, name, comms, coll, oc, count, inPlace, rng.IntN(n), rng)
				}
			}
		}
	}
}

// runExact runs one collective and checks every output element bit for bit.
func runExact[T ringo.Elem](t *testing.T, name string, comms []*ringo.Comm, coll ringo.Collective, oc opCase, count int, inPlace bool, root int, rng *rand.Rand) {
	t.Helper()
	n := len(comms)
	inLen, outLen := count, count
	switch coll {
	case ringo.CollReduceScatter:
		inLen *= n
	case ringo.CollAllGather:
		outLen *= n
	}
	vals := make([][]float64, n)
	sends, recvs := make([][]T, n), make([][]T, n)
	for r := range n {
		vals[r] = make([]float64, inLen)
		buf := make([]T, max(inLen, outLen))
		for i := range vals[r] {
			vals[r][i] = oc.vals[rng.IntN(len(oc.vals))]
		}
		switch {
		case !inPlace:
			sends[r], recvs[r] = buf[:inLen], make([]T, outLen)
		case coll == ringo.CollAllGather:
			recvs[r], sends[r] = buf, buf[r*count:(r+1)*count]
		case coll == ringo.CollReduceScatter:
			sends[r], recvs[r] = buf, buf[r*count:(r+1)*count]
		default:
			sends[r], recvs[r] = buf, buf
		}
		for i, v := range vals[r] {
			sends[r][i] = fromF64[T](v)
		}
	}
	noErrors(t, each(comms, func(r int, c *ringo.Comm) error {
		op := oc.op(r)
		switch coll {
		case ringo.CollAllReduce:
			return ringo.AllReduce(bg, c, sends[r], recvs[r], op)
		case ringo.CollReduceScatter:
			return ringo.ReduceScatter(bg, c, sends[r], recvs[r], op)
		case ringo.CollAllGather:
			return ringo.AllGather(bg, c, sends[r], recvs[r])
		case ringo.CollBroadcast:
			return ringo.Broadcast(bg, c, sends[r], recvs[r], root)
		default:
			return ringo.Reduce(bg, c, sends[r], recvs[r], op, root)
		}
	}))
	column := func(i int) []float64 {
		a := make([]float64, n)
		for r := range n {
			a[r] = vals[r][i]
			if oc.name == "premulsum" {
				a[r] *= float64(1 + r%2)
			}
		}
		return a
	}
	comb := oc.comb
	if comb == nil {
		comb = opCases[T](n)[0].comb
	}
	for r := range n {
		if coll == ringo.CollReduce && r != root {
			continue
		}
		for i := range outLen {
			var want float64
			switch coll {
			case ringo.CollAllReduce, ringo.CollReduce:
				want = comb(column(i))
			case ringo.CollReduceScatter:
				want = comb(column(r*count + i))
			case ringo.CollAllGather:
				want = vals[i/count][i%count]
			case ringo.CollBroadcast:
				want = vals[root][i]
			}
			if got := recvs[r][i]; got != fromF64[T](want) {
				t.Fatalf("%s: rank %d element %d = %v (%v), want %v", name, r, i, toF64(got), got, want)
			}
		}
	}
}

// TestPrecisionVariants: with random inputs, every element of a precision
// variant's all-reduce is the sum of one rotation of the ring computed as
// the variant does (its wire type between hops, float32 at each), every
// rank holds the same bits (the bench's check compares each rank's output
// with the rotations' sums, which are rank-independent), and the error
// against the exact sum is what the wire type explains: bf16wire's is
// bfloat16's rounding, far above float32's; fp32wire's is below the plain
// ring's on the same 2-byte type. (TestEveryTypeAndOp checks that every
// other call runs exact under both variants.)
func TestPrecisionVariants(t *testing.T) {
	counts := []int64{1, 7, 1000, 100003}
	run := func(variant string, dt ringo.DataType) []bench.Row {
		t.Helper()
		comms := newComms(t, 4, &ringo.Config{Variant: variant, Ring: []int{2, 0, 3, 1}, Channels: 2, BuffSize: 8 * 4096})
		o := bench.Options{Colls: []bench.Coll{bench.AllReduce}, Types: []ringo.DataType{dt},
			Ops: []reduce.OpKind{reduce.Sum}, Counts: counts, StepFactor: 2, Iters: 1, Check: 2, Error: true}
		rows := make([][]bench.Row, len(comms))
		noErrors(t, each(comms, func(r int, c *ringo.Comm) error {
			var err error
			rows[r], err = bench.RunRank(bg, c, o, nil)
			return err
		}))
		for _, row := range rows[0] {
			for _, m := range []bench.Measure{row.OutOfPlace, row.InPlace} {
				if m.Wrong != 0 || m.RelErr < 0 {
					t.Fatalf("%s %v count %d: %d elements are no rotation's sum (error %g)", variant, dt, row.Count, m.Wrong, m.RelErr)
				}
			}
		}
		return rows[0]
	}
	last := func(rows []bench.Row) float64 { return rows[len(rows)-1].OutOfPlace.RelErr }

	exact32, bf16 := last(run("ring", ringo.TypeFloat32)), last(run("bf16wire", ringo.TypeFloat32))
	// bfloat16 keeps 8 bits: rounding each of 4 partial sums costs up to
	// 2⁻⁹ of it; float32's 24 bits cost 2¹⁶ times less.
	if !(bf16 > 1e3*exact32 && bf16 < 4*0x1p-9) {
		t.Errorf("bf16wire: relative error %g, float32 ring %g", bf16, exact32)
	}
	for _, dt := range []ringo.DataType{ringo.TypeFloat16, ringo.TypeBFloat16} {
		plain, wide := last(run("ring", dt)), last(run("fp32wire", dt))
		if !(wide < 0.8*plain) {
			t.Errorf("fp32wire %v: relative error %g, the plain ring's %g", dt, wide, plain)
		}
	}
}

// TestHierarchical: the hierarchical variant's all-reduce on 6 ranks in
// groups of 2 and of 3 along a shuffled ring, counts that leave a tail for
// the flat ring: every rank holds the same bits, within the rounding bound
// of the exact sum, and not the flat ring's bits everywhere (the sums run in
// another order, so the phases did run). TestEveryTypeAndOp checks every
// collective, type and op exact under it; the bench's -error check (run by
// TestGPUHierarchical) matches each element to the variant's sum order.
func TestHierarchical(t *testing.T) {
	order := []int{5, 1, 3, 0, 2, 4}
	rng := rand.New(rand.NewPCG(11, 12))
	for _, g := range []int{2, 3} {
		hier := newComms(t, 6, &ringo.Config{Variant: "hierarchical", Group: g, Ring: order, Channels: 2})
		flat := newComms(t, 6, &ringo.Config{Ring: order, Channels: 2})
		const count = 100003
		sends := make([][]float32, 6)
		for r := range sends {
			sends[r] = make([]float32, count)
			for i := range sends[r] {
				sends[r][i] = float32(rng.Float64()*2 - 1)
			}
		}
		run := func(comms []*ringo.Comm) [][]float32 {
			recvs := make([][]float32, 6)
			noErrors(t, each(comms, func(r int, c *ringo.Comm) error {
				recvs[r] = make([]float32, count)
				return ringo.AllReduce(bg, c, sends[r], recvs[r], ringo.OpSum)
			}))
			return recvs
		}
		h, f := run(hier), run(flat)
		differ := 0
		for i := range count {
			exact, mag := 0.0, 0.0
			for r := range 6 {
				exact += float64(sends[r][i])
				mag += math.Abs(float64(sends[r][i]))
			}
			if math.Abs(float64(h[0][i])-exact) > 6*0x1p-23*mag {
				t.Fatalf("groups of %d, element %d: %v, exact %v", g, i, h[0][i], exact)
			}
			for r := 1; r < 6; r++ {
				if h[r][i] != h[0][i] {
					t.Fatalf("groups of %d, element %d: rank %d holds %v, rank 0 %v", g, i, r, h[r][i], h[0][i])
				}
			}
			if h[0][i] != f[0][i] {
				differ++
			}
		}
		if differ == 0 {
			t.Errorf("groups of %d: the hierarchical sums equal the flat ring's everywhere", g)
		}
	}
	if _, err := ringo.NewLocal(6, &ringo.Config{Variant: "hierarchical", Group: 4}); err == nil ||
		!strings.Contains(err.Error(), "Group: groups of 4 ranks do not divide 6 ranks") {
		t.Errorf("groups of 4 on 6 ranks: %v", err)
	}
}
