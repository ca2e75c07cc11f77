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

	ownOnce sync.Once // makes own, the stream of the synchronous copies (sync)
	own     C.CUstream
	ownErr  error

	overlaps bool // Overlaps
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
	if maj, _, err := d.ComputeCapability(); err == nil {
		d.overlaps = maj >= 9 && cu.Version() >= overlapDriver
	}
	devices[ordinal] = d
	return d, nil
}

// overlapDriver is the oldest driver (CUDA 12.3) whose launches may overlap
// their stream predecessor's end, captured into graphs too (Overlaps).
const overlapDriver = 12030

// Overlaps reports whether a kernel launched on d may be placed while the
// kernel before it on its stream ends (CUDA's programmatic dependent
// launch, Order.Overlap): a GPU of compute capability 9.0 or later and a
// driver of CUDA 12.3 or later.
func (d *Device) Overlaps() bool { return d.overlaps }

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

// AllocZeroed is Alloc of n bytes whose first zeroed bytes are set to 0
// before it returns; on failure nothing stays allocated.
func (d *Device) AllocZeroed(n, zeroed int64) (Ptr, error) {
	p, err := d.Alloc(n)
	if err != nil {
		return 0, err
	}
	if err := d.Memset(p, 0, zeroed); err != nil {
		d.Free(p)
		return 0, err
	}
	return p, nil
}

// Free releases memory from Alloc.
func (d *Device) Free(p Ptr) error {
	return held(&live.allocs, d.Do(func() error { return check("free device memory", C.cuMemFree(C.CUdeviceptr(p))) }), -1)
}

// sync enqueues what on d's own stream and waits for that stream alone:
// the synchronous copies and memsets below go through it, never through the
// legacy default stream. Ranks of one process sharing a GPU share its
// context, and a rank that waited for the legacy stream while its peers'
// kernels waited for its next launch never returned: 2 in 8 of ringo
// bench's 4-rank sweeps on one H200 deadlocked so, in a plan's upload
// (BENCHMARKS, issue 20). It runs with d's context current. The stream
// lives as long as the process, as the primary context does.
func (d *Device) sync(what string, enqueue func(C.CUstream) C.CUresult) error {
	d.ownOnce.Do(func() {
		d.ownErr = check("create the device's copy stream", C.cuStreamCreate(&d.own, C.CU_STREAM_NON_BLOCKING))
	})
	if d.ownErr != nil {
		return d.ownErr
	}
	if err := check(what, enqueue(d.own)); err != nil {
		return err
	}
	return check(what+": waiting for the device", C.cuStreamSynchronize(d.own))
}

// Memset sets n bytes at p to v, and returns once they are set.
func (d *Device) Memset(p Ptr, v byte, n int64) error {
	return d.Do(func() error {
		return d.sync("memset", func(s C.CUstream) C.CUresult {
			return C.cuMemsetD8Async(C.CUdeviceptr(p), C.uchar(v), C.size_t(n), s)
		})
	})
}

// CopyHtoD copies src to device address dst, and returns once the data is
// there.
func (d *Device) CopyHtoD(dst Ptr, src []byte) error {
	if len(src) == 0 {
		return nil
	}
	return d.Do(func() error {
		return d.sync("copy to device", func(s C.CUstream) C.CUresult {
			return C.cuMemcpyHtoDAsync(C.CUdeviceptr(dst), unsafe.Pointer(&src[0]), C.size_t(len(src)), s)
		})
	})
}

// CopyDtoH copies len(dst) bytes from device address src (synchronously).
func (d *Device) CopyDtoH(dst []byte, src Ptr) error {
	if len(dst) == 0 {
		return nil
	}
	return d.Do(func() error {
		return d.sync("copy from device", func(s C.CUstream) C.CUresult {
			return C.cuMemcpyDtoHAsync(unsafe.Pointer(&dst[0]), C.CUdeviceptr(src), C.size_t(len(dst)), s)
		})
	})
}

// CopyDtoD copies n bytes between device addresses (synchronously).
func (d *Device) CopyDtoD(dst, src Ptr, n int64) error {
	return d.Do(func() error {
		return d.sync("copy on device", func(s C.CUstream) C.CUresult {
			return C.cuMemcpyDtoDAsync(C.CUdeviceptr(dst), C.CUdeviceptr(src), C.size_t(n), s)
		})
	})
}

// Synchronize waits for all work on the device.
func (d *Device) Synchronize() error {
	return d.Do(func() error { return check("synchronize", C.cuCtxSynchronize()) })
}
