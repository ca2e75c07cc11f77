package reduce

import "math"

// The Float16 loops widen each element to float32 (one load from halfTable),
// operate in float32, and round back as Float16From does, all of it inlined,
// with the rare results (subnormals, overflow, NaN) on a branch of their own.
// This is correctly rounded, as CUDA's __hadd and __hmul are: the product of
// two Float16 values is exact in float32, and float32's 24-bit precision is at
// least 2p+2 for Float16's p = 11, so rounding a sum first to float32 and then
// to Float16 gives the same result as rounding it once.

// sumHalf sets d = a + b in Float16.
func sumHalf(d, a, b []Float16) {
	a, b = a[:len(d)], b[:len(d)]
	for i := range d {
		x := math.Float32bits(a[i].Float32() + b[i].Float32())
		h, ok := float16Normal(x)
		if !ok {
			h = float16Rare(x)
		}
		d[i] = h
	}
}

// prodHalf sets d = a × b in Float16.
func prodHalf(d, a, b []Float16) {
	a, b = a[:len(d)], b[:len(d)]
	for i := range d {
		x := math.Float32bits(a[i].Float32() * b[i].Float32())
		h, ok := float16Normal(x)
		if !ok {
			h = float16Rare(x)
		}
		d[i] = h
	}
}

// mulHalf sets d = a × s in Float16.
func mulHalf(d, a []Float16, s Float16) {
	sf := s.Float32()
	a = a[:len(d)]
	for i := range d {
		x := math.Float32bits(a[i].Float32() * sf)
		h, ok := float16Normal(x)
		if !ok {
			h = float16Rare(x)
		}
		d[i] = h
	}
}

// mulAddHalf sets d = a + b × s in Float16, the product rounded to Float16 first.
func mulAddHalf(d, a, b []Float16, s Float16) {
	sf := s.Float32()
	a, b = a[:len(d)], b[:len(d)]
	for i := range d {
		x := math.Float32bits(b[i].Float32() * sf)
		p, ok := float16Normal(x)
		if !ok {
			p = float16Rare(x)
		}
		x = math.Float32bits(a[i].Float32() + p.Float32())
		h, ok := float16Normal(x)
		if !ok {
			h = float16Rare(x)
		}
		d[i] = h
	}
}
