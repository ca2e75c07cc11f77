package ring

import (
	"fmt"
	"math"
)

// Hierarchy is the 2-D arrangement of the Hierarchical variant: the ring
// cut into groups of Size consecutive ranks (a host's GPUs, when the ring
// keeps each host's GPUs together as ringo topo orders them), and the
// columns across them (the ranks at the same position of every group). An
// all-reduce runs as three ring collectives over these sub-rings, each a
// plan of its own: a reduce-scatter inside every group, an all-reduce of
// each rank's segment along its column, and an all-gather inside every
// group. Each rank sends what it sends on the ring, 2(n−1)/n of the data,
// but only the middle phase, a g-th of it, crosses groups, every column at
// once, on rings of n/g hops.
type Hierarchy struct {
	Size    int     // ranks per group
	Groups  [][]int // Groups[i]: group i in ring order (Ring.Order[i·Size : (i+1)·Size])
	Columns [][]int // Columns[j]: position j of every group, in group order
}

// NewHierarchy cuts ring r into groups of size ranks; size must divide
// the ring's size.
func NewHierarchy(r Ring, size int) (Hierarchy, error) {
	n := r.Size()
	if size < 1 || size > n || n%size != 0 {
		return Hierarchy{}, fmt.Errorf("groups of %d ranks do not divide %d ranks", size, n)
	}
	h := Hierarchy{Size: size, Groups: make([][]int, n/size), Columns: make([][]int, size)}
	for i := range h.Groups {
		h.Groups[i] = r.Order[i*size : (i+1)*size]
		for j, rank := range h.Groups[i] {
			h.Columns[j] = append(h.Columns[j], rank)
		}
	}
	return h, nil
}

// DefaultGroupSize is the group size of n ranks when none is given: the
// smallest divisor of n that is at least √n (a square grid when n is a
// square; n itself, a single group, when n is prime).
func DefaultGroupSize(n int) int {
	for g := int(math.Ceil(math.Sqrt(float64(n)))); g < n; g++ {
		if n%g == 0 {
			return g
		}
	}
	return max(n, 1)
}

// Of returns the group of rank and its position in it.
func (h Hierarchy) Of(rank int) (group, pos int) {
	for i, g := range h.Groups {
		for j, r := range g {
			if r == rank {
				return i, j
			}
		}
	}
	return -1, -1
}

// Phases returns the three specs an all-reduce spec s runs as, each over a
// sub-ring of the ranks named by the phase's ring (ranks of the phase's
// own communicator are positions in it): the reduce-scatter of group 0,
// the all-reduce of column 0 and the all-gather of group 0 — every group
// and column runs the same plans on other ranks. Counts follow the Comm:
// the segment is Count/Size elements (the Count%Size tail runs as a flat
// ring all-reduce, not shown here).
func (h Hierarchy) Phases(s Spec) [3]Spec {
	seg := s.Count / int64(h.Size)
	rs, ar, ag := s, s, s
	rs.Coll, rs.Ring, rs.Count, rs.Rank, rs.Variant = ReduceScatter, Identity(h.Size), seg, 0, RingVariant
	ar.Coll, ar.Ring, ar.Count, ar.Rank, ar.Variant = AllReduce, Identity(len(h.Groups)), seg, 0, RingVariant
	ag.Coll, ag.Ring, ag.Count, ag.Rank, ag.Variant = AllGather, Identity(h.Size), seg, 0, RingVariant
	return [3]Spec{rs, ar, ag}
}
