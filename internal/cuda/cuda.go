//go:build cuda

package cuda

/*
#cgo LDFLAGS: -lcuda
#include "helpers.h"
*/
import "C"

import (
	"fmt"
	"runtime"
	"sync"
	"unsafe"

	_ "github.com/ringo-ccl/ringo/internal/cuda/queues" // before cu's init: the context's hardware queues
	"gorgonia.org/cu"
)

func available() bool {
	n, err := Count()
	return err == nil && n > 0
}

// Error is a CUDA driver error.
type Error struct {
	Op   string
	Code int
	Name string
	Msg  string
}

func (e *Error) Error() string {
	return fmt.Sprintf("cuda: %s: %s (%s)", e.Op, e.Msg, e.Name)
}

func check(op string, r C.CUresult) error {
	if r == C.CUDA_SUCCESS {
		return nil
	}
	return &Error{Op: op, Code: int(r), Name: C.GoString(C.ringoErrorName(r)), Msg: C.GoString(C.ringoErrorString(r))}
}

// wrap names the operation of an error from gorgonia.org/cu.
func wrap(op string, err error) error {
	if err == nil {
		return nil
	}
	return fmt.Errorf("cuda: %s: %w", op, err)
}

// Count returns the number of GPUs the driver sees.
func Count() (int, error) {
	n, err := cu.NumDevices()
	return n, wrap("count devices", err)
}

// Ptr is a device address (CUdeviceptr).
type Ptr uintptr

// Device is one GPU with its primary context.
type Device struct {
	Ordinal int
	dev     cu.Device
	ctx     cu.CUContext

	mu    sync.Mutex // guards mods and funcs
	mods  []module   // in the order they were loaded
	funcs map[string]Func
}

var (
	devMu   sync.Mutex
	devices = map[int]*Device{}
)

// Open returns GPU ordinal, retaining its primary context on first use.
// Devices are never closed: the primary context lives as long as the
// process.
func Open(ordinal int) (*Device, error) {
	devMu.Lock()
	defer devMu.Unlock()
	if d, ok := devices[ordinal]; ok {
		return d, nil
	}
	n, err := Count()
	if err != nil {
		return nil, err
	}
	if ordinal < 0 || ordinal >= n {
		return nil, fmt.Errorf("cuda: GPU %d does not exist (%d GPUs)", ordinal, n)
	}
	dev, err := cu.GetDevice(ordinal)
	if err != nil {
		return nil, wrap(fmt.Sprintf("get GPU %d", ordinal), err)
	}
	ctx, err := dev.RetainPrimaryCtx()
	if err != nil {
		return nil, wrap(fmt.Sprintf("retain GPU %d's primary context", ordinal), err)
	}
	d := &Device{Ordinal: ordinal, dev: dev, ctx: ctx, funcs: map[string]Func{}}
	devices[ordinal] = d
	return d, nil
}

// Do runs f with d's primary context current on the calling goroutine's OS
// thread.
func (d *Device) Do(f func() error) error {
	runtime.LockOSThread()
	defer runtime.UnlockOSThread()
	if err := cu.SetCurrentContext(d.ctx); err != nil {
		return wrap(fmt.Sprintf("make GPU %d's context current", d.Ordinal), err)
	}
	return f()
}

// Name returns the GPU's product name.
func (d *Device) Name() string {
	n, err := d.dev.Name()
	if err != nil {
		return "unknown GPU"
	}
	return n
}

func deviceName(ordinal int) (string, error) {
	d, err := Open(ordinal)
	if err != nil {
		return "", err
	}
	return d.Name(), nil
}

// UUID returns the GPU's UUID, which names it the same in every process
// whatever CUDA_VISIBLE_DEVICES says.
func (d *Device) UUID() string {
	u, err := d.dev.UUID()
	if err != nil {
		return ""
	}
	return u.String()
}

// ByUUID returns the ordinal of the visible GPU with that UUID, or -1.
func ByUUID(uuid string) int {
	n, err := Count()
	if err != nil {
		return -1
	}
	for i := range n {
		if d, err := Open(i); err == nil && d.UUID() == uuid {
			return i
		}
	}
	return -1
}

// ComputeCapability returns the GPU's major and minor compute capability.
func (d *Device) ComputeCapability() (int, int, error) {
	maj, err1 := d.dev.Attribute(cu.ComputeCapabilityMajor)
	min, err2 := d.dev.Attribute(cu.ComputeCapabilityMinor)
	if err1 != nil {
		return 0, 0, wrap("compute capability", err1)
	}
	return maj, min, wrap("compute capability", err2)
}

// SMCount returns the number of multiprocessors.
func (d *Device) SMCount() (int, error) {
	n, err := d.dev.Attribute(cu.MultiprocessorCount)
	return n, wrap("multiprocessor count", err)
}

func freeMemory(ordinal int) (int64, error) {
	d, err := Open(ordinal)
	if err != nil {
		return 0, err
	}
	var free int64
	err = d.Do(func() error {
		var f, total C.size_t
		if err := check(fmt.Sprintf("free memory of GPU %d", ordinal), C.cuMemGetInfo(&f, &total)); err != nil {
			return err
		}
		free = int64(f)
		return nil
	})
	return free, err
}

// Alloc returns n bytes of device memory.
func (d *Device) Alloc(n int64) (Ptr, error) {
	var p Ptr
	err := d.Do(func() error {
		var r C.CUdeviceptr
		if err := check(fmt.Sprintf("allocate %d bytes on GPU %d", n, d.Ordinal), C.cuMemAlloc(&r, C.size_t(n))); err != nil {
			return err
		}
		p = Ptr(r)
		return nil
	})
	return p, held(&live.allocs, err, 1)
}

// Free releases memory from Alloc.
func (d *Device) Free(p Ptr) error {
	return held(&live.allocs, d.Do(func() error { return check("free device memory", C.cuMemFree(C.CUdeviceptr(p))) }), -1)
}

// Memset sets n bytes at p to v, and returns once they are set.
func (d *Device) Memset(p Ptr, v byte, n int64) error {
	return d.Do(func() error {
		if err := check("memset", C.cuMemsetD8(C.CUdeviceptr(p), C.uchar(v), C.size_t(n))); err != nil {
			return err
		}
		return settled("memset")
	})
}

// CopyHtoD copies src to device address dst, and returns once the data is
// there.
func (d *Device) CopyHtoD(dst Ptr, src []byte) error {
	if len(src) == 0 {
		return nil
	}
	return d.Do(func() error {
		if err := check("copy to device", C.cuMemcpyHtoD(C.CUdeviceptr(dst), unsafe.Pointer(&src[0]), C.size_t(len(src)))); err != nil {
			return err
		}
		return settled("copy to device")
	})
}

// settled waits for the legacy default stream. The driver's "synchronous"
// cuMemsetD8, and cuMemcpyHtoD from pageable memory, may return before the
// device memory is written (the copy returns once the data is staged for
// DMA); ringo's kernels run on non-blocking streams, which do not wait for
// the legacy stream, so without this a kernel launched next could read the
// old bytes — as TestGPUAllCollectives caught, a few elements at a time.
func settled(what string) error {
	return check(what+": waiting for the device", C.cuStreamSynchronize(nil))
}

// CopyDtoH copies len(dst) bytes from device address src (synchronously).
func (d *Device) CopyDtoH(dst []byte, src Ptr) error {
	if len(dst) == 0 {
		return nil
	}
	return d.Do(func() error {
		return check("copy from device", C.cuMemcpyDtoH(unsafe.Pointer(&dst[0]), C.CUdeviceptr(src), C.size_t(len(dst))))
	})
}

// CopyDtoD copies n bytes between device addresses (synchronously).
func (d *Device) CopyDtoD(dst, src Ptr, n int64) error {
	return d.Do(func() error {
		return check("copy on device", C.cuMemcpyDtoD(C.CUdeviceptr(dst), C.CUdeviceptr(src), C.size_t(n)))
	})
}

// Synchronize waits for all work on the device.
func (d *Device) Synchronize() error {
	return d.Do(func() error { return check("synchronize", C.cuCtxSynchronize()) })
}
