//go:build !amd64

package reduce

// sumFloat32 sets d = a + b (sum_amd64.go has the vector form).
func sumFloat32(d, a, b []float32) { sumLoop(d, a, b) }

// sumFloat64 sets d = a + b.
func sumFloat64(d, a, b []float64) { sumLoop(d, a, b) }

// sumBFloat16 sets d = a + b in BFloat16.
func sumBFloat16(d, a, b []BFloat16) { sumBF16(d, a, b) }
