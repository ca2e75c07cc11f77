//go:build !cuda

package device

import (
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/ringo-ccl/ringo/internal/cuda"
	"github.com/ringo-ccl/ringo/internal/errs"
)

// TestNoCUDA: without the cuda tag the memory and stream functions, and a
// Checker's queries, fail with ErrNotSupported wrapping cuda.ErrNoCUDA.
func TestNoCUDA(t *testing.T) {
	_, err := Alloc(0, 8)
	require.ErrorIs(t, err, errs.ErrNotSupported)
	assert.ErrorIs(t, err, cuda.ErrNoCUDA)
	assert.ErrorIs(t, NewChecker(0).Ptr(0x1000, 8, 0), errs.ErrNotSupported)
	assert.ErrorContains(t, NewChecker(0).Stream(1, 0), "stream of GPU 1 given to a rank on GPU 0")
}
