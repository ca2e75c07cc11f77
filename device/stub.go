//go:build !cuda

package device

import (
	"context"

	"github.com/ringo-ccl/ringo/internal/cuda"
	"github.com/ringo-ccl/ringo/reduce"
	"github.com/ringo-ccl/ringo/ring"
	"github.com/ringo-ccl/ringo/trace"
)

// Rank is one rank's device executor (unavailable in this build).
type Rank struct{}

// New returns cuda.ErrNoCUDA: this build has no GPU support.
func New(ordinal int, table uintptr, channels int) (*Rank, error) { return nil, cuda.ErrNoCUDA }

// Launch is unavailable in this build.
func (r *Rank) Launch(p *ring.Plan, seq uint64, in, out uintptr, f *reduce.Func, stream uintptr) error {
	return cuda.ErrNoCUDA
}

// Local is unavailable in this build.
func (r *Rank) Local(in, out uintptr, bytes int64, f *reduce.Func, stream uintptr) error {
	return cuda.ErrNoCUDA
}

// Resident returns cuda.ErrNoCUDA: this build has no GPU support.
func Resident(ordinal int) (int, error) { return 0, cuda.ErrNoCUDA }

// EnableTrace is unavailable in this build.
func (r *Rank) EnableTrace(rec *trace.Recorder, rank int) error { return cuda.ErrNoCUDA }

// Wait is unavailable in this build.
func (r *Rank) Wait(ctx context.Context, stream uintptr) error { return cuda.ErrNoCUDA }

// Abort does nothing in this build.
func (r *Rank) Abort() {}

// Close does nothing in this build.
func (r *Rank) Close() error { return nil }
