package device

import (
	"fmt"

	"github.com/ringo-ccl/ringo/internal/errs"
	"github.com/ringo-ccl/ringo/kernels"
)

// directFits checks a direct collective of kind and bytes (LaunchDirect's)
// among ranks against the kernels' limits and, staged (how), against a
// staging buffer of stage bytes.
func directFits(kind kernels.DirectKind, bytes int64, how uint64, ranks int, stage int64) error {
	input, most := bytes, int64(kernels.TwoShotMaxBytes) // the input the others read; the largest buffer
	switch kind {
	case kernels.OneShot:
		most = kernels.DirectMaxBytes
	case kernels.TwoShot:
	case kernels.DirectReduceScatter:
		input *= int64(ranks)
		most /= int64(ranks)
	case kernels.DirectAllGather:
		most /= int64(ranks)
	default:
		return fmt.Errorf("%w: no direct collective of kind %d", errs.ErrInvalidArgument, int(kind))
	}
	switch {
	case bytes < 1 || bytes > most:
		return fmt.Errorf("%w: a %v of %d bytes a rank (1…%d)", errs.ErrInvalidArgument, kind, bytes, most)
	case how == kernels.DirectStaged && input > stage:
		return fmt.Errorf("%w: a staged %v of %d bytes, in a staging buffer of %d", errs.ErrInvalidArgument, kind, input, stage)
	}
	return nil
}
