//go:build cuda

package cuda

/*
#include "helpers.h"
*/
import "C"

import "unsafe"

// Graph is an instantiated CUDA graph (CUgraphExec).
type Graph uintptr

// BeginCapture starts capturing the work enqueued on s (global mode, as
// PyTorch does).
func (d *Device) BeginCapture(s Stream) error {
	return d.Do(func() error {
		return check("begin capture", C.cuStreamBeginCapture(C.ringoStream(C.uintptr_t(s)), C.CU_STREAM_CAPTURE_MODE_GLOBAL))
	})
}

// EndCapture stops capturing s and instantiates what was captured.
func (d *Device) EndCapture(s Stream) (Graph, error) {
	var g Graph
	err := d.Do(func() error {
		var graph C.CUgraph
		if err := check("end capture", C.cuStreamEndCapture(C.ringoStream(C.uintptr_t(s)), &graph)); err != nil {
			return err
		}
		defer C.cuGraphDestroy(graph)
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
