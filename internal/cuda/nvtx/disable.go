package nvtx

import "github.com/ringo-ccl/ringo/internal/env"

var envDisable = env.Var{Name: "NVTX_DISABLE", NCCL: true}

// Disabled reports whether NCCL_NVTX_DISABLE=1 (or RINGO_NVTX_DISABLE=1)
// turns ranges off; a value other than 0 or 1 is an error naming it (a
// communicator's init reads it first, and fails).
func Disabled() (bool, error) { return envDisable.Flag() }
