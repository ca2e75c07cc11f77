package group

import (
	"errors"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/ringo-ccl/ringo/internal/calls"
)

// TestWorld: a world's ranks disagreeing on a call are refused; Fail
// breaks every rank; Done runs once, when the last rank is released.
func TestWorld(t *testing.T) {
	done := 0
	w := NewWorld(2, nil, func() error { done++; return nil })
	require.NoError(t, w.Enter(0, calls.Record{Seq: 1, Count: 8, Stream: calls.Stream{GPU: -1}}))
	require.Error(t, w.Enter(1, calls.Record{Seq: 1, Count: 9, Stream: calls.Stream{GPU: -1}}))

	cause := errors.New("rank 0 called Abort")
	w.Fail(cause)
	assert.ErrorIs(t, w.Broken().Err(), cause)

	require.NoError(t, w.Release(0))
	assert.Equal(t, 0, done)
	require.NoError(t, w.Release(1))
	assert.Equal(t, 1, done)
}
