package reduce

import "math"

// Float16 is an IEEE 754 binary16 ("half") value as its raw bit pattern:
// sign, 5 exponent bits (bias 15), 10 mantissa bits.
type Float16 uint16

// float16NaN is the NaN that conversions to Float16 produce, with the sign of
// the NaN converted: the quiet NaN 0x7E00 (0xFE00 when negative).
const float16NaN Float16 = 0x7e00

// Float16From rounds f to the nearest Float16, ties to even, as CUDA's
// __float2half_rn does: gradual underflow, overflow to ±Inf, ±0 kept, and a
// NaN becomes the quiet NaN 0x7E00 with f's sign (0xFE00 when negative).
func Float16From(f float32) Float16 {
	b := math.Float32bits(f)
	if h, ok := float16Normal(b); ok {
		return h
	}
	return float16Rare(b)
}

// float16Normal converts the float32 bits b when 2^-14 <= |b| < 2^16, where
// the result is a normal Float16 or an overflow to Inf, and reports whether b
// was in that range. It is Float16From's common case, small enough to inline:
// the loops call it and float16Rare themselves, because Float16From as a
// whole is too large for the compiler to inline.
func float16Normal(b uint32) (Float16, bool) {
	a := b & 0x7fffffff
	// Rebias the exponent and round the 13 bits shifted out to nearest even;
	// a carry past 0x7bff (65504) gives 0x7c00, Inf.
	h := b>>16&0x8000 | (a+(a>>13)&1+0xfff-(127-15)<<23)>>13
	return Float16(h), a-0x38800000 < 0x47800000-0x38800000
}

// float16Rare converts the float32 bits b outside float16Normal's range.
func float16Rare(b uint32) Float16 {
	sign := Float16(b>>16) & 0x8000
	a := b & 0x7fffffff
	switch {
	case a > 0x7f800000:
		return sign | float16NaN
	case a >= 0x47800000: // 2^16 or more, Inf
		return sign | 0x7c00
	}
	// A subnormal or zero. Adding 0.5, whose float32 ulp is 2^-24 (the
	// smallest subnormal), rounds |f| to a multiple of 2^-24, ties to even;
	// the low bits of the sum are then the mantissa (0x400, the smallest
	// normal, when it rounds up that far).
	return sign | Float16(math.Float32bits(math.Float32frombits(a)+0.5)-0x3f000000)
}

// Float16From64 rounds f to the nearest Float16, ties to even, directly from
// the float64 (never through float32, which could round twice), with the same
// rules as Float16From.
func Float16From64(f float64) Float16 {
	b := math.Float64bits(f)
	sign := uint16(b>>48) & 0x8000
	a := b &^ (1 << 63)
	if a > 0x7ff0000000000000 {
		return Float16(sign) | float16NaN
	}
	return Float16(sign | uint16(min(roundMag(a, 10, 15), 0x7c00)))
}

// Float32 returns h widened to float32; this is exact, and a NaN keeps its
// sign and payload. It is one load from a table of all 65536 values, which
// the reduction loops find faster than the bit manipulation.
func (h Float16) Float32() float32 { return halfTable[h] }

// float16Bits returns the float32 bits of h; it fills halfTable.
func float16Bits(h Float16) uint32 {
	o := uint32(h&0x7fff) << 13
	exp := o & (0x7c00 << 13)
	o += (127 - 15) << 23
	switch exp {
	case 0x7c00 << 13: // Inf, NaN
		o += (128 - 16) << 23
	case 0: // zero, subnormal: renormalize through a float subtraction
		o += 1 << 23
		o = math.Float32bits(math.Float32frombits(o) - 0x1p-14)
	}
	return o | uint32(h&0x8000)<<16
}
