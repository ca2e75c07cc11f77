package bench

import (
	"encoding/binary"
	"math"

	"github.com/ringo-ccl/ringo"
	"github.com/ringo-ccl/ringo/reduce"
)

// exactLimit is the largest magnitude up to which every integer is
// representable in t (for integer types, the largest value of the type).
func exactLimit(t ringo.DataType) float64 {
	switch t {
	case ringo.TypeInt8:
		return 127
	case ringo.TypeUint8:
		return 255
	case ringo.TypeFloat16:
		return 2048
	case ringo.TypeBFloat16:
		return 256
	case ringo.TypeFloat8E4M3:
		return 16
	case ringo.TypeFloat8E5M2:
		return 8
	case ringo.TypeFloat32:
		return 1 << 24
	}
	return 1 << 30 // 32- and 64-bit integers, float64: far beyond any data here
}

func signed(t ringo.DataType) bool {
	return t != ringo.TypeUint8 && t != ringo.TypeUint32 && t != ringo.TypeUint64
}

// mix is a deterministic hash of (seed, rank, index).
func mix(seed uint64, rank int, i int64) uint64 {
	x := seed*0x9e3779b97f4a7c15 ^ uint64(rank)*0xbf58476d1ce4e5b9 ^ uint64(i)*0x94d049bb133111eb
	x ^= x >> 31
	x *= 0x7fb5d6f1a1b3c4d5
	x ^= x >> 29
	return x
}

// value returns rank's input element i for a check of op kind k, chosen so
// that the result over n ranks is exact in t whatever the order of the
// reduction: every partial sum stays within exactLimit. It is never zero,
// unless the ranks are so many that even ±1 from each (times its PreMulSum
// scalar) could leave the exact range (8 ranks of float8 E5M2 summing to
// 12, say): then the ranks past those that fit give 0.
func value(t ringo.DataType, k reduce.OpKind, n, rank int, i int64, seed uint64) float64 {
	x := mix(seed, rank, i)
	limit := exactLimit(t)
	sign := 1.0
	if signed(t) && x>>63 == 1 {
		sign = -1
	}
	switch k {
	case reduce.Prod:
		if int64(rank) == i%int64(n) {
			return 2 * sign
		}
		return sign
	case reduce.Min, reduce.Max:
		return sign * float64(1+x%100)
	}
	weight := func(r int) float64 { // what one unit of rank r's input adds
		if k == reduce.PreMulSum {
			return scalar(r)
		}
		return 1
	}
	total := 0.0
	for r := range n {
		total += weight(r)
	}
	if m := math.Floor(limit / total); m >= 1 {
		return sign * float64(1+x%uint64(m))
	}
	upTo := 0.0
	for r := range rank + 1 {
		upTo += weight(r)
	}
	if upTo > limit {
		return 0
	}
	return sign
}

// randomValue returns rank's input element i for a check of rounding
// (Options.Error): uniform in [−1, 1), from the same hash as value.
func randomValue(_ ringo.DataType, _ reduce.OpKind, _, rank int, i int64, seed uint64) float64 {
	return float64(mix(seed, rank, i)>>11)/(1<<52) - 1
}

// scalar is rank's PreMulSum scalar: 1 on even ranks, 2 on odd (as nccl-tests).
func scalar(rank int) float64 { return float64(1 + rank%2) }

// Put stores v, converted to t, as element i of b.
func Put(t ringo.DataType, b []byte, i int64, v float64) {
	switch t {
	case ringo.TypeInt8:
		b[i] = byte(int8(v))
	case ringo.TypeUint8:
		b[i] = byte(v)
	case ringo.TypeInt32:
		binary.LittleEndian.PutUint32(b[4*i:], uint32(int32(v)))
	case ringo.TypeUint32:
		binary.LittleEndian.PutUint32(b[4*i:], uint32(v))
	case ringo.TypeInt64:
		binary.LittleEndian.PutUint64(b[8*i:], uint64(int64(v)))
	case ringo.TypeUint64:
		binary.LittleEndian.PutUint64(b[8*i:], uint64(v))
	case ringo.TypeFloat16:
		binary.LittleEndian.PutUint16(b[2*i:], uint16(reduce.Float16From64(v)))
	case ringo.TypeFloat32:
		binary.LittleEndian.PutUint32(b[4*i:], math.Float32bits(float32(v)))
	case ringo.TypeFloat64:
		binary.LittleEndian.PutUint64(b[8*i:], math.Float64bits(v))
	case ringo.TypeBFloat16:
		binary.LittleEndian.PutUint16(b[2*i:], uint16(reduce.BFloat16From64(v)))
	case ringo.TypeFloat8E4M3:
		b[i] = byte(reduce.Float8E4M3From64(v))
	case ringo.TypeFloat8E5M2:
		b[i] = byte(reduce.Float8E5M2From64(v))
	}
}

// roundTo returns v as stored in t.
func roundTo(t ringo.DataType, v float64) float64 {
	var b [8]byte
	Put(t, b[:], 0, v)
	return Get(t, b[:], 0)
}

// Get returns element i of b as a float64.
func Get(t ringo.DataType, b []byte, i int64) float64 {
	switch t {
	case ringo.TypeInt8:
		return float64(int8(b[i]))
	case ringo.TypeUint8:
		return float64(b[i])
	case ringo.TypeInt32:
		return float64(int32(binary.LittleEndian.Uint32(b[4*i:])))
	case ringo.TypeUint32:
		return float64(binary.LittleEndian.Uint32(b[4*i:]))
	case ringo.TypeInt64:
		return float64(int64(binary.LittleEndian.Uint64(b[8*i:])))
	case ringo.TypeUint64:
		return float64(binary.LittleEndian.Uint64(b[8*i:]))
	case ringo.TypeFloat16:
		return float64(reduce.Float16(binary.LittleEndian.Uint16(b[2*i:])).Float32())
	case ringo.TypeFloat32:
		return float64(math.Float32frombits(binary.LittleEndian.Uint32(b[4*i:])))
	case ringo.TypeFloat64:
		return math.Float64frombits(binary.LittleEndian.Uint64(b[8*i:]))
	case ringo.TypeBFloat16:
		return float64(reduce.BFloat16(binary.LittleEndian.Uint16(b[2*i:])).Float32())
	case ringo.TypeFloat8E4M3:
		return float64(reduce.Float8E4M3(b[i]).Float32())
	case ringo.TypeFloat8E5M2:
		return float64(reduce.Float8E5M2(b[i]).Float32())
	}
	return math.NaN()
}

// expect returns the exact result of combining the inputs vals (one per
// rank, already rounded to t) with op kind k over n ranks.
func expect(t ringo.DataType, k reduce.OpKind, vals []float64) float64 {
	n := float64(len(vals))
	acc := 0.0
	switch k {
	case reduce.Prod:
		acc = 1
		for _, v := range vals {
			acc *= v
		}
	case reduce.Min:
		acc = vals[0]
		for _, v := range vals {
			acc = math.Min(acc, v)
		}
	case reduce.Max:
		acc = vals[0]
		for _, v := range vals {
			acc = math.Max(acc, v)
		}
	case reduce.PreMulSum:
		for r, v := range vals {
			acc += v * scalar(r)
		}
	default:
		for _, v := range vals {
			acc += v
		}
		if k == reduce.Avg {
			acc /= n
			if !t.IsFloat() {
				acc = math.Trunc(acc)
			}
		}
	}
	return acc
}

// ulp returns the spacing of t's values near v.
func ulp(t ringo.DataType, v float64) float64 {
	bits := map[ringo.DataType]int{ringo.TypeFloat16: 10, ringo.TypeFloat32: 23, ringo.TypeFloat64: 52, ringo.TypeBFloat16: 7, ringo.TypeFloat8E4M3: 3, ringo.TypeFloat8E5M2: 2}[t]
	_, e := math.Frexp(math.Max(math.Abs(v), 1e-30))
	return math.Ldexp(1, e-1-bits)
}
