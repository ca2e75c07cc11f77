//go:build !cuda

package device

import (
	"context"
	"fmt"

	"github.com/ringo-ccl/ringo/internal/cuda"
	"github.com/ringo-ccl/ringo/internal/errs"
	"github.com/ringo-ccl/ringo/kernels"
	"github.com/ringo-ccl/ringo/reduce"
	"github.com/ringo-ccl/ringo/ring"
	"github.com/ringo-ccl/ringo/trace"
)

type rankState struct{}

func newRank(int, int, bool) (*Rank, error) { return nil, cuda.ErrNoCUDA }

func (r *Rank) setTable(uintptr, *kernels.Table) error { return cuda.ErrNoCUDA }

func residentBlocks(int) (int, error) { return 0, cuda.ErrNoCUDA }

func (r *Rank) launchPlan(*ring.Plan, bool, uint64, uintptr, uintptr, *reduce.Func, uintptr) error {
	return cuda.ErrNoCUDA
}

func (r *Rank) local(uintptr, uintptr, int64, *reduce.Func, uintptr) error { return cuda.ErrNoCUDA }

func (r *Rank) directArea(int64) (uintptr, error) { return 0, cuda.ErrNoCUDA }

func (r *Rank) setDirect(int, []uintptr, []int) error    { return cuda.ErrNoCUDA }
func (r *Rank) directSync() (*kernels.DirectSync, error) { return nil, cuda.ErrNoCUDA }

func (r *Rank) setWindow(int, []uintptr) error { return cuda.ErrNoCUDA }

func (r *Rank) setWindowOf(int, int, uintptr) error { return cuda.ErrNoCUDA }

func (r *Rank) launchDirect(kernels.DirectKind, uintptr, uintptr, int64, *reduce.Func, uint64, uint64, uintptr) error {
	return cuda.ErrNoCUDA
}

func (r *Rank) enableTrace(*trace.Recorder, int) error { return cuda.ErrNoCUDA }

func (r *Rank) wait(context.Context, uintptr) error { return cuda.ErrNoCUDA }

func (r *Rank) abort() {}

func (r *Rank) close() error { return nil }

func noCUDA() error { return fmt.Errorf("%w: %w", errs.ErrNotSupported, cuda.ErrNoCUDA) }

func alloc(int, int64) (uintptr, error)                      { return 0, noCUDA() }
func free(int, uintptr) error                                { return noCUDA() }
func allocShared(int, int64) (uintptr, error)                { return 0, noCUDA() }
func freeShared(uintptr) (bool, error)                       { return false, noCUDA() }
func copyHtoD(int, uintptr, []byte) error                    { return noCUDA() }
func copyDtoH(int, []byte, uintptr) error                    { return noCUDA() }
func newStream(int) (uintptr, error)                         { return 0, noCUDA() }
func destroyStream(int, uintptr) error                       { return noCUDA() }
func syncStream(int, uintptr) error                          { return noCUDA() }
func streamOwned(int, uintptr) (bool, error)                 { return false, noCUDA() }
func beginCapture(int, uintptr) error                        { return noCUDA() }
func endCapture(int, uintptr) (uintptr, error)               { return 0, noCUDA() }
func launchGraph(int, uintptr, uintptr) error                { return noCUDA() }
func destroyGraph(int, uintptr) error                        { return noCUDA() }
func streamCapturing(int, uintptr) (bool, error)             { return false, noCUDA() }
func checkPtr(int, uintptr, int64) (uintptr, uintptr, error) { return 0, 0, noCUDA() }
