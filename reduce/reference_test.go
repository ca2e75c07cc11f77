package reduce

import (
	"encoding/binary"
	"fmt"
	"math"
	"math/rand/v2"
	"testing"

	"github.com/ringo-ccl/ringo/internal/mem"
)

// The reference works one element at a time on bit patterns (zero-extended
// to uint64), from the definitions: integers with masked uint64 arithmetic,
// floats in float64, rounded once to the datatype by the refFormat oracle
// (or Go's float64 to float32 conversion). float64 holds the exact sum and
// product of two values of the small formats and the exact product of two
// float32s; where it rounds a sum (bfloat16, float32), its 53 bits are more
// than 2p+2, so rounding again to the datatype is still correct.

// refFormatOf returns the oracle of a small float type, or nil.
func refFormatOf(dt DataType) *refFormat {
	switch dt {
	case Half:
		return refHalf
	case BF16:
		return refBF16
	case F8E4M3:
		return refE4M3
	case F8E5M2:
		return refE5M2
	}
	return nil
}

// refDecode returns the value of the float pattern x of type dt.
func refDecode(dt DataType, x uint64) float64 {
	switch dt {
	case Float32:
		return float64(math.Float32frombits(uint32(x)))
	case Float64:
		return math.Float64frombits(x)
	}
	return refFormatOf(dt).decode(x)
}

// refRound rounds v once to the float type dt.
func refRound(dt DataType, v float64) uint64 {
	switch dt {
	case Float32:
		return uint64(math.Float32bits(float32(v)))
	case Float64:
		return math.Float64bits(v)
	}
	f := refFormatOf(dt)
	c, ok := f.nearest(v)
	if !ok {
		return f.sign() - 1 // all ones below the sign: a NaN in every format
	}
	return c
}

// refIsNaN reports whether x is a NaN of the float type dt.
func refIsNaN(dt DataType, x uint64) bool {
	return dt.IsFloat() && math.IsNaN(refDecode(dt, x))
}

// refMask has the low dt.Size() bytes set.
func refMask(dt DataType) uint64 {
	if dt.Size() == 8 {
		return math.MaxUint64
	}
	return 1<<(8*dt.Size()) - 1
}

// refSigned returns the integer pattern x of type dt sign-extended.
func refSigned(dt DataType, x uint64) int64 {
	shift := 64 - 8*dt.Size()
	return int64(x<<shift) >> shift
}

// refIsSigned reports whether dt is a signed integer type.
func refIsSigned(dt DataType) bool { return dt == Int8 || dt == Int32 || dt == Int64 }

// refSum, refProd and refMul (x × s rounded) are the arithmetic.
func refSum(dt DataType, a, b uint64) uint64 {
	if !dt.IsFloat() {
		return (a + b) & refMask(dt)
	}
	return refRound(dt, refDecode(dt, a)+refDecode(dt, b))
}

func refProd(dt DataType, a, b uint64) uint64 {
	if !dt.IsFloat() {
		return a * b & refMask(dt)
	}
	return refRound(dt, refDecode(dt, a)*refDecode(dt, b))
}

// refMinMax returns the bits of max(a, b), or min when isMax is false:
// maxNum/minNum for floats.
func refMinMax(dt DataType, a, b uint64, isMax bool) uint64 {
	var less bool // a < b
	switch {
	case !dt.IsFloat() && refIsSigned(dt):
		less = refSigned(dt, a) < refSigned(dt, b)
	case !dt.IsFloat():
		less = a < b
	default:
		x, y := refDecode(dt, a), refDecode(dt, b)
		switch {
		case math.IsNaN(x):
			return b
		case math.IsNaN(y):
			return a
		case x == y && x == 0: // -0 < +0
			less = math.Signbit(x) && !math.Signbit(y)
		default:
			less = x < y
		}
	}
	if less == isMax {
		return b
	}
	return a
}

// refDiv is integer Avg's post: x / n, truncated.
func refDiv(dt DataType, x uint64, n int) uint64 {
	if refIsSigned(dt) {
		return uint64(refSigned(dt, x)/int64(n)) & refMask(dt)
	}
	return x / uint64(n)
}

// refOps returns pre, ⊕ and post for op on dt among n ranks, from the
// definitions in NCCL's hostToDevRedOp.
func refOps(dt DataType, op Op, n int) (pre func(uint64) uint64, combine func(a, b uint64) uint64, post func(uint64) uint64) {
	id := func(x uint64) uint64 { return x }
	sum := func(a, b uint64) uint64 { return refSum(dt, a, b) }
	premul := func(s uint64) func(uint64) uint64 { return func(x uint64) uint64 { return refProd(dt, x, s) } }
	switch op.Kind() {
	case Sum:
		return id, sum, id
	case Prod:
		return id, func(a, b uint64) uint64 { return refProd(dt, a, b) }, id
	case Max:
		return id, func(a, b uint64) uint64 { return refMinMax(dt, a, b, true) }, id
	case Min:
		return id, func(a, b uint64) uint64 { return refMinMax(dt, a, b, false) }, id
	case Avg:
		if n == 1 && dt != F8E4M3 && dt != F8E5M2 { // x × 1 is x but where fp8 saturates
			return id, sum, id
		}
		if dt.IsFloat() {
			return premul(refRound(dt, 1/float64(n))), sum, id
		}
		return id, sum, func(x uint64) uint64 { return refDiv(dt, x, n) }
	}
	return premul(op.scalar), sum, id
}

// getElem returns element i of b, of size bytes, zero-extended.
func getElem(b []byte, size, i int) uint64 {
	switch size {
	case 1:
		return uint64(b[i])
	case 2:
		return uint64(binary.LittleEndian.Uint16(b[2*i:]))
	case 4:
		return uint64(binary.LittleEndian.Uint32(b[4*i:]))
	}
	return binary.LittleEndian.Uint64(b[8*i:])
}

// putElem sets element i of b, of size bytes, to the low bytes of x.
func putElem(b []byte, size, i int, x uint64) {
	switch size {
	case 1:
		b[i] = uint8(x)
	case 2:
		binary.LittleEndian.PutUint16(b[2*i:], uint16(x))
	case 4:
		binary.LittleEndian.PutUint32(b[4*i:], uint32(x))
	default:
		binary.LittleEndian.PutUint64(b[8*i:], x)
	}
}

// randElem returns a random element of dt: any bit pattern when raw is true
// (NaNs, infinities and subnormals included for floats), otherwise a
// moderate value, or a small integer for an integer type.
func randElem(r *rand.Rand, dt DataType, raw bool) uint64 {
	if raw || !dt.IsFloat() && r.IntN(2) == 0 {
		return r.Uint64() & refMask(dt)
	}
	if !dt.IsFloat() {
		return uint64(r.IntN(21)-10) & refMask(dt)
	}
	v := r.NormFloat64() * math.Ldexp(1, r.IntN(9)-4)
	if r.IntN(4) == 0 {
		v = math.Round(v * 4)
	}
	return refRound(dt, v)
}

// randBuf returns n random elements of dt (see randElem) in 8-aligned memory.
func randBuf(r *rand.Rand, dt DataType, n int, raw bool) []byte {
	b := mem.Alloc(n*dt.Size(), 8)
	for i := range n {
		putElem(b, dt.Size(), i, randElem(r, dt, raw))
	}
	return b
}

// sameBits compares element bits, any NaN equal to any NaN.
func sameBits(dt DataType, got, want uint64) bool {
	return got == want || refIsNaN(dt, got) && refIsNaN(dt, want)
}

// The aliasings of dst that a call may use.
const (
	distinct = iota
	dstIsAcc // dst is the same memory as acc (Reduce and ReduceFinal only)
	dstIsIn  // dst is the same memory as in
)

// TestReduceReference compares every method with the reference for every
// datatype, operator and rank count, on random data, random lengths and every
// allowed aliasing.
func TestReduceReference(t *testing.T) {
	r := rand.New(rand.NewPCG(7, 8))
	lengths := []int{0, 1, 2, 3, 7, 16, 33, 255}
	if !testing.Short() {
		lengths = append(lengths, 1000+r.IntN(1000))
	}
	for dt := range NumTypes {
		for kind := range numOpKinds {
			for _, nranks := range []int{1, 2, 3, 7} {
				for _, raw := range []bool{false, true} {
					name := fmt.Sprintf("%v/%v/n%d/raw=%v", dt, kind, nranks, raw)
					t.Run(name, func(t *testing.T) {
						op := randOp(t, dt, kind, r, raw)
						f, err := New(dt, op, nranks)
						if err != nil {
							t.Fatal(err)
						}
						for _, n := range lengths {
							checkMethods(t, r, f, nranks, n, raw)
						}
					})
				}
			}
		}
	}
}

// randOp returns the op of kind, with a random scalar of dt for PreMulSum.
func randOp(t testing.TB, dt DataType, kind OpKind, r *rand.Rand, raw bool) Op {
	if kind == PreMulSum {
		op, err := PreMulBits(dt, randElem(r, dt, raw))
		if err != nil {
			t.Fatal(err)
		}
		return op
	}
	op, err := OpOf(kind)
	if err != nil {
		t.Fatal(err)
	}
	return op
}

// checkMethods runs Load, Reduce, ReduceFinal and Final of f on n random
// elements, with each aliasing, against the reference.
func checkMethods(t *testing.T, r *rand.Rand, f *Func, nranks, n int, raw bool) {
	t.Helper()
	dt, size := f.Type(), f.Type().Size()
	pre, combine, post := refOps(dt, f.Op(), nranks)
	methods := []struct {
		name   string
		binary bool
		call   func(dst, acc, in []byte)
		ref    func(acc, in uint64) uint64
	}{
		{"Load", false, func(dst, _, in []byte) { f.Load(dst, in) }, func(_, in uint64) uint64 { return pre(in) }},
		{"Final", false, func(dst, _, in []byte) { f.Final(dst, in) }, func(_, in uint64) uint64 { return post(pre(in)) }},
		{"Reduce", true, f.Reduce, func(acc, in uint64) uint64 { return combine(acc, pre(in)) }},
		{"ReduceFinal", true, f.ReduceFinal, func(acc, in uint64) uint64 { return post(combine(acc, pre(in))) }},
	}
	for _, m := range methods {
		for alias := range 3 {
			if !m.binary && alias == dstIsAcc {
				continue // unary methods have no acc
			}
			acc, in := randBuf(r, dt, n, raw), randBuf(r, dt, n, raw)
			acc0, in0 := make([]uint64, n), make([]uint64, n)
			want := make([]uint64, n)
			for i := range n {
				acc0[i], in0[i] = getElem(acc, size, i), getElem(in, size, i)
				want[i] = m.ref(acc0[i], in0[i])
			}
			dst := mem.Alloc(n*size, 8)
			switch alias {
			case dstIsAcc:
				dst = acc
			case dstIsIn:
				dst = in
			}
			m.call(dst, acc, in)
			for i := range n {
				if got := getElem(dst, size, i); !sameBits(dt, got, want[i]) {
					t.Fatalf("%s %v nranks=%d alias=%d, element %d of %d: acc %#x, in %#x: got %#x, want %#x",
						m.name, f.Op(), nranks, alias, i, n, acc0[i], in0[i], got, want[i])
				}
			}
		}
	}
}
