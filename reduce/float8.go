package reduce

import "math"

// Float8E4M3 is an OCP FP8 E4M3 value ("E4M3FN") as its raw bit pattern:
// sign, 4 exponent bits (bias 7), 3 mantissa bits. It has no infinities; its
// only NaNs are S.1111.111 (0x7F, 0xFF), and its largest finite magnitude is
// 448 (0x7E).
type Float8E4M3 uint8

// Float8E5M2 is an OCP FP8 E5M2 value as its raw bit pattern: sign, 5
// exponent bits (bias 15), 2 mantissa bits, i.e. the top byte of a Float16.
// S.11111.00 is ±Inf, S.11111.{01,10,11} are NaNs, and its largest finite
// magnitude is 57344 (0x7B).
type Float8E5M2 uint8

// float8NaN is the NaN that conversions to either 8-bit format produce, with
// the sign of the NaN converted: S.1111.111 in E4M3 (its only NaN), and
// S.11111.11 in E5M2.
const float8NaN = 0x7f

// Float8E4M3From rounds f to the nearest Float8E4M3, ties to even,
// saturating as CUDA's __nv_cvt_float_to_fp8(f, __NV_SATFINITE, __NV_E4M3)
// does: subnormals down to 2^-9 are kept, a finite magnitude that rounds past
// 448 and ±Inf become ±448, and a NaN becomes 0x7F with f's sign (0xFF when
// negative).
func Float8E4M3From(f float32) Float8E4M3 {
	b := math.Float32bits(f)
	if h, ok := float8E4M3Normal(b); ok {
		return h
	}
	return float8E4M3Rare(b)
}

// float8E4M3Normal converts the float32 bits b when 2^-6 <= |b| < 448, where
// the result is a normal Float8E4M3, and reports whether b was in that range
// (see float16Normal for why it is apart).
func float8E4M3Normal(b uint32) (Float8E4M3, bool) {
	a := b & 0x7fffffff
	// Rebias the exponent and round the 20 bits shifted out to nearest even;
	// below 448 that rounds at most to 448, 0x7e.
	h := b>>24&0x80 | (a+(a>>20)&1+0x7ffff-(127-7)<<23)>>20
	return Float8E4M3(h), a-0x3c800000 < 0x43e00000-0x3c800000
}

// float8E4M3Rare converts the float32 bits b outside float8E4M3Normal's
// range.
func float8E4M3Rare(b uint32) Float8E4M3 {
	sign := Float8E4M3(b>>24) & 0x80
	a := b & 0x7fffffff
	switch {
	case a > 0x7f800000:
		return sign | float8NaN
	case a >= 0x43e00000: // 448 or more, Inf: saturate
		return sign | 0x7e
	}
	// A subnormal or zero. 2^14 has a float32 ulp of 2^-9, the smallest
	// subnormal: adding it rounds |f| to a multiple of 2^-9, ties to even.
	return sign | Float8E4M3(math.Float32bits(math.Float32frombits(a)+0x1p14)-0x46800000)
}

// Float8E4M3From64 rounds f to the nearest Float8E4M3, ties to even, directly
// from the float64, with the same rules as Float8E4M3From.
func Float8E4M3From64(f float64) Float8E4M3 {
	b := math.Float64bits(f)
	sign := uint8(b>>56) & 0x80
	a := b &^ (1 << 63)
	if a > 0x7ff0000000000000 {
		return Float8E4M3(sign | float8NaN)
	}
	return Float8E4M3(sign | uint8(min(roundMag(a, 3, 7), 0x7e)))
}

// Float8E5M2From rounds f to the nearest Float8E5M2, ties to even,
// saturating as CUDA's __nv_cvt_float_to_fp8(f, __NV_SATFINITE, __NV_E5M2)
// does: subnormals down to 2^-16 are kept, a finite magnitude that rounds past
// 57344 and ±Inf become ±57344, and a NaN becomes 0x7F with f's sign (0xFF
// when negative).
func Float8E5M2From(f float32) Float8E5M2 {
	b := math.Float32bits(f)
	if h, ok := float8E5M2Normal(b); ok {
		return h
	}
	return float8E5M2Rare(b)
}

// float8E5M2Normal converts the float32 bits b when 2^-14 <= |b| < 57344,
// where the result is a normal Float8E5M2, and reports whether b was in that
// range (see float16Normal for why it is apart).
func float8E5M2Normal(b uint32) (Float8E5M2, bool) {
	a := b & 0x7fffffff
	// Rebias and round the 21 bits shifted out; at most 57344, 0x7b.
	h := b>>24&0x80 | (a+(a>>21)&1+0xfffff-(127-15)<<23)>>21
	return Float8E5M2(h), a-0x38800000 < 0x47600000-0x38800000
}

// float8E5M2Rare converts the float32 bits b outside float8E5M2Normal's
// range.
func float8E5M2Rare(b uint32) Float8E5M2 {
	sign := Float8E5M2(b>>24) & 0x80
	a := b & 0x7fffffff
	switch {
	case a > 0x7f800000:
		return sign | float8NaN
	case a >= 0x47600000: // 57344 or more, Inf: saturate
		return sign | 0x7b
	}
	// A subnormal or zero: 2^7 has a float32 ulp of 2^-16, the smallest
	// subnormal.
	return sign | Float8E5M2(math.Float32bits(math.Float32frombits(a)+0x1p7)-0x43000000)
}

// Float8E5M2From64 rounds f to the nearest Float8E5M2, ties to even, directly
// from the float64, with the same rules as Float8E5M2From.
func Float8E5M2From64(f float64) Float8E5M2 {
	b := math.Float64bits(f)
	sign := uint8(b>>56) & 0x80
	a := b &^ (1 << 63)
	if a > 0x7ff0000000000000 {
		return Float8E5M2(sign | float8NaN)
	}
	return Float8E5M2(sign | uint8(min(roundMag(a, 2, 15), 0x7b)))
}

// Float32 returns h widened to float32; this is exact. The NaNs 0x7F and
// 0xFF become float32 quiet NaNs with their sign.
func (h Float8E4M3) Float32() float32 { return e4m3Table[h] }

// Float32 returns h widened to float32; this is exact, and a NaN keeps its
// sign and payload.
func (h Float8E5M2) Float32() float32 { return e5m2Table[h] }

// float8E4M3Bits returns the float32 bits of h; it fills e4m3Table.
func float8E4M3Bits(h Float8E4M3) uint32 {
	sign := uint32(h&0x80) << 24
	e, m := uint32(h>>3&0xf), uint32(h&7)
	switch {
	case e == 0xf && m == 7: // NaN
		return sign | 0x7fc00000
	case e == 0: // zero, subnormal: m × 2^-9, exact in float32
		return sign | math.Float32bits(float32(m)*0x1p-9)
	}
	return sign | (e+127-7)<<23 | m<<20
}
