// Package commhook lets ringo's own tools ask a communicator what the
// public API does not say. Package ringo fills the hooks when it is
// initialised; the tools (package bench) call them. A hook takes the
// communicator as any, because this package cannot import ringo (ringo
// imports it): pass a *ringo.Comm, nothing else.
package commhook

import "github.com/ringo-ccl/ringo/reduce"

// SumPath is how a communicator's all-reduce sums a datatype, for checks
// that reproduce its rounding: partial sums travel as Wire (the buffers'
// type, or a precision variant's), each chunk's sum starts at one rank and
// goes round Ring in order — or, when Backwards, in either direction (the
// bidirectional variant runs odd channels the other way). With Groups (the
// hierarchical variant), an element's sum may instead be each group's sum,
// started at the same position of every group, summed round the groups
// from one of them.
type SumPath struct {
	Wire      reduce.DataType
	Ring      []int
	Backwards bool
	Groups    [][]int
}

// SumPathOf returns how an all-reduce sum of dt runs on c, a *ringo.Comm.
var SumPathOf func(c any, dt reduce.DataType) SumPath
