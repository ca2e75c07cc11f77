package reduce

import (
	"errors"
	"math"
	"strings"
	"sync"
	"testing"

	"github.com/ringo-ccl/ringo/internal/mem"
)

func TestNewValidation(t *testing.T) {
	tests := []struct {
		name   string
		t      DataType
		op     Op
		nranks int
		want   []string // substrings of the error
	}{
		{"bad type", NumTypes, OpSum, 2, []string{"datatype", "DataType(12)"}},
		{"bad kind", Float32, Op{kind: 9}, 2, []string{"op kind", "OpKind(9)"}},
		{"zero ranks", Float32, OpSum, 0, []string{"0 ranks"}},
		{"negative ranks", Int8, OpAvg, -3, []string{"-3 ranks"}},
		{"premul type", Half, PreMul(float32(2)), 2, []string{"premulsum", "float", "half"}},
		{"premul bf16 on half", Half, PreMul(BFloat16From(2)), 2, []string{"bfloat16", "half"}},
	}
	for _, tt := range tests {
		f, err := New(tt.t, tt.op, tt.nranks)
		if f != nil || !errors.Is(err, ErrInvalid) {
			t.Errorf("%s: New = %v, %v; want nil and an ErrInvalid", tt.name, f, err)
			continue
		}
		for _, w := range tt.want {
			if !strings.Contains(err.Error(), w) {
				t.Errorf("%s: error %q does not mention %q", tt.name, err, w)
			}
		}
	}
	f, err := New(Half, PreMul(Float16From(2)), 1)
	if err != nil || f.Type() != Half || f.Op() != PreMul(Float16From(2)) || !f.HasPre() {
		t.Errorf("New(half, premul, 1) = %v, %v", f, err)
	}
}

func TestHasPre(t *testing.T) {
	for dt := range NumTypes {
		for _, op := range []Op{OpSum, OpProd, OpMax, OpMin, OpAvg} {
			f, err := New(dt, op, 4)
			if err != nil {
				t.Fatal(err)
			}
			want := op == OpAvg && dt.IsFloat()
			if f.HasPre() != want {
				t.Errorf("%v %v: HasPre() = %v, want %v", dt, op, f.HasPre(), want)
			}
			if f.Op() != op {
				t.Errorf("%v %v: Op() = %v", dt, op, f.Op())
			}
		}
	}
}

// TestAvgScalar checks the Avg scalar of every float type against the
// oracle's rounding of the float64 1/nranks. At nranks 8283, NCCL's
// __float2half(float(1.0/nranks)) rounds twice and gets the other neighbour.
func TestAvgScalar(t *testing.T) {
	for _, dt := range []DataType{Half, Float32, Float64, BF16, F8E4M3, F8E5M2} {
		for n := 1; n <= 10000; n++ {
			if got, want := avgScalar(dt, n), refRound(dt, 1/float64(n)); got != want {
				t.Fatalf("%v: avgScalar(%d) = %#x, want %#x", dt, n, got, want)
			}
		}
	}
	if got, twice := Float16From64(1.0/8283), Float16From(float32(1.0/8283)); got == twice {
		t.Errorf("1/8283 rounds to %#x either way; this test's premise is wrong", got)
	}
}

// TestExactSums checks sums whose results are representable, hence exact in
// any correct implementation: small integers in Float16, values in -2..2 in
// Float8E4M3.
func TestExactSums(t *testing.T) {
	const n = 64
	sum, err := New(Half, OpSum, 8)
	if err != nil {
		t.Fatal(err)
	}
	acc, in := make([]Float16, n), make([]Float16, n)
	want := make([]int, n)
	for i := range n {
		acc[i], in[i] = Float16From(float32(i-32)), Float16From(float32(i*37%101-50))
		want[i] = i - 32 + i*37%101 - 50
	}
	sum.Reduce(mem.Bytes(acc), mem.Bytes(acc), mem.Bytes(in))
	for i := range n {
		if got := acc[i].Float32(); got != float32(want[i]) {
			t.Errorf("half: %d + %d = %v", i-32, i*37%101-50, got)
		}
	}

	sum8, err := New(F8E4M3, OpSum, 2)
	if err != nil {
		t.Fatal(err)
	}
	var a8, b8, d8 []Float8E4M3
	for x := -2; x <= 2; x++ {
		for y := -2; y <= 2; y++ {
			a8, b8 = append(a8, Float8E4M3From(float32(x))), append(b8, Float8E4M3From(float32(y)))
		}
	}
	d8 = make([]Float8E4M3, len(a8))
	sum8.Reduce(mem.Bytes(d8), mem.Bytes(a8), mem.Bytes(b8))
	for i := range d8 {
		if got, want := d8[i].Float32(), a8[i].Float32()+b8[i].Float32(); got != want {
			t.Errorf("f8e4m3: %v + %v = %v", a8[i].Float32(), b8[i].Float32(), got)
		}
	}
}

// TestMinMaxSpecials checks maxNum/minNum on NaNs and signed zeros for every
// float type, with the operands in both orders.
func TestMinMaxSpecials(t *testing.T) {
	nan, inf, negZero := math.NaN(), math.Inf(1), math.Copysign(0, -1)
	tests := []struct {
		a, b, max, min float64
	}{
		{nan, 1, 1, 1},
		{nan, -inf, -inf, -inf},
		{nan, inf, inf, inf},
		{nan, nan, nan, nan},
		{negZero, 0, 0, negZero},
		{negZero, negZero, negZero, negZero},
		{-1, 2, 2, -1},
		{-inf, inf, inf, -inf},
	}
	for _, dt := range []DataType{Half, Float32, Float64, BF16, F8E4M3, F8E5M2} {
		enc := func(v float64) uint64 {
			if dt == Float64 {
				return math.Float64bits(v)
			}
			return refRound(dt, v) // ±Inf saturates in the 8-bit formats
		}
		for _, tt := range tests {
			for _, swap := range []bool{false, true} {
				a, b := tt.a, tt.b
				if swap {
					a, b = b, a
				}
				for _, c := range []struct {
					op   Op
					want float64
				}{{OpMax, tt.max}, {OpMin, tt.min}} {
					f, err := New(dt, c.op, 2)
					if err != nil {
						t.Fatal(err)
					}
					size := dt.Size()
					acc, in, dst := mem.Alloc(size, 8), mem.Alloc(size, 8), mem.Alloc(size, 8)
					putElem(acc, size, 0, enc(a))
					putElem(in, size, 0, enc(b))
					f.Reduce(dst, acc, in)
					if got, want := getElem(dst, size, 0), enc(c.want); !sameBits(dt, got, want) {
						t.Errorf("%v %v(%v, %v) = %#x, want %#x", dt, c.op, a, b, got, want)
					}
				}
			}
		}
	}
}

func TestContractPanics(t *testing.T) {
	f, err := New(Float32, OpSum, 2)
	if err != nil {
		t.Fatal(err)
	}
	buf := mem.Alloc(64, 8)
	tests := []struct {
		name string
		call func()
	}{
		{"lengths", func() { f.Reduce(buf[:16], buf[16:32], buf[32:44]) }},
		{"load lengths", func() { f.Load(buf[:16], buf[16:20]) }},
		{"partial overlap", func() { f.Reduce(buf[:16], buf[4:20], buf[32:48]) }},
		{"load partial overlap", func() { f.Load(buf[8:24], buf[:16]) }},
		{"not whole elements", func() { f.Reduce(buf[:6], buf[16:22], buf[32:38]) }},
		{"misaligned", func() { f.Reduce(buf[2:10], buf[16:24], buf[32:40]) }},
	}
	for _, tt := range tests {
		func() {
			defer func() {
				if recover() == nil {
					t.Errorf("%s: no panic", tt.name)
				}
			}()
			tt.call()
		}()
	}
	// In place is allowed.
	f.Reduce(buf[:16], buf[:16], buf[16:32])
	f.Reduce(buf[:16], buf[16:32], buf[:16])
	f.Load(buf[:16], buf[:16])
}

// TestNoAllocs checks that the methods allocate nothing, for every type and
// operator.
func TestNoAllocs(t *testing.T) {
	for dt := range NumTypes {
		for _, op := range []Op{OpSum, OpProd, OpMax, OpMin, OpAvg} {
			f, err := New(dt, op, 3)
			if err != nil {
				t.Fatal(err)
			}
			a, b, d := mem.Alloc(1024, 8), mem.Alloc(1024, 8), mem.Alloc(1024, 8)
			allocs := testing.AllocsPerRun(10, func() {
				f.Load(d, a)
				f.Reduce(d, a, b)
				f.ReduceFinal(d, d, b)
				f.Final(d, a)
			})
			if allocs != 0 {
				t.Errorf("%v %v: %v allocations per run", dt, op, allocs)
			}
		}
	}
}

// TestConcurrentUse runs one Func from several goroutines at once, for the
// race detector, and checks that each got its own result.
func TestConcurrentUse(t *testing.T) {
	f, err := New(Int32, PreMul(int32(3)), 2)
	if err != nil {
		t.Fatal(err)
	}
	var wg sync.WaitGroup
	for g := range 8 {
		wg.Go(func() {
			acc, in := make([]int32, 1000), make([]int32, 1000)
			for i := range acc {
				acc[i], in[i] = int32(g), int32(i)
			}
			for range 100 {
				f.Reduce(mem.Bytes(acc), mem.Bytes(acc), mem.Bytes(in))
			}
			for i, v := range acc {
				if want := int32(g + 100*3*i); v != want {
					t.Errorf("goroutine %d element %d = %d, want %d", g, i, v, want)
					return
				}
			}
		})
	}
	wg.Wait()
}

func TestDeviceLowering(t *testing.T) {
	cases := []struct {
		t    DataType
		op   Op
		n    int
		want DeviceOp
		arg  uint64
	}{
		{Float32, OpSum, 4, DevSum, 0},
		{Int8, OpProd, 4, DevProd, 0},
		{Half, OpMax, 4, DevMax, 0},
		{Uint64, OpMin, 4, DevMin, 0},
		{Float32, OpAvg, 4, DevPreMulSum, uint64(math.Float32bits(0.25))},
		{Float64, OpAvg, 8, DevPreMulSum, math.Float64bits(0.125)},
		{Int32, OpAvg, 3, DevSumPostDiv, 3},
		{Float32, PreMul(float32(2.5)), 4, DevPreMulSum, uint64(math.Float32bits(2.5))},
		{Half, PreMul(Float16From(3)), 4, DevPreMulSum, uint64(Float16From(3))},
	}
	for _, c := range cases {
		f, err := New(c.t, c.op, c.n)
		if err != nil {
			t.Fatal(err)
		}
		if op, arg := f.Device(); op != c.want || arg != c.arg {
			t.Errorf("%v %v n=%d: device op %d arg %#x, want %d %#x", c.t, c.op, c.n, op, arg, c.want, c.arg)
		}
	}
}
