//go:build cuda

package cuda

/*
#include "helpers.h"
*/
import "C"

import (
	"fmt"
	"unsafe"

	"gorgonia.org/cu"
)

// Func is a kernel of ringo's module loaded into one device.
type Func struct {
	name string
	fn   C.CUfunction
}

// Name returns the kernel's name.
func (f Func) Name() string { return f.name }

// LoadModule loads a fatbin image into d's context. It is loaded once per
// device; later calls are no-ops.
func (d *Device) LoadModule(image []byte) error {
	d.mu.Lock()
	defer d.mu.Unlock()
	if d.mod != nil {
		return nil
	}
	return d.Do(func() error {
		m, err := cu.LoadFatBinary(string(image))
		if err != nil {
			return wrap(fmt.Sprintf("load ringo's kernels into GPU %d", d.Ordinal), err)
		}
		d.mod = &m
		return nil
	})
}

// Func returns the kernel name of the loaded module.
func (d *Device) Func(name string) (Func, error) {
	d.mu.Lock()
	defer d.mu.Unlock()
	if f, ok := d.funcs[name]; ok {
		return f, nil
	}
	if d.mod == nil {
		return Func{}, fmt.Errorf("cuda: GPU %d has no module loaded", d.Ordinal)
	}
	var f Func
	err := d.Do(func() error {
		fn, err := d.mod.Function(name)
		if err != nil {
			return wrap("find kernel "+name, err)
		}
		// cu.Function holds the CUfunction as its only field.
		f = Func{name: name, fn: *(*C.CUfunction)(unsafe.Pointer(&fn))}
		return nil
	})
	if err == nil {
		d.funcs[name] = f
	}
	return f, err
}

// MaxArgs is the most kernel parameters Launch passes.
const MaxArgs = 16

// Launch enqueues f on s with grid blocks of block threads; every kernel
// parameter is 8 bytes. It is one cgo crossing.
func (d *Device) Launch(f Func, grid, block int, s Stream, args *[MaxArgs]uint64, nargs int) error {
	return d.Do(func() error {
		r := C.ringoLaunch(f.fn, C.uint(grid), C.uint(block), 0, C.uintptr_t(s), (*C.uint64_t)(unsafe.Pointer(&args[0])), C.int(nargs))
		return check("launch "+f.name, r)
	})
}
