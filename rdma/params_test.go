package rdma

import (
	"testing"

	"github.com/ringo-ccl/ringo/internal/errs"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// TestParamsFromEnv: NCCL's defaults; -1 is the default for SL and TC, as
// in NCCL; a value outside what the verbs take is an error naming it.
func TestParamsFromEnv(t *testing.T) {
	p, err := ParamsFromEnv()
	require.NoError(t, err)
	assert.Equal(t, Params{GIDIndex: -1, Timeout: 20, RetryCnt: 7}, p)
	t.Setenv("NCCL_IB_SL", "-1")
	t.Setenv("NCCL_IB_TC", "106")
	t.Setenv("NCCL_IB_GID_INDEX", "3")
	p, err = ParamsFromEnv()
	require.NoError(t, err)
	assert.Equal(t, Params{GIDIndex: 3, Timeout: 20, RetryCnt: 7, TC: 106}, p)
	for _, c := range []struct{ name, value, err string }{
		{"NCCL_IB_GID_INDEX", "70000", "want an integer in [-1, 65535]"},
		{"NCCL_IB_TIMEOUT", "0", "want an integer in [1, 31]"},
		{"NCCL_IB_TIMEOUT", "32", "want an integer in [1, 31]"},
		{"NCCL_IB_RETRY_CNT", "8", "want an integer in [0, 7]"},
		{"NCCL_IB_SL", "16", "want an integer in [-1, 15]"},
		{"NCCL_IB_TC", "256", "want an integer in [-1, 255]"},
		{"RINGO_IB_TC", "low", "want an integer in [-1, 255]"},
	} {
		t.Run(c.name+"="+c.value, func(t *testing.T) {
			t.Setenv(c.name, c.value)
			_, err := ParamsFromEnv()
			assert.ErrorIs(t, err, errs.ErrInvalidArgument)
			assert.ErrorContains(t, err, c.name+`="`+c.value+`": `+c.err)
		})
	}
}
