package ringo_test

import (
	"testing"

	"github.com/ringo-ccl/ringo"
	"github.com/ringo-ccl/ringo/internal/commhook"
	"github.com/stretchr/testify/assert"
)

// The benchmark's checks learn a communicator's sum order through
// commhook, which package ringo fills.
func TestSumPathHook(t *testing.T) {
	comms := newComms(t, 4, nil)
	p := commhook.SumPathOf(comms[0], ringo.TypeFloat32)
	assert.Equal(t, ringo.TypeFloat32, p.Wire)
	assert.ElementsMatch(t, []int{0, 1, 2, 3}, p.Ring)
	assert.False(t, p.Backwards)
	assert.Nil(t, p.Groups)

	comms = newComms(t, 4, &ringo.Config{Variant: "bf16wire"})
	assert.Equal(t, ringo.TypeBFloat16, commhook.SumPathOf(comms[1], ringo.TypeFloat32).Wire, "bf16wire carries float32 sums as bfloat16")
	assert.Equal(t, ringo.TypeInt32, commhook.SumPathOf(comms[1], ringo.TypeInt32).Wire, "and other types exactly")

	comms = newComms(t, 4, &ringo.Config{Variant: "hierarchical", Group: 2})
	p = commhook.SumPathOf(comms[2], ringo.TypeFloat32)
	assert.Len(t, p.Groups, 2)

	comms = newComms(t, 4, &ringo.Config{Variant: "bidirectional"})
	assert.True(t, commhook.SumPathOf(comms[3], ringo.TypeFloat32).Backwards)
}
