//go:build cuda

package cuda

/*
#include "helpers.h"
*/
import "C"

import (
	"errors"
	"fmt"
	"runtime"
	"unsafe"

	"gorgonia.org/cu"
)

// Func is a kernel of ringo's modules loaded into one device.
type Func struct {
	name string
	fn   C.CUfunction
}

// Name returns the kernel's name.
func (f Func) Name() string { return f.name }

// module is one loaded module and the name it was loaded under.
type module struct {
	name string
	mod  cu.Module
}

// LoadModule loads the fatbin image of module name into d's context, once
// per device: loading a name again is a no-op. Func finds a kernel in any
// loaded module.
func (d *Device) LoadModule(name string, image []byte) error {
	d.mu.Lock()
	defer d.mu.Unlock()
	for _, m := range d.mods {
		if m.name == name {
			return nil
		}
	}
	return d.Do(func() error {
		m, err := cu.LoadFatBinary(string(image))
		if err != nil {
			return wrap(fmt.Sprintf("load ringo's kernels %s into GPU %d", name, d.Ordinal), err)
		}
		d.mods = append(d.mods, module{name: name, mod: m})
		return nil
	})
}

// Func returns the kernel name, from whichever loaded module has it,
// loaded into the GPU.
func (d *Device) Func(name string) (Func, error) {
	d.mu.Lock()
	defer d.mu.Unlock()
	if f, ok := d.funcs[name]; ok {
		return f, nil
	}
	if len(d.mods) == 0 {
		return Func{}, fmt.Errorf("cuda: GPU %d has no module loaded", d.Ordinal)
	}
	var f Func
	err := d.Do(func() error {
		for _, m := range d.mods {
			fn, err := m.mod.Function(name)
			if errors.Is(err, cu.NotFound) {
				continue
			}
			if err != nil {
				return wrap("find kernel "+name+" in "+m.name, err)
			}
			// Under CUDA's lazy loading (the default since CUDA 12.2)
			// a kernel's code is loaded at its first use; asking an
			// attribute loads it now.
			if _, err := fn.Attribute(cu.NumRegs); err != nil {
				return wrap("load kernel "+name+" from "+m.name, err)
			}
			// cu.Function holds the CUfunction as its only field.
			f = Func{name: name, fn: *(*C.CUfunction)(unsafe.Pointer(&fn))}
			return nil
		}
		return wrap(fmt.Sprintf("find kernel %s in GPU %d's %d modules", name, d.Ordinal, len(d.mods)), cu.NotFound)
	})
	if err == nil {
		d.funcs[name] = f
	}
	return f, err
}

// MaxArgs is the most kernel parameters Launch passes.
const MaxArgs = 16

// Launch enqueues f on s with grid blocks of block threads; every kernel
// parameter is 8 bytes. It is one cgo crossing: the context is made
// current in C.
func (d *Device) Launch(f Func, grid, block int, s Stream, args *[MaxArgs]uint64, nargs int) error {
	_, _, err := d.launch(f, grid, block, s, args, nargs, false, 0, Order{})
	return err
}

// LaunchWatched is Launch that also reports whether s is being captured
// into a graph (the kernel then runs whenever the graph is launched) and,
// when it is not, records done (a marker event; 0 for none) after the
// kernel, in the same cgo crossing; marked reports that record. The
// capture query costs host time on every call: Launch is the plain one.
// With o.Mark, it orders the kernel as Order says.
func (d *Device) LaunchWatched(f Func, grid, block int, s Stream, args *[MaxArgs]uint64, nargs int, done Event, o Order) (captured, marked bool, err error) {
	return d.launch(f, grid, block, s, args, nargs, true, done, o)
}

// Order keeps the kernels of one owner (a rank) that go on several
// streams in the order they were launched: before a launch, its stream
// waits for After's latest record (0: none), and Mark is recorded after
// it, unless the stream is being captured into a graph (whose replays
// keep their own order).
type Order struct {
	Mark, After Event
	// Overlap launches the kernel with programmatic stream serialization
	// (Device.Overlaps): its blocks may be placed while the kernel before
	// it on the stream ends, so the kernel must wait for that one itself
	// before it touches memory (kernels/src/common.cuh's
	// ringoAwaitPrevious). Ignored where the device cannot.
	Overlap bool
}

func (d *Device) launch(f Func, grid, block int, s Stream, args *[MaxArgs]uint64, nargs int, watch bool, done Event, o Order) (captured, marked bool, err error) {
	var w C.int
	if watch {
		w = 1
	}
	var overlap C.int
	if o.Overlap && d.overlaps {
		overlap = 1
	}
	runtime.LockOSThread()
	out := C.ringoLaunch(d.cctx(), f.fn, C.uint(grid), C.uint(block), 0, C.uintptr_t(s), (*C.uint64_t)(unsafe.Pointer(&args[0])), C.int(nargs),
		w, C.uintptr_t(done), C.uintptr_t(o.Mark), C.uintptr_t(o.After), overlap)
	runtime.UnlockOSThread()
	if r := C.CUresult(uint32(out)); r != C.CUDA_SUCCESS {
		return false, false, check("launch "+f.name, r) // named only on failure: no allocation per launch
	}
	return out&C.RINGO_LAUNCH_CAPTURED != 0, out&C.RINGO_LAUNCH_MARKED != 0, nil
}

// cctx returns the primary context as a C handle (cu.CUContext holds it as
// its only field).
func (d *Device) cctx() C.CUcontext { return *(*C.CUcontext)(unsafe.Pointer(&d.ctx)) }

// Uncaptured runs f with this thread's stream capture mode relaxed, so that
// synchronous work in f (an allocation, a copy) is allowed, and not
// recorded, while some stream is being captured into a CUDA graph.
func (d *Device) Uncaptured(f func() error) error {
	return d.Do(func() error {
		var prev C.int
		if err := check("relax stream capture", C.ringoRelaxCapture(1, &prev)); err != nil {
			return err
		}
		err := f()
		if rerr := check("restore stream capture", C.ringoRelaxCapture(0, &prev)); err == nil {
			err = rerr
		}
		return err
	})
}
