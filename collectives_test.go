package ringo_test

import (
	"fmt"
	"math"
	"math/rand/v2"
	"testing"

	"github.com/ringo-ccl/ringo"
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
// one-shot variant.
func TestEveryTypeAndOp(t *testing.T) {
	for _, v := range []struct {
		variant string
		n       int
	}{{"ring", 4}, {"oneshot", 2}, {"bidirectional", 4}} {
		for _, proto := range []string{"Simple", "LL"} {
			cfg := &ringo.Config{Protocol: proto, BuffSize: 8 * 512, LLBuffSize: 8 * 256, Channels: 2, Variant: v.variant}
			comms := newComms(t, v.n, cfg)
			rng := rand.New(rand.NewPCG(9, 10))
			t.Run(v.variant+"/"+proto, func(t *testing.T) {
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
			})
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

func everyOp[T ringo.Elem](t *testing.T, comms []*ringo.Comm, rng *rand.Rand) {
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
