package reduce

import "unsafe"

// Sums and products of float32s and float64s four and two lanes at a time, of
// BFloat16s eight at a time, and float32 maxima and minima four at a time
// (SSE2): the body of the slices in vec_amd64.s, the tail by the scalar
// loop, bit for bit what the scalar loop gives and several times faster
// (BenchmarkReduce's float and double sums and products, bfloat16 sums, float
// max and min).

//go:noescape
func sumF32(d, a, b unsafe.Pointer, n uintptr)

//go:noescape
func sumF64(d, a, b unsafe.Pointer, n uintptr)

//go:noescape
func prodF32(d, a, b unsafe.Pointer, n uintptr)

//go:noescape
func prodF64(d, a, b unsafe.Pointer, n uintptr)

//go:noescape
func sumBF16x8(d, a, b unsafe.Pointer, n uintptr)

//go:noescape
func maxF32(d, a, b unsafe.Pointer, n uintptr)

//go:noescape
func minF32(d, a, b unsafe.Pointer, n uintptr)

// sumFloat32 sets d = a + b.
func sumFloat32(d, a, b []float32) { vectorLoop(d, a, b, 64, sumF32, sumLoop[float32]) }

// sumFloat64 sets d = a + b.
func sumFloat64(d, a, b []float64) { vectorLoop(d, a, b, 64, sumF64, sumLoop[float64]) }

// prodFloat32 sets d = a × b.
func prodFloat32(d, a, b []float32) { vectorLoop(d, a, b, 64, prodF32, prodLoop[float32]) }

// prodFloat64 sets d = a × b.
func prodFloat64(d, a, b []float64) { vectorLoop(d, a, b, 64, prodF64, prodLoop[float64]) }

// sumBFloat16 sets d = a + b in BFloat16.
func sumBFloat16(d, a, b []BFloat16) { vectorLoop(d, a, b, 16, sumBF16x8, sumBF16) }

// maxFloat32 sets d = maxNum(a, b).
func maxFloat32(d, a, b []float32) { vectorLoop(d, a, b, 16, maxF32, maxFloat32Loop) }

// minFloat32 sets d = minNum(a, b).
func minFloat32(d, a, b []float32) { vectorLoop(d, a, b, 16, minF32, minFloat32Loop) }

// vectorLoop sets d = a ⊕ b: the whole blocks of block bytes by vec, the
// rest by scalar.
func vectorLoop[T any](d, a, b []T, block int, vec func(d, a, b unsafe.Pointer, n uintptr), scalar func(d, a, b []T)) {
	a, b = a[:len(d)], b[:len(d)]
	size := int(unsafe.Sizeof(*new(T)))
	body := len(d) / (block / size) * (block / size)
	if body > 0 {
		vec(unsafe.Pointer(&d[0]), unsafe.Pointer(&a[0]), unsafe.Pointer(&b[0]), uintptr(body*size))
	}
	scalar(d[body:], a[body:], b[body:])
}
