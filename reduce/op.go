package reduce

import (
	"fmt"
	"math"
	"strconv"
	"strings"
)

// OpKind is the kind of a reduction operator. The first five values are
// NCCL's ncclRedOp_t values.
type OpKind uint8

// The operator kinds.
const (
	Sum       OpKind = iota // sum
	Prod                    // product
	Max                     // maximum (maxNum on floats)
	Min                     // minimum (minNum on floats)
	Avg                     // sum divided by the number of ranks
	PreMulSum               // sum of each input multiplied by a scalar
	numOpKinds
)

var opNames = [numOpKinds]string{"sum", "prod", "max", "min", "avg", "premulsum"}

// String returns the lower-case name of k ("sum", ..., "premulsum"), or
// "OpKind(N)" when k is not a kind.
func (k OpKind) String() string {
	if k >= numOpKinds {
		return "OpKind(" + strconv.Itoa(int(k)) + ")"
	}
	return opNames[k]
}

// Op is a reduction operator: a kind and, for PreMulSum, a scalar of one
// datatype. The zero value is Sum. Ops are comparable with ==: two PreMulSum
// ops are equal when their scalars have the same type and bits.
type Op struct {
	kind       OpKind
	scalarType DataType // PreMulSum only
	scalar     uint64   // PreMulSum only: the scalar's little-endian bits, zero-extended
}

// The operators without a scalar. They are variables only because Go has no
// struct constants: never assign to them.
var (
	OpSum  = Op{kind: Sum}
	OpProd = Op{kind: Prod}
	OpMax  = Op{kind: Max}
	OpMin  = Op{kind: Min}
	OpAvg  = Op{kind: Avg}
)

// Kind returns o's kind.
func (o Op) Kind() OpKind { return o.kind }

// String returns o's kind name, with the scalar's type and value for
// PreMulSum: "premulsum(float 0.5)".
func (o Op) String() string {
	if o.kind != PreMulSum {
		return o.kind.String()
	}
	return "premulsum(" + o.scalarType.String() + " " + o.scalarString() + ")"
}

// scalarString formats o's scalar in decimal.
func (o Op) scalarString() string {
	b := o.scalar
	switch o.scalarType {
	case Int8:
		return strconv.FormatInt(int64(int8(b)), 10)
	case Int32:
		return strconv.FormatInt(int64(int32(b)), 10)
	case Int64:
		return strconv.FormatInt(int64(b), 10)
	case Uint8, Uint32, Uint64:
		return strconv.FormatUint(b, 10)
	case Float64:
		return strconv.FormatFloat(math.Float64frombits(b), 'g', -1, 64)
	default:
		return strconv.FormatFloat(float64(o.scalar32()), 'g', -1, 32)
	}
}

// scalar32 returns the scalar of a PreMulSum on a float type other than
// Float64, widened to float32 (exactly).
func (o Op) scalar32() float32 {
	switch o.scalarType {
	case Half:
		return Float16(o.scalar).Float32()
	case BF16:
		return BFloat16(o.scalar).Float32()
	case F8E4M3:
		return Float8E4M3(o.scalar).Float32()
	case F8E5M2:
		return Float8E5M2(o.scalar).Float32()
	default:
		return math.Float32frombits(uint32(o.scalar))
	}
}

// OpOf returns the operator of kind k, for Sum, Prod, Max, Min and Avg. For
// PreMulSum, which needs a scalar (use PreMul or PreMulBits), and for an
// invalid kind, the error wraps ErrInvalid.
func OpOf(k OpKind) (Op, error) {
	switch {
	case k == PreMulSum:
		return Op{}, fmt.Errorf("%w: op premulsum needs a scalar: use PreMul or PreMulBits", ErrInvalid)
	case k >= numOpKinds:
		return Op{}, fmt.Errorf("%w: unknown op kind %d", ErrInvalid, uint8(k))
	}
	return Op{kind: k}, nil
}

// PreMul returns the PreMulSum operator with scalar s, of T's datatype.
func PreMul[T Elem](s T) Op {
	var bits uint64
	switch v := any(s).(type) {
	case int8:
		bits = uint64(uint8(v))
	case uint8:
		bits = uint64(v)
	case int32:
		bits = uint64(uint32(v))
	case uint32:
		bits = uint64(v)
	case int64:
		bits = uint64(v)
	case uint64:
		bits = v
	case Float16:
		bits = uint64(v)
	case float32:
		bits = uint64(math.Float32bits(v))
	case float64:
		bits = math.Float64bits(v)
	case BFloat16:
		bits = uint64(v)
	case Float8E4M3:
		bits = uint64(v)
	case Float8E5M2:
		bits = uint64(v)
	}
	return Op{kind: PreMulSum, scalarType: TypeOf[T](), scalar: bits}
}

// PreMulBits returns the PreMulSum operator whose scalar has datatype t and
// the little-endian bit pattern in the low t.Size() bytes of bits, as the C ABI
// receives it behind a void*; higher bytes are ignored. The error, for an
// invalid t, wraps ErrInvalid.
func PreMulBits(t DataType, bits uint64) (Op, error) {
	if !t.Valid() {
		return Op{}, fmt.Errorf("%w: premulsum scalar of unknown datatype %s", ErrInvalid, t)
	}
	if t.Size() < 8 {
		bits &= 1<<(8*t.Size()) - 1
	}
	return Op{kind: PreMulSum, scalarType: t, scalar: bits}, nil
}

// ParseOp returns the operator named s, case-insensitively: sum, prod, max,
// min or avg. nccl-tests' mulsum (PreMulSum) is refused because it needs a
// scalar. The error wraps ErrInvalid.
func ParseOp(s string) (Op, error) {
	l := strings.ToLower(s)
	for k := range PreMulSum {
		if opNames[k] == l {
			return Op{kind: k}, nil
		}
	}
	if l == "mulsum" || l == opNames[PreMulSum] {
		return Op{}, fmt.Errorf("%w: op %q needs a scalar: build it with PreMul or PreMulBits", ErrInvalid, s)
	}
	return Op{}, fmt.Errorf("%w: unknown op %q (valid: sum, prod, max, min, avg)", ErrInvalid, s)
}
