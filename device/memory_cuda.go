//go:build cuda

package device

import (
	"errors"
	"fmt"

	"github.com/ringo-ccl/ringo/internal/cuda"
	"github.com/ringo-ccl/ringo/internal/errs"
)

func open(dev int) (*cuda.Device, error) {
	d, err := cuda.Open(dev)
	if err != nil {
		return nil, fmt.Errorf("%w: %v", errs.ErrInvalidArgument, err)
	}
	return d, nil
}

func alloc(dev int, n int64) (uintptr, error) {
	d, err := open(dev)
	if err != nil {
		return 0, err
	}
	p, err := d.Alloc(max(n, 1))
	return uintptr(p), err
}

func free(dev int, p uintptr) error {
	d, err := open(dev)
	if err != nil {
		return err
	}
	if shared, err := freeShared(p); shared || err != nil {
		return err
	}
	return d.Free(cuda.Ptr(p))
}

func allocShared(dev int, n int64) (uintptr, error) {
	d, err := open(dev)
	if err != nil {
		return 0, err
	}
	p, err := d.AllocShared(n)
	var ce *cuda.Error
	if errors.As(err, &ce) && ce.Name == "CUDA_ERROR_NOT_SUPPORTED" {
		err = fmt.Errorf("%w: %w", errs.ErrNotSupported, err)
	}
	return uintptr(p), err
}

func freeShared(p uintptr) (bool, error) {
	ok, _, _, ord, err := cuda.SharedBounds(cuda.Ptr(p))
	if !ok || err != nil {
		return false, err
	}
	d, err := open(ord)
	if err != nil {
		return true, err
	}
	return true, d.FreeShared(cuda.Ptr(p))
}

func copyHtoD(dev int, dst uintptr, src []byte) error {
	d, err := open(dev)
	if err != nil {
		return err
	}
	return d.CopyHtoD(cuda.Ptr(dst), src)
}

func copyDtoH(dev int, dst []byte, src uintptr) error {
	d, err := open(dev)
	if err != nil {
		return err
	}
	return d.CopyDtoH(dst, cuda.Ptr(src))
}

func newStream(dev int) (uintptr, error) {
	d, err := open(dev)
	if err != nil {
		return 0, err
	}
	s, err := d.NewStream()
	return uintptr(s), err
}

func destroyStream(dev int, h uintptr) error {
	d, err := open(dev)
	if err != nil {
		return err
	}
	return d.DestroyStream(cuda.Stream(h))
}

func syncStream(dev int, h uintptr) error {
	d, err := open(dev)
	if err != nil {
		return err
	}
	return d.Sync(cuda.Stream(h))
}

func streamOwned(dev int, h uintptr) (bool, error) {
	d, err := open(dev)
	if err != nil {
		return false, err
	}
	return d.StreamOwner(cuda.Stream(h))
}

func checkPtr(dev int, p uintptr, n int64) (base, size uintptr, err error) {
	d, err := open(dev)
	if err != nil {
		return 0, 0, err
	}
	kind, ord, b, sz, err := d.PointerInfo(cuda.Ptr(p))
	switch {
	case err != nil:
		return 0, 0, err
	case kind == cuda.MemoryUnknown || kind == cuda.MemoryHost:
		return 0, 0, fmt.Errorf("%#x is host memory, not GPU memory", p)
	case kind != cuda.MemoryDevice:
		return 0, 0, fmt.Errorf("%#x is not GPU memory (memory type %d)", p, kind)
	case ord != dev:
		return 0, 0, fmt.Errorf("%#x is memory of GPU %d, the rank is on GPU %d", p, ord, dev)
	case int64(p-uintptr(b))+n > sz:
		return 0, 0, fmt.Errorf("%d bytes at %#x run past the end of its allocation (%d bytes at %#x)", n, p, sz, uintptr(b))
	}
	return uintptr(b), uintptr(sz), nil
}

func beginCapture(dev int, h uintptr) error {
	d, err := open(dev)
	if err != nil {
		return err
	}
	return d.BeginCapture(cuda.Stream(h), cuda.CaptureRelaxed)
}

func endCapture(dev int, h uintptr) (uintptr, error) {
	d, err := open(dev)
	if err != nil {
		return 0, err
	}
	g, err := d.EndCapture(cuda.Stream(h))
	return uintptr(g), err
}

func launchGraph(dev int, g, h uintptr) error {
	d, err := open(dev)
	if err != nil {
		return err
	}
	return d.LaunchGraph(cuda.Graph(g), cuda.Stream(h))
}

func destroyGraph(dev int, g uintptr) error {
	d, err := open(dev)
	if err != nil {
		return err
	}
	return d.DestroyGraph(cuda.Graph(g))
}

func streamCapturing(dev int, h uintptr) (bool, error) {
	d, err := open(dev)
	if err != nil {
		return false, err
	}
	return d.Capturing(cuda.Stream(h))
}
