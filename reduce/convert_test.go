package reduce

import (
	"math"
	"math/rand/v2"
	"testing"
)

// codec is one small format as the package implements it, with the tests'
// reference for it.
type codec struct {
	ref    *refFormat
	from   func(float32) uint64
	from64 func(float64) uint64
	to     func(uint64) float32
}

var codecs = []codec{
	{refHalf, func(f float32) uint64 { return uint64(Float16From(f)) }, func(f float64) uint64 { return uint64(Float16From64(f)) }, func(c uint64) float32 { return Float16(c).Float32() }},
	{refBF16, func(f float32) uint64 { return uint64(BFloat16From(f)) }, func(f float64) uint64 { return uint64(BFloat16From64(f)) }, func(c uint64) float32 { return BFloat16(c).Float32() }},
	{refE4M3, func(f float32) uint64 { return uint64(Float8E4M3From(f)) }, func(f float64) uint64 { return uint64(Float8E4M3From64(f)) }, func(c uint64) float32 { return Float8E4M3(c).Float32() }},
	{refE5M2, func(f float32) uint64 { return uint64(Float8E5M2From(f)) }, func(f float64) uint64 { return uint64(Float8E5M2From64(f)) }, func(c uint64) float32 { return Float8E5M2(c).Float32() }},
}

// TestDecodeExhaustive checks Float32 on every pattern against the reference
// decoder, and that encoding the result gives the pattern back: a NaN may
// come back as another NaN of its sign, and E5M2's ±Inf saturates to ±57344.
func TestDecodeExhaustive(t *testing.T) {
	for _, c := range codecs {
		for code := range uint64(1) << c.ref.bits() {
			want := c.ref.decode(code)
			got := c.to(code)
			if math.IsNaN(want) {
				if !math.IsNaN(float64(got)) {
					t.Errorf("%s %#x decodes to %v, want NaN", c.ref.name, code, got)
				}
				if back := c.from(got); !c.ref.isNaN(back) || back&c.ref.sign() != code&c.ref.sign() {
					t.Errorf("%s NaN %#x round-trips to %#x", c.ref.name, code, back)
				}
				continue
			}
			if float64(got) != want || math.Signbit(float64(got)) != math.Signbit(want) {
				t.Errorf("%s %#x decodes to %v, want %v", c.ref.name, code, got, want)
			}
			back := code
			if math.IsInf(want, 0) && c.ref.saturate {
				back = code&c.ref.sign() | c.ref.maxCode() // E5M2's ±Inf saturates
			}
			if got := c.from(got); got != back {
				t.Errorf("%s %#x round-trips to %#x, want %#x", c.ref.name, code, got, back)
			}
			if got := c.from64(float64(got)); got != back {
				t.Errorf("%s %#x round-trips through From64 to %#x, want %#x", c.ref.name, code, got, back)
			}
		}
	}
}

// TestConvertCases checks hand-derived patterns: ties to even, overflow,
// saturation, infinities, NaNs, subnormals and signed zeros.
func TestConvertCases(t *testing.T) {
	nan := float32(math.NaN())
	negNaN := math.Float32frombits(0xffc00000)
	sNaN := math.Float32frombits(0x7f800001) // signaling, payload only in the low bit
	inf := float32(math.Inf(1))
	tests := []struct {
		c    codec
		in   float32
		want uint64
	}{
		// Float16: 1 = 2^0 is exponent 15, 0 01111 0000000000 = 0x3c00.
		{codecs[0], 1, 0x3c00},
		{codecs[0], float32(math.Copysign(0, -1)), 0x8000},
		// 1+2^-11 is halfway between 1 (0x3c00, even) and 1+2^-10 (0x3c01).
		{codecs[0], 1 + 0x1p-11, 0x3c00},
		// 1+3×2^-11 is halfway between 0x3c01 (odd) and 0x3c02 (even).
		{codecs[0], 1 + 3*0x1p-11, 0x3c02},
		{codecs[0], 1 + 0x1p-11 + 0x1p-23, 0x3c01}, // just past the tie
		// 65504 = 2^15 × (2 - 2^-10) is the largest finite, 0 11110 1111111111.
		{codecs[0], 65504, 0x7bff},
		{codecs[0], 65519.996, 0x7bff},
		// 65520 is halfway between 65504 (odd) and 65536, the would-be
		// 0x7c00 (even): it rounds to Inf.
		{codecs[0], 65520, 0x7c00},
		{codecs[0], 1e10, 0x7c00},
		{codecs[0], -1e10, 0xfc00},
		{codecs[0], inf, 0x7c00},
		{codecs[0], -inf, 0xfc00},
		{codecs[0], nan, 0x7e00},
		{codecs[0], negNaN, 0xfe00},
		{codecs[0], sNaN, 0x7e00},
		// Subnormals are multiples of 2^-24: 2^-25 ties between 0 (even) and
		// 0x0001; 3×2^-25 ties between 0x0001 and 0x0002 (even).
		{codecs[0], 0x1p-24, 0x0001},
		{codecs[0], 0x1p-25, 0x0000},
		{codecs[0], -0x1p-25, 0x8000},
		{codecs[0], 0x1p-25 + 0x1p-40, 0x0001},
		{codecs[0], 3 * 0x1p-25, 0x0002},
		{codecs[0], 0x1p-14, 0x0400},             // smallest normal
		{codecs[0], 0x1p-14 - 0x1p-25, 0x0400},   // ties between 0x03ff and 0x0400
		{codecs[0], 0x1p-14 - 3*0x1p-25, 0x03fe}, // ties between 0x03fe and 0x03ff
		{codecs[0], 0x1p-100, 0x0000},

		// BFloat16 is the top half of a float32: 1 = 0x3f80 0000.
		{codecs[1], 1, 0x3f80},
		{codecs[1], 1 + 0x1p-8, 0x3f80},   // tie, 0x3f80 even
		{codecs[1], 1 + 3*0x1p-8, 0x3f82}, // tie between 0x3f81 and 0x3f82
		{codecs[1], math.Float32frombits(0x7f7f7fff), 0x7f7f},
		// 0x7f7f8000 ties between 0x7f7f (odd) and 0x7f80 (Inf).
		{codecs[1], math.Float32frombits(0x7f7f8000), 0x7f80},
		{codecs[1], math.MaxFloat32, 0x7f80},
		{codecs[1], -math.MaxFloat32, 0xff80},
		{codecs[1], inf, 0x7f80},
		{codecs[1], nan, 0x7fc0},
		{codecs[1], negNaN, 0xffc0},
		{codecs[1], sNaN, 0x7fc0}, // rounding 0x7f800001 naively would give Inf
		{codecs[1], math.Float32frombits(0xff800001), 0xffc0},
		{codecs[1], math.Float32frombits(0x00010000), 0x0001}, // subnormal
		{codecs[1], math.Float32frombits(0x00008000), 0x0000}, // tie with 0
		{codecs[1], math.Float32frombits(0x00018000), 0x0002}, // tie between 1 and 2
		{codecs[1], math.Float32frombits(0x80008001), 0x8001},

		// Float8E4M3: 1 is exponent 7, 0 0111 000 = 0x38.
		{codecs[2], 1, 0x38},
		{codecs[2], 1.0625, 0x38}, // 1+2^-4 ties between 1 and 1.125
		{codecs[2], 1.1875, 0x3a}, // ties between 1.125 (0x39) and 1.25
		// 240 = 2^7 × 1.875: 0 1110 111 = 0x77; 256 = 2^8: 0 1111 000 = 0x78.
		{codecs[2], 240, 0x77},
		{codecs[2], 256, 0x78},
		// 448 = 2^8 × 1.75: 0 1111 110 = 0x7e, the largest finite. 464 ties
		// between it and 480 (0x7f, the NaN): 448 is even; past it, saturate.
		{codecs[2], 448, 0x7e},
		{codecs[2], 464, 0x7e},
		{codecs[2], 470, 0x7e},
		{codecs[2], 1e9, 0x7e},
		{codecs[2], -1e9, 0xfe},
		{codecs[2], inf, 0x7e},
		{codecs[2], -inf, 0xfe},
		{codecs[2], nan, 0x7f},
		{codecs[2], negNaN, 0xff},
		// Subnormals are multiples of 2^-9.
		{codecs[2], 0x1p-9, 0x01},
		{codecs[2], 0x1p-10, 0x00},      // tie with 0
		{codecs[2], 3 * 0x1p-10, 0x02},  // tie between 1 and 2
		{codecs[2], 7.5 * 0x1p-9, 0x08}, // tie between 0x07 and 0x08 = 2^-6
		{codecs[2], 0x1p-6, 0x08},
		{codecs[2], float32(math.Copysign(0, -1)), 0x80},

		// Float8E5M2: 1 is exponent 15, 0 01111 00 = 0x3c.
		{codecs[3], 1, 0x3c},
		{codecs[3], 1.125, 0x3c}, // tie between 1 and 1.25
		{codecs[3], 1.375, 0x3e}, // tie between 1.25 (0x3d) and 1.5
		// 57344 = 2^15 × 1.75: 0 11110 11 = 0x7b. 61440 ties between it and
		// 65536 (0x7c, Inf) and so would give Inf, but saturates.
		{codecs[3], 57344, 0x7b},
		{codecs[3], 61440, 0x7b},
		{codecs[3], 1e6, 0x7b},
		{codecs[3], inf, 0x7b},
		{codecs[3], -inf, 0xfb},
		{codecs[3], nan, 0x7f},
		{codecs[3], negNaN, 0xff},
		{codecs[3], 0x1p-16, 0x01},
		{codecs[3], 0x1p-17, 0x00},
		{codecs[3], 3 * 0x1p-17, 0x02},
		{codecs[3], 0x1p-14, 0x04},
	}
	for _, tt := range tests {
		if got := tt.c.from(tt.in); got != tt.want {
			t.Errorf("%s from %v (%#x) = %#x, want %#x", tt.c.ref.name, tt.in, math.Float32bits(tt.in), got, tt.want)
		}
		if got := tt.c.from64(float64(tt.in)); got != tt.want {
			t.Errorf("%s from64 %v = %#x, want %#x", tt.c.ref.name, tt.in, got, tt.want)
		}
	}
}

// TestDecodeSpecials checks the patterns the formats give special meanings.
func TestDecodeSpecials(t *testing.T) {
	isNaN := func(f float32) bool { return f != f }
	for _, c := range []uint8{0x7f, 0xff} {
		if !isNaN(Float8E4M3(c).Float32()) {
			t.Errorf("f8e4m3 %#x = %v, want NaN", c, Float8E4M3(c).Float32())
		}
	}
	if got := Float8E4M3(0x7e).Float32(); got != 448 {
		t.Errorf("f8e4m3 0x7e = %v, want 448", got)
	}
	if got := Float8E4M3(0xf8).Float32(); got != -256 {
		t.Errorf("f8e4m3 0xf8 = %v, want -256 (0x?8 with exponent 15 is finite)", got)
	}
	if a, b := Float8E5M2(0x7c).Float32(), Float8E5M2(0xfc).Float32(); !math.IsInf(float64(a), 1) || !math.IsInf(float64(b), -1) {
		t.Errorf("f8e5m2 0x7c, 0xfc = %v, %v; want +Inf, -Inf", a, b)
	}
	for _, c := range []uint8{0x7d, 0x7e, 0x7f, 0xfd, 0xfe, 0xff} {
		if !isNaN(Float8E5M2(c).Float32()) {
			t.Errorf("f8e5m2 %#x = %v, want NaN", c, Float8E5M2(c).Float32())
		}
	}
}

// checkNearest compares a conversion of x with the reference's nearest code.
func checkNearest(t *testing.T, c codec, x float64, got uint64, what string) bool {
	t.Helper()
	want, ok := c.ref.nearest(x)
	if !ok {
		if !c.ref.isNaN(got) {
			t.Errorf("%s %s(NaN) = %#x, not a NaN", c.ref.name, what, got)
			return false
		}
		return true
	}
	if got != want {
		t.Errorf("%s %s(%v = %#x) = %#x, want %#x", c.ref.name, what, x, math.Float64bits(x), got, want)
		return false
	}
	return true
}

// interesting returns random float64s that stress rounding in format f:
// values spanning its exponent range and a bit beyond, the exact midpoints
// between neighbours, and values a hair off those midpoints (an ulp of
// float64 when fine is true, of float32 otherwise).
func interesting(r *rand.Rand, f *refFormat, fine bool) float64 {
	sign := 1.0
	if r.IntN(2) == 0 {
		sign = -1
	}
	emin := 1 - f.bias - int(f.mbits) - 3
	emax := 1<<f.ebits - f.bias + 1
	if r.IntN(4) == 0 { // anywhere in range, full precision
		return sign * math.Ldexp(1+r.Float64(), emin+r.IntN(emax-emin))
	}
	// A midpoint, perhaps nudged.
	i := r.IntN(len(f.finite) - 1)
	mid := (f.finite[i] + f.finite[i+1]) / 2
	nudge := r.IntN(3) - 1
	if fine {
		return sign * math.Nextafter(mid, mid+float64(nudge))
	}
	m32 := float32(mid)
	switch nudge {
	case -1:
		m32 = math.Nextafter32(m32, 0)
	case 1:
		m32 = math.Nextafter32(m32, math.MaxFloat32)
	}
	return sign * float64(m32)
}

// TestFromOracle checks the float32 conversions against the reference on
// random bit patterns (every class: NaNs, infinities, subnormals) and on
// values chosen to stress rounding.
func TestFromOracle(t *testing.T) {
	r := rand.New(rand.NewPCG(1, 2))
	n := 200000
	if testing.Short() {
		n = 20000
	}
	for _, c := range codecs {
		fails := 0
		for i := range n {
			var x float32
			if i%2 == 0 {
				x = math.Float32frombits(r.Uint32())
			} else {
				x = float32(interesting(r, c.ref, false)) // exact by construction
			}
			if !checkNearest(t, c, float64(x), c.from(x), "From") {
				if fails++; fails > 10 {
					t.Fatalf("too many failures")
				}
			}
		}
	}
}

// TestFrom64Oracle checks the float64 conversions against the reference, on
// random float64s and on values within an ulp of float64 of a midpoint, where
// going through float32 would round twice and get the tie wrong.
func TestFrom64Oracle(t *testing.T) {
	r := rand.New(rand.NewPCG(3, 4))
	n := 200000
	if testing.Short() {
		n = 20000
	}
	for _, c := range codecs {
		fails := 0
		for i := range n {
			var x float64
			switch i % 3 {
			case 0:
				x = math.Float64frombits(r.Uint64())
			default:
				x = interesting(r, c.ref, true)
			}
			if !checkNearest(t, c, x, c.from64(x), "From64") {
				if fails++; fails > 10 {
					t.Fatalf("too many failures")
				}
			}
		}
	}
	// The double-rounding trap, by hand: 1 + 2^-11 + 2^-40 is just above the
	// tie between 1 and the next Float16, so it rounds up; through float32 the
	// 2^-40 is lost and the tie goes to the even 1.
	if got := Float16From64(1 + 0x1p-11 + 0x1p-40); got != 0x3c01 {
		t.Errorf("Float16From64(1+2^-11+2^-40) = %#x, want 0x3c01", got)
	}
	if got := Float16From(float32(1 + 0x1p-11 + 0x1p-40)); got != 0x3c00 {
		t.Errorf("Float16From(float32(1+2^-11+2^-40)) = %#x, want 0x3c00 (the test's premise)", got)
	}
}

// TestFromMatchesFrom64 checks that the fast float32 conversions and the
// float64 ones agree on every float32 class.
func TestFromMatchesFrom64(t *testing.T) {
	r := rand.New(rand.NewPCG(5, 6))
	for _, c := range codecs {
		for range 100000 {
			x := math.Float32frombits(r.Uint32())
			if a, b := c.from(x), c.from64(float64(x)); a != b && !(c.ref.isNaN(a) && c.ref.isNaN(b)) {
				t.Fatalf("%s: From(%v) = %#x, From64 = %#x", c.ref.name, x, a, b)
			}
		}
	}
}
