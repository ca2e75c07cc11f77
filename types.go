package ringo

import (
	"github.com/ringo-ccl/ringo/reduce"
	"github.com/ringo-ccl/ringo/ring"
)

// DataType is an element type; its values are NCCL's ncclDataType_t.
type DataType = reduce.DataType

// The datatypes, each named after its element type: TypeOf[int8]() is
// TypeInt8, TypeOf[Float16]() is TypeFloat16.
const (
	TypeInt8       = reduce.Int8
	TypeUint8      = reduce.Uint8
	TypeInt32      = reduce.Int32
	TypeUint32     = reduce.Uint32
	TypeInt64      = reduce.Int64
	TypeUint64     = reduce.Uint64
	TypeFloat16    = reduce.Half
	TypeFloat32    = reduce.Float32
	TypeFloat64    = reduce.Float64
	TypeBFloat16   = reduce.BF16
	TypeFloat8E4M3 = reduce.F8E4M3
	TypeFloat8E5M2 = reduce.F8E5M2
)

// Element types for the formats Go lacks, with conversions from and to
// float32 (round to nearest even; the 8-bit formats saturate).
type (
	Float16    = reduce.Float16
	BFloat16   = reduce.BFloat16
	Float8E4M3 = reduce.Float8E4M3
	Float8E5M2 = reduce.Float8E5M2
)

// Elem is the set of element types the typed collectives accept.
type Elem = reduce.Elem

// Op is a reduction operator. The zero value is OpSum.
type Op = reduce.Op

// The operators. PreMulSum ops, which carry a scalar, come from PreMul.
var (
	OpSum  = reduce.OpSum
	OpProd = reduce.OpProd
	OpMax  = reduce.OpMax
	OpMin  = reduce.OpMin
	OpAvg  = reduce.OpAvg
)

// PreMul returns the operator that sums each rank's input multiplied by s
// (NCCL's ncclRedOpCreatePreMulSum); each rank may pass its own s.
func PreMul[T Elem](s T) Op { return reduce.PreMul(s) }

// TypeOf returns the DataType of T.
func TypeOf[T Elem]() DataType { return reduce.TypeOf[T]() }

// Collective names a collective operation, for Call.
type Collective = ring.Collective

// The collectives.
const (
	CollAllReduce     = ring.AllReduce
	CollReduceScatter = ring.ReduceScatter
	CollAllGather     = ring.AllGather
	CollBroadcast     = ring.Broadcast
	CollReduce        = ring.Reduce
)
