package topo

import (
	"math"

	"github.com/ringo-ccl/ringo/ring"
)

// MaxExact is the most GPUs of one host whose order is searched
// exhaustively; above it the order is greedy, improved by 2-opt.
const MaxExact = 9

// Bandwidths that stand in for one not reported, in GB/s per direction:
// an NVLink of unknown width counts above a PCIe 5.0 x16 link (GPUs with
// NVLink have several), one of known width but unknown rate as NVLink 1's
// 20 GB/s a link; PCIe as 3.0 x16 after overheads (NCCL's figure); no
// peer access (staged through host memory) as half that.
const (
	nominalNVLinkGBs        = 64
	nominalNVLinkPerLinkGBs = 20
	nominalPCIeGBs          = 12
	nominalNoneGBs          = 6
)

// Choice is a ring order chosen from one or more hosts' topologies.
type Choice struct {
	// Ring is over ranks numbered host by host: GPU k of host h (its k-th
	// entry in GPUs) is rank k plus the GPUs of the hosts before h.
	Ring          ring.Ring
	BottleneckGBs float64 // the ring's slowest link inside a host; 0 when it has none
	TotalGBs      float64 // its links inside hosts added up
	NetHops       int     // its links between hosts: one per host when there are several, else 0
	Nominal       bool    // a link's bandwidth was not reported and a nominal one stood in
	Exact         bool    // every host was searched exhaustively (at most MaxExact GPUs)
}

// Order chooses the ring over t's GPUs (by position in t.GPUs) whose
// slowest link is fastest and, among those, whose links add up to most.
// A link counts at the lesser of its two directions. Ties go to the order
// first in lexicographic order, so a ring no better than 0, 1, …, n−1 is
// not chosen over it. Errors wrap errs.ErrInvalidArgument.
func Order(t *Topology) (Choice, error) { return OrderHosts([]*Topology{t}) }

// OrderHosts chooses a ring over several hosts' GPUs that crosses the
// network once per host: hosts in the order given, each host's GPUs
// consecutively, in the order that maximises the slowest then the total
// bandwidth of the path through them (the ring leaves each host from the
// path's last GPU). With one host it is Order. Errors wrap
// errs.ErrInvalidArgument.
func OrderHosts(hosts []*Topology) (Choice, error) {
	if len(hosts) == 0 {
		return Choice{}, invalid("no host to order")
	}
	for h, t := range hosts {
		if t == nil || len(t.GPUs) == 0 {
			return Choice{}, invalid("host %d has no GPU", h)
		}
		if err := t.Validate(); err != nil {
			return Choice{}, err
		}
	}
	cycle := len(hosts) == 1
	c := Choice{BottleneckGBs: math.Inf(1), Exact: true}
	for _, t := range hosts {
		w, nominal := weights(t)
		var o []int
		if len(w) <= MaxExact {
			o = exactOrder(w, cycle)
		} else {
			o, c.Exact = greedyOrder(w, cycle), false
		}
		s := scoreOf(w, o, cycle)
		for k := range edges(o, cycle) {
			c.Nominal = c.Nominal || nominal[o[k]][o[(k+1)%len(o)]]
		}
		c.BottleneckGBs = min(c.BottleneckGBs, s.min)
		c.TotalGBs += s.sum
		base := len(c.Ring.Order)
		for _, k := range o {
			c.Ring.Order = append(c.Ring.Order, base+k)
		}
	}
	if math.IsInf(c.BottleneckGBs, 1) {
		c.BottleneckGBs = 0
	}
	if !cycle {
		c.NetHops = len(hosts)
	}
	return c, nil
}

// LinkGBs returns the bandwidth a link counts at when ordering: its own
// where known, else a nominal one (nominal is then true).
func LinkGBs(l Link) (gbs float64, nominal bool) {
	switch {
	case l.Kind == Self:
		return 0, false
	case l.BandwidthGBs > 0:
		return l.BandwidthGBs, false
	case l.Kind == NVLink && l.NVLinks > 0:
		return nominalNVLinkPerLinkGBs * float64(l.NVLinks), true
	case l.Kind == NVLink:
		return nominalNVLinkGBs, true
	case l.Kind == PCIe:
		return nominalPCIeGBs, true
	}
	return nominalNoneGBs, true
}

// weights returns the symmetric matrix of what each pair's link counts
// at, and which of them are nominal.
func weights(t *Topology) (w [][]float64, nominal [][]bool) {
	n := len(t.GPUs)
	w, nominal = make([][]float64, n), make([][]bool, n)
	for i := range n {
		w[i], nominal[i] = make([]float64, n), make([]bool, n)
		for j := range n {
			if i == j {
				continue
			}
			a, na := LinkGBs(t.Links[i][j])
			b, nb := LinkGBs(t.Links[j][i])
			w[i][j], nominal[i][j] = min(a, b), na || nb
		}
	}
	return w, nominal
}

// score is an order's slowest link and its links' total.
type score struct{ min, sum float64 }

// better reports whether a beats b by more than rounding.
func (a score) better(b score) bool {
	if less(b.min, a.min) {
		return true
	}
	return !less(a.min, b.min) && less(b.sum, a.sum)
}

// less reports whether x is below y by more than rounding.
func less(x, y float64) bool { return x < y-1e-9*max(1, math.Abs(y)) }

// scoreOf scores order o, with the link from its last back to its first
// when cycle. An order without links scores +Inf, 0.
func scoreOf(w [][]float64, o []int, cycle bool) score {
	s := score{min: math.Inf(1)}
	for i := range edges(o, cycle) {
		x := w[o[i]][o[(i+1)%len(o)]]
		s.min, s.sum = min(s.min, x), s.sum+x
	}
	return s
}

// edges returns the number of links of order o: one per GPU on a cycle
// of three or more, one fewer on a path (or a cycle of two: one link,
// whichever way round).
func edges(o []int, cycle bool) int {
	if cycle && len(o) > 2 {
		return len(o)
	}
	return max(len(o)-1, 0)
}

// canonical reports whether o is the representative of its symmetry
// class: a path's reversal is the same path; a cycle (which starts at 0)
// read backwards is the same cycle.
func canonical(o []int, cycle bool) bool {
	n := len(o)
	if cycle {
		return n < 3 || o[1] < o[n-1]
	}
	return n < 2 || o[0] < o[n-1]
}

// exactOrder searches every order: depth first in lexicographic order,
// cycles starting at 0, cutting a prefix whose slowest link is already
// slower than the best order's.
func exactOrder(w [][]float64, cycle bool) []int {
	n := len(w)
	best, bestScore, found := make([]int, n), score{}, false
	o := make([]int, 0, n)
	used := make([]bool, n)
	var walk func(s score)
	walk = func(s score) {
		if found && less(s.min, bestScore.min) {
			return // every completion is slower
		}
		if len(o) == n {
			if !canonical(o, cycle) {
				return
			}
			if full := scoreOf(w, o, cycle); !found || full.better(bestScore) {
				copy(best, o)
				bestScore, found = full, true
			}
			return
		}
		for k := range n {
			if used[k] || cycle && len(o) == 0 && k != 0 {
				continue
			}
			next := s
			if len(o) > 0 {
				x := w[o[len(o)-1]][k]
				next = score{min(s.min, x), s.sum + x}
			}
			used[k], o = true, append(o, k)
			walk(next)
			used[k], o = false, o[:len(o)-1]
		}
	}
	walk(score{min: math.Inf(1)})
	return best
}

// greedyOrder starts from every GPU in turn, always going on to the
// fastest link to a GPU not yet on the ring, improves each order by
// reversing segments (2-opt) while that helps, and keeps the best.
func greedyOrder(w [][]float64, cycle bool) []int {
	n := len(w)
	var best []int
	var bestScore score
	for start := range n {
		o := []int{start}
		used := make([]bool, n)
		used[start] = true
		for len(o) < n {
			last, next := o[len(o)-1], -1
			for k := range n {
				if !used[k] && (next < 0 || w[last][k] > w[last][next]) {
					next = k
				}
			}
			used[next], o = true, append(o, next)
		}
		s := twoOpt(w, o, cycle)
		if best == nil || s.better(bestScore) {
			best, bestScore = o, s
		}
	}
	return canonicalize(best, cycle)
}

// twoOpt reverses segments of o in place while that improves its score,
// and returns the score.
func twoOpt(w [][]float64, o []int, cycle bool) score {
	s := scoreOf(w, o, cycle)
	for improved := true; improved; {
		improved = false
		for i := 0; i < len(o)-1; i++ {
			for j := i + 1; j < len(o); j++ {
				reverse(o[i : j+1])
				if t := scoreOf(w, o, cycle); t.better(s) {
					s, improved = t, true
				} else {
					reverse(o[i : j+1])
				}
			}
		}
	}
	return s
}

// canonicalize rotates a cycle to start at 0 and reads it, or a path,
// the way canonical accepts.
func canonicalize(o []int, cycle bool) []int {
	if cycle {
		for o[0] != 0 {
			o = append(o[1:], o[0])
		}
		if !canonical(o, cycle) {
			reverse(o[1:])
		}
	} else if !canonical(o, cycle) {
		reverse(o)
	}
	return o
}

func reverse(s []int) {
	for i, j := 0, len(s)-1; i < j; i, j = i+1, j-1 {
		s[i], s[j] = s[j], s[i]
	}
}
