package reduce

import "math"

// The Float8E4M3 and Float8E5M2 loops widen each element to float32 (one load
// from a 256-entry table), operate in float32, and round back, saturating, as
// Float8E4M3From and Float8E5M2From do, all of it inlined, with the rare
// results (subnormals, saturation, NaN) on a branch of their own. This is
// correctly rounded: the product of two 8-bit values is exact in float32, and
// float32 has far more than twice their precision, so rounding a sum first to
// float32 and then to 8 bits gives the same result as rounding it once.

// sumE4M3 sets d = a + b in Float8E4M3.
func sumE4M3(d, a, b []Float8E4M3) {
	a, b = a[:len(d)], b[:len(d)]
	for i := range d {
		x := math.Float32bits(a[i].Float32() + b[i].Float32())
		h, ok := float8E4M3Normal(x)
		if !ok {
			h = float8E4M3Rare(x)
		}
		d[i] = h
	}
}

// prodE4M3 sets d = a × b in Float8E4M3.
func prodE4M3(d, a, b []Float8E4M3) {
	a, b = a[:len(d)], b[:len(d)]
	for i := range d {
		x := math.Float32bits(a[i].Float32() * b[i].Float32())
		h, ok := float8E4M3Normal(x)
		if !ok {
			h = float8E4M3Rare(x)
		}
		d[i] = h
	}
}

// mulE4M3 sets d = a × s in Float8E4M3.
func mulE4M3(d, a []Float8E4M3, s Float8E4M3) {
	sf := s.Float32()
	a = a[:len(d)]
	for i := range d {
		x := math.Float32bits(a[i].Float32() * sf)
		h, ok := float8E4M3Normal(x)
		if !ok {
			h = float8E4M3Rare(x)
		}
		d[i] = h
	}
}

// mulAddE4M3 sets d = a + b × s in Float8E4M3, the product rounded to Float8E4M3 first.
func mulAddE4M3(d, a, b []Float8E4M3, s Float8E4M3) {
	sf := s.Float32()
	a, b = a[:len(d)], b[:len(d)]
	for i := range d {
		x := math.Float32bits(b[i].Float32() * sf)
		p, ok := float8E4M3Normal(x)
		if !ok {
			p = float8E4M3Rare(x)
		}
		x = math.Float32bits(a[i].Float32() + p.Float32())
		h, ok := float8E4M3Normal(x)
		if !ok {
			h = float8E4M3Rare(x)
		}
		d[i] = h
	}
}

// sumE5M2 sets d = a + b in Float8E5M2.
func sumE5M2(d, a, b []Float8E5M2) {
	a, b = a[:len(d)], b[:len(d)]
	for i := range d {
		x := math.Float32bits(a[i].Float32() + b[i].Float32())
		h, ok := float8E5M2Normal(x)
		if !ok {
			h = float8E5M2Rare(x)
		}
		d[i] = h
	}
}

// prodE5M2 sets d = a × b in Float8E5M2.
func prodE5M2(d, a, b []Float8E5M2) {
	a, b = a[:len(d)], b[:len(d)]
	for i := range d {
		x := math.Float32bits(a[i].Float32() * b[i].Float32())
		h, ok := float8E5M2Normal(x)
		if !ok {
			h = float8E5M2Rare(x)
		}
		d[i] = h
	}
}

// mulE5M2 sets d = a × s in Float8E5M2.
func mulE5M2(d, a []Float8E5M2, s Float8E5M2) {
	sf := s.Float32()
	a = a[:len(d)]
	for i := range d {
		x := math.Float32bits(a[i].Float32() * sf)
		h, ok := float8E5M2Normal(x)
		if !ok {
			h = float8E5M2Rare(x)
		}
		d[i] = h
	}
}

// mulAddE5M2 sets d = a + b × s in Float8E5M2, the product rounded to Float8E5M2 first.
func mulAddE5M2(d, a, b []Float8E5M2, s Float8E5M2) {
	sf := s.Float32()
	a, b = a[:len(d)], b[:len(d)]
	for i := range d {
		x := math.Float32bits(b[i].Float32() * sf)
		p, ok := float8E5M2Normal(x)
		if !ok {
			p = float8E5M2Rare(x)
		}
		x = math.Float32bits(a[i].Float32() + p.Float32())
		h, ok := float8E5M2Normal(x)
		if !ok {
			h = float8E5M2Rare(x)
		}
		d[i] = h
	}
}
