package reduce

// The float formats are sign-magnitude, so maxNum and minNum can work on bit
// patterns alone, without branches: a key that orders the patterns as their
// values (with -0 just below +0) picks the result, and a NaN's key is first
// replaced by one past the worst number's, so that the other operand wins;
// when both are NaN the result is a's NaN.
//
// U is the bit pattern and S a signed integer at least as wide as U; 8- and
// 16-bit patterns use int32 keys, and the selections are made on uint64,
// because the compiler turns selections into conditional moves only for 32-
// and 64-bit values, and branches, mispredicted half the time, cost several
// times the whole loop body. inf is the
// magnitude above which a pattern is a NaN: the infinity's pattern, or the
// largest finite one for E4M3, which has no infinity.

// pattern is the bit pattern of a float format.
type pattern interface {
	~uint8 | ~uint16 | ~uint32 | ~uint64
}

// key returns the rank of the pattern x in the numeric order: its magnitude,
// or minus one more than that for a negative x.
func key[U pattern, S int32 | int64](x, mag U) S {
	k := S(x & mag)
	if x > mag {
		k = -k - 1
	}
	return k
}

// maxNumLoop sets d = maxNum(a, b) on sign-magnitude float patterns.
func maxNumLoop[U pattern, S int32 | int64](d, a, b []U, inf U) {
	mag := ^U(0) >> 1
	nan := -S(inf) - 2 // below -Inf's key
	a, b = a[:len(d)], b[:len(d)]
	for i := range d {
		x, y := a[i], b[i]
		kx, ky := key[U, S](x, mag), key[U, S](y, mag)
		if x&mag > inf {
			kx = nan
		}
		if y&mag > inf {
			ky = nan
		}
		r := uint64(x) // select wide: the compiler branches on a narrow select
		if ky > kx {
			r = uint64(y)
		}
		d[i] = U(r)
	}
}

// minNumLoop sets d = minNum(a, b) on sign-magnitude float patterns.
func minNumLoop[U pattern, S int32 | int64](d, a, b []U, inf U) {
	mag := ^U(0) >> 1
	nan := S(inf) + 1 // above +Inf's key
	a, b = a[:len(d)], b[:len(d)]
	for i := range d {
		x, y := a[i], b[i]
		kx, ky := key[U, S](x, mag), key[U, S](y, mag)
		if x&mag > inf {
			kx = nan
		}
		if y&mag > inf {
			ky = nan
		}
		r := uint64(x) // select wide: the compiler branches on a narrow select
		if ky < kx {
			r = uint64(y)
		}
		d[i] = U(r)
	}
}
