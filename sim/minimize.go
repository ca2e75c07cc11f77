package sim

import "sort"

// minimize returns the point near x0 where f is smallest, by Nelder and
// Mead's downhill simplex: the first simplex steps each coordinate by step,
// and the search stops after iters iterations or once the simplex's values
// agree within tol. It is deterministic.
func minimize(f func([]float64) float64, x0 []float64, step float64, iters int, tol float64) ([]float64, float64) {
	d := len(x0)
	type vertex struct {
		x []float64
		v float64
	}
	simplex := make([]vertex, d+1)
	for i := range simplex {
		x := append([]float64(nil), x0...)
		if i > 0 {
			x[i-1] += step
		}
		simplex[i] = vertex{x, f(x)}
	}
	// along returns c + t·(x − c).
	along := func(c, x []float64, t float64) vertex {
		y := make([]float64, d)
		for j := range y {
			y[j] = c[j] + t*(x[j]-c[j])
		}
		return vertex{y, f(y)}
	}
	for it := 0; it < iters; it++ {
		sort.SliceStable(simplex, func(i, j int) bool { return simplex[i].v < simplex[j].v })
		best, worst := simplex[0], simplex[d]
		if worst.v-best.v <= tol {
			break
		}
		c := make([]float64, d) // centroid of all but the worst
		for _, s := range simplex[:d] {
			for j := range c {
				c[j] += s.x[j] / float64(d)
			}
		}
		r := along(c, worst.x, -1)
		switch {
		case r.v < best.v:
			if e := along(c, worst.x, -2); e.v < r.v {
				r = e
			}
			simplex[d] = r
		case r.v < simplex[d-1].v:
			simplex[d] = r
		default:
			if k := along(c, worst.x, 0.5); k.v < worst.v {
				simplex[d] = k
				continue
			}
			for i := 1; i <= d; i++ {
				simplex[i] = along(best.x, simplex[i].x, 0.5)
			}
		}
	}
	sort.SliceStable(simplex, func(i, j int) bool { return simplex[i].v < simplex[j].v })
	return simplex[0].x, simplex[0].v
}
