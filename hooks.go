package ringo

import (
	"github.com/ringo-ccl/ringo/internal/commhook"
	"github.com/ringo-ccl/ringo/ring"
)

// What ringo's own tools ask of a communicator beyond the public API,
// through internal/commhook.
func init() {
	commhook.SumPathOf = func(c any, dt DataType) commhook.SumPath { return c.(*Comm).sumPath(dt) }
}

// sumPath returns how an all-reduce sum of dt runs on c (see
// commhook.SumPath).
func (c *Comm) sumPath(dt DataType) commhook.SumPath {
	p := commhook.SumPath{Wire: dt, Ring: append([]int(nil), c.cfg.Ring.Order...), Backwards: c.cfg.Variant == ring.Bidirectional}
	if c.hier != nil {
		h, _ := ring.NewHierarchy(c.cfg.Ring, c.hier.Size)
		p.Groups = h.Groups
	}
	if _, w, err := c.variantFor(CollAllReduce, dt, OpSum); err == nil && w != nil {
		p.Wire = w.On()
	}
	return p
}
