//go:build cuda

package direct

import (
	"context"
	"syscall"
	"time"

	"github.com/ringo-ccl/ringo/device"
	"github.com/ringo-ccl/ringo/internal/cuda"
	"github.com/ringo-ccl/ringo/internal/sys"
)

// The IPC handle's size is CUDA's.
var _ = Handle{Data: cuda.IPCHandle{}}

// NewGPU returns a rank's GPU as Peers uses it: exec's direct all-reduce
// structures, and dev's CUDA IPC and shareable memory. Sync waits at most
// timeout for the GPU, then aborts the rank's kernels (they may wait for
// ranks that are not coming: a window deregistered while still in use).
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

func (g gpu) SetWindowOf(w, q int, addr uintptr) error { return g.exec.SetWindowOf(w, q, addr) }

func (g gpu) Check(p uintptr, n int64) (uintptr, error) {
	base, _, err := device.CheckPtr(g.dev.Ordinal, p, n)
	return base, err
}

func (g gpu) Allocation(p uintptr) (uint64, error) { return g.dev.BufferID(cuda.Ptr(p)) }

// Export exports memory of the virtual memory API (ncclMemAlloc's) by
// lending its file descriptor (sys.Lend) until release; other memory by
// CUDA IPC.
func (g gpu) Export(base uintptr) (Handle, func() error, error) {
	shared, _, _, _, err := cuda.SharedBounds(cuda.Ptr(base))
	if err != nil {
		return Handle{}, nil, err
	}
	if !shared {
		h, err := g.dev.ExportIPC(cuda.Ptr(base))
		return Handle{Data: h}, nil, err
	}
	fd, size, err := cuda.ExportShared(cuda.Ptr(base))
	if err != nil {
		return Handle{}, nil, err
	}
	l, err := sys.Lend(fd)
	if err != nil {
		return Handle{}, nil, err
	}
	return sharedHandle(l.Addr(), size), l.Close, nil
}

func (g gpu) Open(h Handle) (uintptr, error) {
	if !h.Shared {
		p, err := g.dev.OpenIPC(cuda.IPCHandle(h.Data))
		return uintptr(p), err
	}
	a, size := h.lent()
	fd, err := sys.Borrow(context.Background(), a) // bounded by the service's timeout
	if err != nil {
		return 0, err
	}
	defer syscall.Close(fd)
	p, err := g.dev.ImportShared(fd, size)
	return uintptr(p), err
}

func (g gpu) Close(h Handle, p uintptr) error {
	if h.Shared {
		return g.dev.CloseShared(cuda.Ptr(p))
	}
	return g.dev.CloseIPC(cuda.Ptr(p))
}

func (g gpu) Sync() error { return device.SyncBounded(g.dev.Synchronize, g.timeout, g.exec.Abort) }
