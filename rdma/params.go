package rdma

import "github.com/ringo-ccl/ringo/internal/env"

var (
	envGIDIndex   = env.Var{Name: "IB_GID_INDEX", NCCL: true}
	envIBTimeout  = env.Var{Name: "IB_TIMEOUT", NCCL: true}
	envIBRetryCnt = env.Var{Name: "IB_RETRY_CNT", NCCL: true}
	envIBSL       = env.Var{Name: "IB_SL", NCCL: true}
	envIBTC       = env.Var{Name: "IB_TC", NCCL: true}
)

// Params are the verbs settings the environment gives, by NCCL's names.
type Params struct {
	GIDIndex int   // NCCL_IB_GID_INDEX; -1 chooses (PickGID)
	Timeout  uint8 // NCCL_IB_TIMEOUT
	RetryCnt uint8 // NCCL_IB_RETRY_CNT
	SL, TC   uint8 // NCCL_IB_SL, NCCL_IB_TC
}

// ParamsFromEnv reads NCCL_IB_GID_INDEX (-1…65535, default -1: choose),
// NCCL_IB_TIMEOUT (1…31, 20), NCCL_IB_RETRY_CNT (0…7, 7), NCCL_IB_SL
// (0…15) and NCCL_IB_TC (0…255), -1 or unset being 0 for the last two as
// in NCCL. NCCL hands them to the verbs unchecked; a value outside is an
// error naming it.
func ParamsFromEnv() (Params, error) {
	p := Params{}
	gid, err := envGIDIndex.Int(-1, -1, 1<<16-1)
	if err != nil {
		return Params{}, err
	}
	p.GIDIndex = gid
	for _, f := range []struct {
		to          *uint8
		v           env.Var
		def, lo, hi int
	}{
		{&p.Timeout, envIBTimeout, 20, 1, 31},
		{&p.RetryCnt, envIBRetryCnt, 7, 0, 7},
		{&p.SL, envIBSL, 0, -1, 15},
		{&p.TC, envIBTC, 0, -1, 255},
	} {
		n, err := f.v.Int(f.def, f.lo, f.hi)
		if err != nil {
			return Params{}, err
		}
		*f.to = uint8(max(n, 0))
	}
	return p, nil
}
