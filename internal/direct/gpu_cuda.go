//go:build cuda

package direct

import (
	"time"

	"github.com/ringo-ccl/ringo/device"
	"github.com/ringo-ccl/ringo/internal/cuda"
)

// The IPC handle's size is CUDA's.
var _ Handle = Handle(cuda.IPCHandle{})

// NewGPU returns a rank's GPU as Peers uses it: exec's direct all-reduce
// structures and dev's CUDA IPC. Sync waits at most timeout for the GPU,
// then aborts the rank's kernels (they may wait for ranks that are not
// coming: a window deregistered while still in use).
func NewGPU(dev *cuda.Device, exec *device.Rank, timeout time.Duration) GPU {
	return gpu{dev: dev, exec: exec, timeout: timeout}
}

type gpu struct {
	dev     *cuda.Device
	exec    *device.Rank
	timeout time.Duration
}

func (g gpu) Area(stage int64) (uintptr, error) { return g.exec.DirectArea(stage) }

func (g gpu) SetDirect(rank int, areas []uintptr, order []int) error {
	return g.exec.SetDirect(rank, areas, order)
}

func (g gpu) SetWindow(w int, addrs []uintptr) error { return g.exec.SetWindow(w, addrs) }

func (g gpu) Check(p uintptr, n int64) (uintptr, error) {
	base, _, err := device.CheckPtr(g.dev.Ordinal, p, n)
	return base, err
}

func (g gpu) Allocation(p uintptr) (uint64, error) { return g.dev.BufferID(cuda.Ptr(p)) }

func (g gpu) Export(base uintptr) (Handle, error) {
	h, err := g.dev.ExportIPC(cuda.Ptr(base))
	return Handle(h), err
}

func (g gpu) Open(h Handle) (uintptr, error) {
	p, err := g.dev.OpenIPC(cuda.IPCHandle(h))
	return uintptr(p), err
}

func (g gpu) Close(p uintptr) error { return g.dev.CloseIPC(cuda.Ptr(p)) }

func (g gpu) Sync() error { return device.SyncBounded(g.dev.Synchronize, g.timeout, g.exec.Abort) }
