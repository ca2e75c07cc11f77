package device

import (
	"testing"

	"github.com/stretchr/testify/assert"

	"github.com/ringo-ccl/ringo/internal/errs"
	"github.com/ringo-ccl/ringo/kernels"
)

// TestDirectFits: each direct kernel's limits — one shot's registers, the
// others' whole buffer — and a staged call's staging buffer, which holds a
// reduce-scatter's whole input; what is refused names the kind and sizes.
func TestDirectFits(t *testing.T) {
	const stage = 4 << 20
	for _, tc := range []struct {
		kind  kernels.DirectKind
		bytes int64
		how   uint64
		err   string
	}{
		{kernels.OneShot, kernels.DirectMaxBytes, kernels.DirectRaw, ""},
		{kernels.OneShot, kernels.DirectMaxBytes + 1, kernels.DirectRaw, "a one-shot all-reduce of 1048577 bytes a rank (1…1048576)"},
		{kernels.TwoShot, 0, kernels.DirectRaw, "a two-shot all-reduce of 0 bytes"},
		{kernels.TwoShot, stage, kernels.DirectStaged, ""},
		{kernels.TwoShot, stage + 1, kernels.DirectStaged, "a staged two-shot all-reduce of 4194305 bytes, in a staging buffer of 4194304"},
		{kernels.DirectReduceScatter, stage / 4, kernels.DirectStaged, ""},
		{kernels.DirectReduceScatter, stage/4 + 1, kernels.DirectStaged, "a staged direct reduce-scatter of 4194308 bytes"},
		{kernels.DirectReduceScatter, stage/4 + 1, kernels.DirectWindow, ""},
		{kernels.DirectAllGather, kernels.TwoShotMaxBytes / 4, kernels.DirectRaw, ""},
		{kernels.DirectAllGather, kernels.TwoShotMaxBytes/4 + 1, kernels.DirectRaw, "a direct all-gather of 4194305 bytes a rank (1…4194304)"},
		{kernels.NotDirect, 8, kernels.DirectRaw, "no direct collective of kind 0"},
	} {
		err := directFits(tc.kind, tc.bytes, tc.how, 4, stage)
		if tc.err == "" {
			assert.NoError(t, err, "%v of %d", tc.kind, tc.bytes)
			continue
		}
		assert.ErrorIs(t, err, errs.ErrInvalidArgument, "%v of %d", tc.kind, tc.bytes)
		assert.ErrorContains(t, err, tc.err)
	}
}
