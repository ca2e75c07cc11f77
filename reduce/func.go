package reduce

import (
	"fmt"
	"math"

	"github.com/ringo-ccl/ringo/internal/mem"
)

// Func is a reduction bound to one datatype, one operator and a rank count,
// working on raw little-endian element bytes, with NCCL's split of every
// operator into a pre-operation on each rank's input, a binary operation ⊕
// and a post-operation on the final result:
//
//   - Sum, Prod, Max, Min: pre and post are the identity; ⊕ is the operator.
//   - PreMulSum(s): pre(x) = x × s, rounded to the datatype; ⊕ is the sum.
//   - Avg on a float type: PreMulSum with s = 1/nranks rounded to the datatype.
//   - Avg on an integer type: ⊕ is the sum and post(x) = x / nranks,
//     truncated toward zero.
//   - Avg of one rank: the identity (x × 1 and x / 1 are x), so a
//     one-rank average moves no data in place — except on the 8-bit
//     floats, whose multiplication saturates (NCCL's x × 1 turns E5M2's
//     infinities into its largest finite value; so does ringo's).
//
// Every slice given to a method holds whole elements of Type(), is aligned
// to the element size, and all slices of one call have the same length. dst
// may be exactly the same memory as an input (in place), but must not
// overlap one partially. The methods panic when these rules are broken: that
// is a bug in the caller.
//
// A Func is immutable: its methods may be called concurrently, do not
// allocate, and do not retain their arguments.
type Func struct {
	t      DataType
	op     Op
	devOp  DeviceOp
	devArg uint64
	pre    func(dst, in []byte)      // dst = pre(in); nil when pre is the identity
	reduce func(dst, acc, in []byte) // dst = acc ⊕ pre(in)
	// combine is reduce for an in that pre already applied to (the
	// reduce of every operator without a pre-operation).
	combine func(dst, acc, in []byte)
	post    func(dst []byte) // dst = post(dst); nil when post is the identity
}

// New returns the reduction of op on elements of type t among nranks ranks.
// The error wraps ErrInvalid when t or op's kind is invalid, nranks is below
// 1, or op is a PreMulSum whose scalar is not of type t.
func New(t DataType, op Op, nranks int) (*Func, error) {
	switch {
	case !t.Valid():
		return nil, fmt.Errorf("%w: reduce: unknown datatype %s", ErrInvalid, t)
	case op.kind >= numOpKinds:
		return nil, fmt.Errorf("%w: reduce: unknown op kind %s", ErrInvalid, op.kind)
	case nranks < 1:
		return nil, fmt.Errorf("%w: reduce: %d ranks, need at least 1", ErrInvalid, nranks)
	case op.kind == PreMulSum && op.scalarType != t:
		return nil, fmt.Errorf("%w: reduce: premulsum scalar of type %s on data of type %s", ErrInvalid, op.scalarType, t)
	}
	f := &Func{t: t, op: op}
	k, s := op.kind, op.scalar
	switch {
	case k == Avg && nranks == 1 && t != F8E4M3 && t != F8E5M2:
		k = Sum // the average of one value is that value
	case k == Avg && t.IsFloat():
		k, s = PreMulSum, avgScalar(t, nranks)
	}
	f.devOp, f.devArg = deviceOp(k, s, nranks)
	switch t {
	case Int8:
		bind(f, &int8Loops, k, int8(s), nranks)
	case Uint8:
		bind(f, &uint8Loops, k, uint8(s), nranks)
	case Int32:
		bind(f, &int32Loops, k, int32(s), nranks)
	case Uint32:
		bind(f, &uint32Loops, k, uint32(s), nranks)
	case Int64:
		bind(f, &int64Loops, k, int64(s), nranks)
	case Uint64:
		bind(f, &uint64Loops, k, s, nranks)
	case Half:
		bind(f, &halfLoops, k, Float16(s), nranks)
	case Float32:
		bind(f, &float32Loops, k, math.Float32frombits(uint32(s)), nranks)
	case Float64:
		bind(f, &float64Loops, k, math.Float64frombits(s), nranks)
	case BF16:
		bind(f, &bf16Loops, k, BFloat16(s), nranks)
	case F8E4M3:
		bind(f, &e4m3Loops, k, Float8E4M3(s), nranks)
	case F8E5M2:
		bind(f, &e5m2Loops, k, Float8E5M2(s), nranks)
	}
	return f, nil
}

// avgScalar returns the bits of 1/nranks rounded once, to nearest even, to
// the float type t. NCCL's hostToDevRedOp converts float(1.0/nranks) instead,
// rounding twice; that gives the other neighbour for Half first at nranks 8283
// (6 values of nranks up to 2^24), for BFloat16 first at 555767 (101 values),
// and never for the 8-bit formats.
func avgScalar(t DataType, nranks int) uint64 {
	r := 1 / float64(nranks)
	switch t {
	case Half:
		return uint64(Float16From64(r))
	case Float32:
		return uint64(math.Float32bits(float32(r)))
	case BF16:
		return uint64(BFloat16From64(r))
	case F8E4M3:
		return uint64(Float8E4M3From64(r))
	case F8E5M2:
		return uint64(Float8E5M2From64(r))
	default: // Float64
		return math.Float64bits(r)
	}
}

// bind sets f's pre, reduce and post to l's loops for the operator kind k with
// scalar s (PreMulSum only). Avg reaches bind only for integer types.
func bind[T Elem](f *Func, l *loops[T], k OpKind, s T, nranks int) {
	switch k {
	case Sum:
		f.reduce = bytes3(l.sum)
	case Prod:
		f.reduce = bytes3(l.prod)
	case Max:
		f.reduce = bytes3(l.max)
	case Min:
		f.reduce = bytes3(l.min)
	case Avg:
		f.reduce = bytes3(l.sum)
		if nranks > 1 {
			f.post = func(dst []byte) { l.div(mem.Slice[T](dst), nranks) }
		}
	case PreMulSum:
		f.pre = func(dst, in []byte) { l.mul(mem.Slice[T](dst), mem.Slice[T](in), s) }
		f.reduce = func(dst, acc, in []byte) {
			l.mulAdd(mem.Slice[T](dst), mem.Slice[T](acc), mem.Slice[T](in), s)
		}
		f.combine = bytes3(l.sum)
	}
	if f.combine == nil {
		f.combine = f.reduce
	}
}

// bytes3 adapts a typed loop to element bytes.
func bytes3[T Elem](loop func(d, a, b []T)) func(dst, acc, in []byte) {
	return func(dst, acc, in []byte) { loop(mem.Slice[T](dst), mem.Slice[T](acc), mem.Slice[T](in)) }
}

// DeviceOp is an operator as ringo's CUDA kernels run it (RINGO_OP_* in
// kernels/src/reduce.cuh): Avg is lowered to PreMulSum on float types and
// to SumPostDiv on integer types, as NCCL's hostToDevRedOp does.
type DeviceOp uint8

// The device operators.
const (
	DevSum DeviceOp = iota
	DevProd
	DevMax
	DevMin
	DevPreMulSum  // argument: the scalar's bits
	DevSumPostDiv // argument: the divisor (the rank count)
)

// deviceOp lowers an operator kind (Avg already lowered on floats) with its
// scalar.
func deviceOp(k OpKind, s uint64, nranks int) (DeviceOp, uint64) {
	switch k {
	case Prod:
		return DevProd, 0
	case Max:
		return DevMax, 0
	case Min:
		return DevMin, 0
	case PreMulSum:
		return DevPreMulSum, s
	case Avg:
		return DevSumPostDiv, uint64(nranks)
	}
	return DevSum, 0
}

// Device returns the operator the device runs for f and its 64-bit
// argument, so that a kernel computes exactly what f does.
func (f *Func) Device() (DeviceOp, uint64) { return f.devOp, f.devArg }

// Type returns the datatype f was bound to.
func (f *Func) Type() DataType { return f.t }

// Op returns the operator f was bound to, as given to New (Avg stays Avg).
func (f *Func) Op() Op { return f.op }

// HasPre reports whether f's pre-operation is not the identity (PreMulSum,
// and Avg on float types), so that Load must run instead of a plain copy.
func (f *Func) HasPre() bool { return f != nil && f.pre != nil }

// Load sets dst = pre(in): the local input as it goes out on a ring's first
// send. A nil f (a collective that does not reduce) copies.
func (f *Func) Load(dst, in []byte) {
	check(dst, in)
	switch {
	case f.HasPre():
		f.pre(dst, in)
	case !mem.Same(dst, in):
		copy(dst, in)
	}
}

// Reduce sets dst = acc ⊕ pre(in), where acc is the partial result arriving
// from the ring and in is the local input.
func (f *Func) Reduce(dst, acc, in []byte) {
	check(dst, acc)
	check(dst, in)
	f.reduce(dst, acc, in)
}

// Combine sets dst = acc ⊕ in for an in that is already pre(x): values
// another rank loaded (Load), as a one-shot collective reads them from
// every rank's slot. Follow the last with Post.
func (f *Func) Combine(dst, acc, in []byte) {
	check(dst, acc)
	check(dst, in)
	f.combine(dst, acc, in)
}

// Post sets dst = post(dst): what ends a chunk's reduction (Avg's division
// on integer types; nothing for the other operators).
func (f *Func) Post(dst []byte) {
	if f.post != nil {
		f.post(dst)
	}
}

// ReduceFinal sets dst = post(acc ⊕ pre(in)): the last reduction of a chunk.
func (f *Func) ReduceFinal(dst, acc, in []byte) {
	f.Reduce(dst, acc, in)
	if f.post != nil {
		f.post(dst)
	}
}

// Final sets dst = post(pre(in)): the whole reduction on a 1-rank
// communicator.
func (f *Func) Final(dst, in []byte) {
	f.Load(dst, in)
	if f.post != nil {
		f.post(dst)
	}
}

// check panics unless src has dst's length and is either the same memory as
// dst or disjoint from it.
func check(dst, src []byte) {
	if len(src) != len(dst) {
		panic(fmt.Sprintf("reduce: slices of %d and %d bytes", len(dst), len(src)))
	}
	if mem.Overlap(dst, src) && !mem.Same(dst, src) {
		panic("reduce: dst partially overlaps an input")
	}
}
