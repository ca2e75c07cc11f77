package plot

import (
	"fmt"
	"math"
)

// SizeLabel writes a byte count the way the size axis labels it: 8 B,
// 64 KiB, 8 GiB (binary units; a count that is not a whole number of its
// unit keeps one decimal).
func SizeLabel(b float64) string {
	units := []string{"B", "KiB", "MiB", "GiB", "TiB"}
	u := 0
	for u < len(units)-1 && math.Abs(b) >= 1024 {
		b /= 1024
		u++
	}
	if b == math.Trunc(b) {
		return fmt.Sprintf("%.0f %s", b, units[u])
	}
	return fmt.Sprintf("%.1f %s", b, units[u])
}

// log2Ticks returns the powers of two labelled on a log2 axis spanning
// [lo, hi] (both > 0): every power from the one at or below lo to the one
// at or above hi, thinned to a stride that keeps at most maxTicks.
func log2Ticks(lo, hi float64, maxTicks int) (ticks []float64, first, last float64) {
	e0, e1 := math.Floor(math.Log2(lo)), math.Ceil(math.Log2(hi))
	if e1 == e0 {
		e1++
	}
	stride := 1.0
	for (e1-e0)/stride+1 > float64(maxTicks) {
		stride++
	}
	for e := e0; e <= e1; e += stride {
		ticks = append(ticks, math.Exp2(e))
	}
	return ticks, math.Exp2(e0), math.Exp2(e1)
}

// linearTicks returns ticks 0, step, 2·step, … covering [0, hi], with step
// 1, 2 or 5 times a power of ten chosen for about six of them.
func linearTicks(hi float64) (ticks []float64, top float64) {
	if !(hi > 0) {
		hi = 1
	}
	raw := hi / 8
	mag := math.Pow(10, math.Floor(math.Log10(raw)))
	step := mag
	for _, m := range []float64{1, 2, 5, 10} {
		if m*mag >= raw {
			step = m * mag
			break
		}
	}
	top = math.Ceil(hi/step) * step
	for i := 0.0; i*step <= top+step/2; i++ {
		ticks = append(ticks, i*step)
	}
	return ticks, top
}

// valueLabel writes a value-axis tick without trailing zeros.
func valueLabel(v float64) string {
	return fmt.Sprintf("%g", math.Round(v*1000)/1000)
}
