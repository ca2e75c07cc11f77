//go:build !cuda

package device

import (
	"context"

	"github.com/ringo-ccl/ringo/internal/cuda"
	"github.com/ringo-ccl/ringo/reduce"
	"github.com/ringo-ccl/ringo/ring"
	"github.com/ringo-ccl/ringo/trace"
)

type rankState struct{}

func newRank(int, uintptr, int) (*Rank, error) { return nil, cuda.ErrNoCUDA }

func residentBlocks(int) (int, error) { return 0, cuda.ErrNoCUDA }

func (r *Rank) launchPlan(*ring.Plan, uint64, uintptr, uintptr, *reduce.Func, uintptr) error {
	return cuda.ErrNoCUDA
}

func (r *Rank) local(uintptr, uintptr, int64, *reduce.Func, uintptr) error { return cuda.ErrNoCUDA }

func (r *Rank) enableTrace(*trace.Recorder, int) error { return cuda.ErrNoCUDA }

func (r *Rank) wait(context.Context, uintptr) error { return cuda.ErrNoCUDA }

func (r *Rank) abort() {}

func (r *Rank) close() error { return nil }
