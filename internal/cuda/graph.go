//go:build cuda

package cuda

/*
#include "helpers.h"
*/
import "C"

import (
	"errors"
	"unsafe"
)

// Graph is an instantiated CUDA graph (CUgraphExec).
type Graph uintptr

// CaptureMode is how a capture treats CUDA calls that could disturb it
// (CUstreamCaptureMode).
type CaptureMode int

const (
	// CaptureGlobal refuses such calls on every thread while the capture
	// lasts (PyTorch's default).
	CaptureGlobal CaptureMode = C.CU_STREAM_CAPTURE_MODE_GLOBAL
	// CaptureRelaxed refuses none: for Go, whose goroutines — other ranks
	// among them — share OS threads with the capturing one.
	CaptureRelaxed CaptureMode = C.CU_STREAM_CAPTURE_MODE_RELAXED
)

// BeginCapture starts capturing the work enqueued on s.
func (d *Device) BeginCapture(s Stream, mode CaptureMode) error {
	return d.Do(func() error {
		return check("begin capture", C.cuStreamBeginCapture(C.ringoStream(C.uintptr_t(s)), C.CUstreamCaptureMode(mode)))
	})
}

// EndCapture stops capturing s and instantiates what was captured. The
// instantiation runs with this thread's capture mode relaxed: another
// stream's capture in global mode (another rank of the process capturing)
// would refuse it otherwise.
func (d *Device) EndCapture(s Stream) (Graph, error) {
	var g Graph
	err := d.Do(func() error {
		var graph C.CUgraph
		if err := check("end capture", C.cuStreamEndCapture(C.ringoStream(C.uintptr_t(s)), &graph)); err != nil {
			return err
		}
		if graph == nil {
			return errors.New("cuda: end capture: no graph was captured")
		}
		defer C.cuGraphDestroy(graph)
		var prev C.int
		if err := check("relax stream capture", C.ringoRelaxCapture(1, &prev)); err != nil {
			return err
		}
		defer C.ringoRelaxCapture(0, &prev)
		var exec C.CUgraphExec
		if err := check("instantiate graph", C.cuGraphInstantiateWithFlags(&exec, graph, 0)); err != nil {
			return err
		}
		g = Graph(uintptr(unsafe.Pointer(exec)))
		return nil
	})
	return g, err
}

// LaunchGraph enqueues a replay of g on s.
func (d *Device) LaunchGraph(g Graph, s Stream) error {
	return d.Do(func() error {
		return check("launch graph", C.cuGraphLaunch(C.ringoGraphExec(C.uintptr_t(g)), C.ringoStream(C.uintptr_t(s))))
	})
}

// DestroyGraph releases g.
func (d *Device) DestroyGraph(g Graph) error {
	return d.Do(func() error { return check("destroy graph", C.cuGraphExecDestroy(C.ringoGraphExec(C.uintptr_t(g)))) })
}
