package ring

import "fmt"

// Ring is the order in which ranks pass data: Order[i] is the rank at
// position i, each position sends to the next and receives from the
// previous, and the last wraps to the first. Ring values are shared, never
// modified after construction.
type Ring struct {
	Order []int
}

// Identity returns the ring 0 → 1 → … → n−1 → 0.
func Identity(n int) Ring {
	o := make([]int, n)
	for i := range o {
		o[i] = i
	}
	return Ring{Order: o}
}

// Size returns the number of ranks on the ring.
func (r Ring) Size() int { return len(r.Order) }

// Validate checks that the order is a permutation of 0…n−1, n ≥ 1.
func (r Ring) Validate() error {
	n := len(r.Order)
	if n < 1 {
		return fmt.Errorf("ring has %d ranks, need at least 1", n)
	}
	seen := make([]bool, n)
	for i, rk := range r.Order {
		if rk < 0 || rk >= n {
			return fmt.Errorf("ring position %d holds rank %d, outside [0, %d)", i, rk, n)
		}
		if seen[rk] {
			return fmt.Errorf("ring holds rank %d twice", rk)
		}
		seen[rk] = true
	}
	return nil
}

// Index returns the position of rank on the ring, or -1.
func (r Ring) Index(rank int) int {
	for i, rk := range r.Order {
		if rk == rank {
			return i
		}
	}
	return -1
}

// At returns the rank k hops after position i (k may be negative).
func (r Ring) At(i, k int) int {
	n := len(r.Order)
	return r.Order[((i+k)%n+n)%n]
}
