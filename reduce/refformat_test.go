package reduce

import (
	"math"
	"sort"
)

// refFormat is the tests' own description of a small float format, written
// from the format definitions and independent of the package's code: a slow,
// obviously correct decoder and a rounding oracle that searches the decoded
// values.
type refFormat struct {
	name         string
	ebits, mbits uint
	bias         int
	fn           bool // E4M3FN: no infinity, only S.1111.111 is NaN
	saturate     bool // overflow and ±Inf give the largest finite value

	finite []float64 // the values of the non-negative finite codes, increasing
	search []float64 // finite, then for an IEEE format the value Inf stands for
}

var (
	refHalf = newRefFormat(refFormat{name: "half", ebits: 5, mbits: 10, bias: 15})
	refBF16 = newRefFormat(refFormat{name: "bfloat16", ebits: 8, mbits: 7, bias: 127})
	refE4M3 = newRefFormat(refFormat{name: "f8e4m3", ebits: 4, mbits: 3, bias: 7, fn: true, saturate: true})
	refE5M2 = newRefFormat(refFormat{name: "f8e5m2", ebits: 5, mbits: 2, bias: 15, saturate: true})
)

func newRefFormat(f refFormat) *refFormat {
	for c := uint64(0); c < 1<<(f.ebits+f.mbits); c++ {
		v := f.decode(c)
		if math.IsInf(v, 0) || math.IsNaN(v) {
			break
		}
		f.finite = append(f.finite, v)
	}
	f.search = f.finite
	if !f.saturate {
		// The infinity's code follows the largest finite one and stands for
		// the first value of the next binade.
		f.search = append(f.finite[:len(f.finite):len(f.finite)], math.Ldexp(1, 1<<f.ebits-1-f.bias))
	}
	return &f
}

func (f *refFormat) bits() uint   { return 1 + f.ebits + f.mbits }
func (f *refFormat) sign() uint64 { return 1 << (f.ebits + f.mbits) }

// maxCode is the largest finite magnitude code.
func (f *refFormat) maxCode() uint64 { return uint64(len(f.finite) - 1) }

// decode returns the value of code c.
func (f *refFormat) decode(c uint64) float64 {
	e := int(c >> f.mbits & (1<<f.ebits - 1))
	m := c & (1<<f.mbits - 1)
	var v float64
	switch {
	case f.fn && e == 1<<f.ebits-1 && m == 1<<f.mbits-1:
		return math.NaN()
	case !f.fn && e == 1<<f.ebits-1 && m != 0:
		return math.NaN()
	case !f.fn && e == 1<<f.ebits-1:
		v = math.Inf(1)
	case e == 0:
		v = math.Ldexp(float64(m), 1-f.bias-int(f.mbits))
	default:
		v = math.Ldexp(float64(1<<f.mbits+m), e-f.bias-int(f.mbits))
	}
	if c&f.sign() != 0 {
		v = -v
	}
	return v
}

func (f *refFormat) isNaN(c uint64) bool { return math.IsNaN(f.decode(c)) }

// nearest returns the code nearest to x, ties to the even code, found by
// searching the decoded values. A saturating format clamps to its largest
// finite value. An IEEE format rounds as if its infinity's code stood for the
// first value of the next binade (an even code), so that Inf starts at the
// midpoint above the largest finite value. ok is false for a NaN.
func (f *refFormat) nearest(x float64) (code uint64, ok bool) {
	if math.IsNaN(x) {
		return 0, false
	}
	var sign uint64
	if math.Signbit(x) {
		sign, x = f.sign(), -x
	}
	vals := f.search
	if x >= vals[len(vals)-1] {
		return sign | uint64(len(vals)-1), true
	}
	i := sort.SearchFloat64s(vals, x) // vals[i-1] < x <= vals[i]
	if vals[i] == x {
		return sign | uint64(i), true
	}
	lo, hi := uint64(i-1), uint64(i)
	mid := (vals[lo] + vals[hi]) / 2 // exact: few significant bits
	switch {
	case x < mid:
		return sign | lo, true
	case x > mid:
		return sign | hi, true
	case lo%2 == 0:
		return sign | lo, true
	}
	return sign | hi, true
}
