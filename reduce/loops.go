package reduce

import "github.com/ringo-ccl/ringo/internal/mem"

// loops are the element loops of one type T. Each takes slices of equal
// length, and its d may be the same memory as an input.
type loops[T Elem] struct {
	sum, prod, max, min func(d, a, b []T)
	mul                 func(d, a []T, s T)    // d = a × s
	mulAdd              func(d, a, b []T, s T) // d = a + b × s, the product rounded first
	div                 func(d []T, n int)     // d = d / n; integer types only
}

var (
	int8Loops   = loops[int8]{sumLoop[int8], prodLoop[int8], maxLoop8[int8], minLoop8[int8], mulLoop[int8], mulAddLoop[int8], divSignedLoop[int8]}
	uint8Loops  = loops[uint8]{sumLoop[uint8], prodLoop[uint8], maxLoop8[uint8], minLoop8[uint8], mulLoop[uint8], mulAddLoop[uint8], divUnsignedLoop[uint8]}
	int32Loops  = loops[int32]{sumLoop[int32], prodLoop[int32], maxLoop[int32], minLoop[int32], mulLoop[int32], mulAddLoop[int32], divSignedLoop[int32]}
	uint32Loops = loops[uint32]{sumLoop[uint32], prodLoop[uint32], maxLoop[uint32], minLoop[uint32], mulLoop[uint32], mulAddLoop[uint32], divUnsignedLoop[uint32]}
	int64Loops  = loops[int64]{sumLoop[int64], prodLoop[int64], maxLoop[int64], minLoop[int64], mulLoop[int64], mulAddLoop[int64], divSignedLoop[int64]}
	uint64Loops = loops[uint64]{sumLoop[uint64], prodLoop[uint64], maxLoop[uint64], minLoop[uint64], mulLoop[uint64], mulAddLoop[uint64], divUnsignedLoop[uint64]}

	float32Loops = loops[float32]{
		sum: sumFloat32, prod: prodFloat32, mul: mulLoop[float32], mulAdd: mulAddLoop[float32],
		max: maxFloat32, min: minFloat32,
	}
	float64Loops = loops[float64]{
		sum: sumFloat64, prod: prodFloat64, mul: mulLoop[float64], mulAdd: mulAddLoop[float64],
		max: func(d, a, b []float64) {
			maxNumLoop[uint64, int64](bits64(d), bits64(a), bits64(b), 0x7ff0000000000000)
		},
		min: func(d, a, b []float64) {
			minNumLoop[uint64, int64](bits64(d), bits64(a), bits64(b), 0x7ff0000000000000)
		},
	}

	halfLoops = loops[Float16]{
		sum: sumHalf, prod: prodHalf, mul: mulHalf, mulAdd: mulAddHalf,
		max: func(d, a, b []Float16) { maxNumLoop[Float16, int32](d, a, b, 0x7c00) },
		min: func(d, a, b []Float16) { minNumLoop[Float16, int32](d, a, b, 0x7c00) },
	}
	bf16Loops = loops[BFloat16]{
		sum: sumBFloat16, prod: prodBF16, mul: mulBF16, mulAdd: mulAddBF16,
		max: func(d, a, b []BFloat16) { maxNumLoop[BFloat16, int32](d, a, b, 0x7f80) },
		min: func(d, a, b []BFloat16) { minNumLoop[BFloat16, int32](d, a, b, 0x7f80) },
	}
	e4m3Loops = loops[Float8E4M3]{
		sum: sumE4M3, prod: prodE4M3, mul: mulE4M3, mulAdd: mulAddE4M3,
		// E4M3 has no infinity: only magnitudes above 448 (0x7e) are NaN.
		max: func(d, a, b []Float8E4M3) { maxNumLoop[Float8E4M3, int32](d, a, b, 0x7e) },
		min: func(d, a, b []Float8E4M3) { minNumLoop[Float8E4M3, int32](d, a, b, 0x7e) },
	}
	e5m2Loops = loops[Float8E5M2]{
		sum: sumE5M2, prod: prodE5M2, mul: mulE5M2, mulAdd: mulAddE5M2,
		max: func(d, a, b []Float8E5M2) { maxNumLoop[Float8E5M2, int32](d, a, b, 0x7c) },
		min: func(d, a, b []Float8E5M2) { minNumLoop[Float8E5M2, int32](d, a, b, 0x7c) },
	}
)

// maxFloat32Loop sets d = maxNum(a, b), an element at a time.
func maxFloat32Loop(d, a, b []float32) {
	maxNumLoop[uint32, int32](bits32(d), bits32(a), bits32(b), 0x7f800000)
}

// minFloat32Loop sets d = minNum(a, b), an element at a time.
func minFloat32Loop(d, a, b []float32) {
	minNumLoop[uint32, int32](bits32(d), bits32(a), bits32(b), 0x7f800000)
}

// bits32 views float32s as their bit patterns.
func bits32(f []float32) []uint32 { return mem.Slice[uint32](mem.Bytes(f)) }

// bits64 views float64s as their bit patterns.
func bits64(f []float64) []uint64 { return mem.Slice[uint64](mem.Bytes(f)) }
