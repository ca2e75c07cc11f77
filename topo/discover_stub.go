//go:build !cuda

package topo

import (
	"fmt"

	"github.com/ringo-ccl/ringo/internal/cuda"
)

// discoverGPUs cannot list GPUs in a build without the cuda tag.
func discoverGPUs(*Topology, Sysfs) error {
	return fmt.Errorf("topo: listing GPUs: %w", cuda.ErrNoCUDA)
}
