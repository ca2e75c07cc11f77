package reduce

// roundMag rounds a magnitude, given as float64 bits with the sign bit clear
// and not a NaN, to a binary format with mbits stored mantissa bits and
// exponent bias bias: to nearest, ties to even, with gradual underflow. It
// returns the format's magnitude code (biased exponent above mbits mantissa
// bits). The code of a value too large for the format is at least that of the
// format's infinity (or of the first code past its largest finite value); the
// caller decides between infinity and saturation.
//
// It rounds the float64 once, which is what the From64 conversions need:
// going through float32 first could round twice.
func roundMag(a uint64, mbits, bias uint) uint64 {
	const fracBits = 52
	e := int(a >> fracBits)    // float64 biased exponent
	te := e - 1023 + int(bias) // target biased exponent
	shift := fracBits - mbits
	if te >= 1 {
		// Normal (or overflowing) in the target. Rebias the exponent and round
		// away the low shift bits; a carry out of the mantissa correctly
		// increments the exponent.
		a -= uint64(1023-int(bias)) << fracBits
		a += uint64(1)<<(shift-1) - 1 + (a>>shift)&1
		return a >> shift
	}
	// Subnormal in the target: the code is the value in units of the
	// smallest subnormal, the significand shifted right by shift+1-te bits
	// and rounded.
	sig := a & (1<<fracBits - 1)
	if e != 0 {
		sig |= 1 << fracBits
	} else {
		te++ // float64 subnormals have the exponent of e == 1
	}
	s := shift + uint(1-te)
	if s > fracBits+1 {
		return 0 // below half the smallest subnormal
	}
	q, rem, half := sig>>s, sig&(1<<s-1), uint64(1)<<(s-1)
	if rem > half || rem == half && q&1 == 1 {
		q++
	}
	return q
}
