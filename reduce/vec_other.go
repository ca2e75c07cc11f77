//go:build !amd64

package reduce

// sumFloat32 sets d = a + b (vec_amd64.go has the vector form).
func sumFloat32(d, a, b []float32) { sumLoop(d, a, b) }

// sumFloat64 sets d = a + b.
func sumFloat64(d, a, b []float64) { sumLoop(d, a, b) }

// sumBFloat16 sets d = a + b in BFloat16.
func sumBFloat16(d, a, b []BFloat16) { sumBF16(d, a, b) }

// maxFloat32 sets d = maxNum(a, b).
func maxFloat32(d, a, b []float32) { maxFloat32Loop(d, a, b) }

// minFloat32 sets d = minNum(a, b).
func minFloat32(d, a, b []float32) { minFloat32Loop(d, a, b) }

// prodFloat32 sets d = a × b.
func prodFloat32(d, a, b []float32) { prodLoop(d, a, b) }

// prodFloat64 sets d = a × b.
func prodFloat64(d, a, b []float64) { prodLoop(d, a, b) }
