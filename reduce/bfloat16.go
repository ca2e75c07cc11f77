package reduce

import "math"

// BFloat16 is a bfloat16 value as its raw bit pattern: the top 16 bits of a
// float32 (sign, 8 exponent bits, 7 mantissa bits).
type BFloat16 uint16

// bfloat16NaN is the NaN that conversions to BFloat16 produce, with the sign
// of the NaN converted: the quiet NaN 0x7FC0 (0xFFC0 when negative).
const bfloat16NaN BFloat16 = 0x7fc0

// BFloat16From rounds f to the nearest BFloat16, ties to even, as CUDA's
// __float2bfloat16_rn does: subnormals kept, overflow to ±Inf, and a NaN
// becomes the quiet NaN 0x7FC0 with f's sign (0xFFC0 when negative), never
// rounded into an Inf.
func BFloat16From(f float32) BFloat16 {
	b := math.Float32bits(f)
	if b&0x7fffffff > 0x7f800000 {
		return BFloat16(b>>16)&0x8000 | bfloat16NaN
	}
	b += 0x7fff + (b>>16)&1
	return BFloat16(b >> 16)
}

// BFloat16From64 rounds f to the nearest BFloat16, ties to even, directly
// from the float64, with the same rules as BFloat16From.
func BFloat16From64(f float64) BFloat16 {
	b := math.Float64bits(f)
	sign := uint16(b>>48) & 0x8000
	a := b &^ (1 << 63)
	if a > 0x7ff0000000000000 {
		return BFloat16(sign) | bfloat16NaN
	}
	return BFloat16(sign | uint16(min(roundMag(a, 7, 127), 0x7f80)))
}

// Float32 returns h widened to float32; this is exact.
func (h BFloat16) Float32() float32 { return math.Float32frombits(uint32(h) << 16) }
