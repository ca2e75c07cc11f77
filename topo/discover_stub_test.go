//go:build !cuda

package topo

import (
	"errors"
	"testing"

	"github.com/ringo-ccl/ringo/internal/cuda"
	"github.com/ringo-ccl/ringo/rdma"
)

// TestDiscoverWithoutCUDA: a build without the cuda tag lists the NICs
// and says why there is no GPU.
func TestDiscoverWithoutCUDA(t *testing.T) {
	tp, err := discover(Sysfs{Root: newFakeSysfs(t).root}, []rdma.Port{{Device: "mlx5_0", Port: 1}})
	if !errors.Is(err, cuda.ErrNoCUDA) {
		t.Errorf("error %v, want cuda.ErrNoCUDA", err)
	}
	if len(tp.GPUs) != 0 || len(tp.NICs) != 2 || tp.NICs[0].Name != "mlx5_0" {
		t.Errorf("topology %+v", tp)
	}
	if err := tp.Validate(); err != nil {
		t.Error(err)
	}
	if _, err := Order(tp); err == nil {
		t.Error("Order without GPUs: no error")
	}
}
