package reduce

// integer is the set of Go integer element types.
type integer interface {
	int8 | uint8 | int32 | uint32 | int64 | uint64
}

// native is the set of element types with Go arithmetic.
type native interface {
	integer | float32 | float64
}

// The loops below take slices of equal length; they reslice the inputs to
// len(d) so that the compiler drops the bounds checks. d may be the same
// memory as an input: element i is read before it is written.

// sumLoop sets d = a + b.
func sumLoop[T native](d, a, b []T) {
	a, b = a[:len(d)], b[:len(d)]
	for i := range d {
		d[i] = a[i] + b[i]
	}
}

// prodLoop sets d = a × b.
func prodLoop[T native](d, a, b []T) {
	a, b = a[:len(d)], b[:len(d)]
	for i := range d {
		d[i] = a[i] * b[i]
	}
}

// maxLoop sets d = max(a, b) for 32- and 64-bit integers.
func maxLoop[T int32 | uint32 | int64 | uint64](d, a, b []T) {
	a, b = a[:len(d)], b[:len(d)]
	for i := range d {
		d[i] = max(a[i], b[i])
	}
}

// minLoop sets d = min(a, b) for 32- and 64-bit integers.
func minLoop[T int32 | uint32 | int64 | uint64](d, a, b []T) {
	a, b = a[:len(d)], b[:len(d)]
	for i := range d {
		d[i] = min(a[i], b[i])
	}
}

// maxLoop8 sets d = max(a, b) for 8-bit integers, compared as int32: the
// compiler makes a conditional move of a 32-bit max, but of an 8-bit one a
// branch, mispredicted half the time on random data.
func maxLoop8[T int8 | uint8](d, a, b []T) {
	a, b = a[:len(d)], b[:len(d)]
	for i := range d {
		d[i] = T(max(int32(a[i]), int32(b[i])))
	}
}

// minLoop8 sets d = min(a, b) for 8-bit integers, as maxLoop8 does.
func minLoop8[T int8 | uint8](d, a, b []T) {
	a, b = a[:len(d)], b[:len(d)]
	for i := range d {
		d[i] = T(min(int32(a[i]), int32(b[i])))
	}
}

// mulLoop sets d = a × s.
func mulLoop[T native](d, a []T, s T) {
	a = a[:len(d)]
	for i := range d {
		d[i] = a[i] * s
	}
}

// mulAddLoop sets d = a + b × s, rounding the product before the sum: the
// conversion T(...) forbids the compiler to fuse them into an FMA.
func mulAddLoop[T native](d, a, b []T, s T) {
	a, b = a[:len(d)], b[:len(d)]
	for i := range d {
		d[i] = a[i] + T(b[i]*s)
	}
}

// divSignedLoop sets d = d / n, truncated toward zero, computed in int64 so
// that an n past T's range is still exact.
func divSignedLoop[T int8 | int32 | int64](d []T, n int) {
	for i := range d {
		d[i] = T(int64(d[i]) / int64(n))
	}
}

// divUnsignedLoop sets d = d / n, computed in uint64.
func divUnsignedLoop[T uint8 | uint32 | uint64](d []T, n int) {
	for i := range d {
		d[i] = T(uint64(d[i]) / uint64(n))
	}
}
