package reduce

import "unsafe"

// Sums of float32s and float64s four and two lanes at a time (SSE2), the
// body of the slices in sum_amd64.s and the tail by sumLoop: bit for bit
// what sumLoop gives, several times faster (BenchmarkReduce/float/sum).

//go:noescape
func sumF32(d, a, b unsafe.Pointer, n uintptr)

//go:noescape
func sumF64(d, a, b unsafe.Pointer, n uintptr)

// sumFloat32 sets d = a + b.
func sumFloat32(d, a, b []float32) { sumVector(d, a, b, sumF32) }

// sumFloat64 sets d = a + b.
func sumFloat64(d, a, b []float64) { sumVector(d, a, b, sumF64) }

// sumVector sets d = a + b, the whole 64-byte blocks by vec.
func sumVector[T float32 | float64](d, a, b []T, vec func(d, a, b unsafe.Pointer, n uintptr)) {
	a, b = a[:len(d)], b[:len(d)]
	per := 64 / int(unsafe.Sizeof(d[0])) // elements a block
	body := len(d) / per * per
	if body > 0 {
		vec(unsafe.Pointer(&d[0]), unsafe.Pointer(&a[0]), unsafe.Pointer(&b[0]), uintptr(body*int(unsafe.Sizeof(d[0]))))
	}
	sumLoop(d[body:], a[body:], b[body:])
}
