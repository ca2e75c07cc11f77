package reduce

import (
	"math"
	"math/rand/v2"
	"slices"
	"testing"
	"unsafe"

	"github.com/stretchr/testify/require"
)

// TestVectorLoops: the vector loops (vec_amd64.s where built) — sums of
// float32s, float64s and BFloat16s, products of float32s and float64s,
// maxima and minima of float32s — give
// the scalar loops' bits exactly — NaN payloads and signs too — for every
// length to 200 elements, at every start within a 64-byte block, in place
// (d is a, d is b) and not, over values with NaNs of different payloads
// and signs, infinities, signed zeros, subnormals and the largest finite
// values (whose sums overflow) among them.
func TestVectorLoops(t *testing.T) {
	r := rand.New(rand.NewPCG(25, 26))
	special32 := []float32{
		math.Float32frombits(0x7fc00001), math.Float32frombits(0xffc12345), math.Float32frombits(0x7f800001), // NaNs, one signalling
		float32(math.Inf(1)), float32(math.Inf(-1)), float32(math.Copysign(0, -1)), 0,
		math.Float32frombits(1), math.Float32frombits(0x807fffff), math.MaxFloat32, // subnormals, the largest
	}
	special64 := []float64{
		math.Float64frombits(0x7ff8000000000001), math.Float64frombits(0xfff8000000012345), math.Float64frombits(0x7ff0000000000001),
		math.Inf(1), math.Inf(-1), math.Copysign(0, -1), 0, math.Float64frombits(1), math.Float64frombits(0x800fffffffffffff), math.MaxFloat64,
	}
	gen32 := func(r *rand.Rand) float32 { return float32(r.NormFloat64() * 1e3) }
	pattern32 := func(v float32) uint64 { return uint64(math.Float32bits(v)) }
	for _, c := range []struct {
		name        string
		vec, scalar func(d, a, b []float32)
	}{
		{"float32", sumFloat32, sumLoop[float32]}, {"float32/prod", prodFloat32, prodLoop[float32]},
		{"float32/max", maxFloat32, maxFloat32Loop}, {"float32/min", minFloat32, minFloat32Loop},
	} {
		t.Run(c.name, func(t *testing.T) { checkVector(t, r, c.vec, c.scalar, special32, gen32, pattern32) })
	}
	gen64 := func(r *rand.Rand) float64 { return r.NormFloat64() * 1e3 }
	for _, c := range []struct {
		name        string
		vec, scalar func(d, a, b []float64)
	}{
		{"float64", sumFloat64, sumLoop[float64]}, {"float64/prod", prodFloat64, prodLoop[float64]},
	} {
		t.Run(c.name, func(t *testing.T) { checkVector(t, r, c.vec, c.scalar, special64, gen64, math.Float64bits) })
	}
	t.Run("bfloat16", func(t *testing.T) {
		specialBF16 := []BFloat16{0x7fc1, 0xffc5, 0x7f81, 0x7f80, 0xff80, 0x8000, 0, 0x0001, 0x807f, 0x7f7f, 0xff7f}
		checkVector(t, r, sumBFloat16, sumBF16, specialBF16, func(r *rand.Rand) BFloat16 { return BFloat16From(float32(r.NormFloat64() * 1e3)) },
			func(v BFloat16) uint64 { return uint64(v) })
	})
}

func checkVector[T float32 | float64 | BFloat16](t *testing.T, r *rand.Rand, vec, scalar func(d, a, b []T), special []T, gen func(*rand.Rand) T, bits func(T) uint64) {
	const maxLen, block = 200, 64
	fill := func(n int) []T {
		s := make([]T, n)
		for i := range s {
			if r.IntN(4) == 0 {
				s[i] = special[r.IntN(len(special))]
			} else {
				s[i] = gen(r)
			}
		}
		return s
	}
	var zero T
	per := block / int(unsafe.Sizeof(zero))
	for n := range maxLen + 1 {
		for start := range per {
			a, b := fill(start + n)[start:], fill(start + n)[start:]
			want := make([]T, n)
			scalar(want, a, b)
			for _, aliased := range []string{"distinct", "d is a", "d is b"} {
				a2, b2 := slices.Clone(a), slices.Clone(b)
				d := make([]T, start+n)[start:]
				switch aliased {
				case "d is a":
					d = a2
				case "d is b":
					d = b2
				}
				vec(d, a2, b2)
				for i := range n {
					if bits(d[i]) != bits(want[i]) {
						require.Failf(t, "results differ", "length %d, start %d, %s: element %d = %#x, the scalar loop's %#x (of %v and %v)",
							n, start, aliased, i, bits(d[i]), bits(want[i]), a[i], b[i])
					}
				}
			}
		}
	}
}
