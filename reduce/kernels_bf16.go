package reduce

// The BFloat16 loops widen each element to float32 (a shift), operate in
// float32, and round back with BFloat16From; both are inlined. This is
// correctly rounded: the product of two BFloat16 values is exact in float32
// (even where float32 is subnormal, its 16 significant bits are above 2^-149),
// and float32 has more than twice BFloat16's precision, so rounding a sum first
// to float32 and then to BFloat16 gives the same result as rounding it once.

// sumBF16 sets d = a + b in BFloat16.
func sumBF16(d, a, b []BFloat16) {
	a, b = a[:len(d)], b[:len(d)]
	for i := range d {
		d[i] = BFloat16From(a[i].Float32() + b[i].Float32())
	}
}

// prodBF16 sets d = a × b in BFloat16.
func prodBF16(d, a, b []BFloat16) {
	a, b = a[:len(d)], b[:len(d)]
	for i := range d {
		d[i] = BFloat16From(a[i].Float32() * b[i].Float32())
	}
}

// mulBF16 sets d = a × s in BFloat16.
func mulBF16(d, a []BFloat16, s BFloat16) {
	sf := s.Float32()
	a = a[:len(d)]
	for i := range d {
		d[i] = BFloat16From(a[i].Float32() * sf)
	}
}

// mulAddBF16 sets d = a + b × s in BFloat16, the product rounded to BFloat16 first.
func mulAddBF16(d, a, b []BFloat16, s BFloat16) {
	sf := s.Float32()
	a, b = a[:len(d)], b[:len(d)]
	for i := range d {
		d[i] = BFloat16From(a[i].Float32() + BFloat16From(b[i].Float32()*sf).Float32())
	}
}
