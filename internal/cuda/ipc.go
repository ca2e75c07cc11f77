//go:build cuda

package cuda

/*
#include "helpers.h"
#include <string.h>
*/
import "C"

import (
	"fmt"
	"unsafe"
)

// IPCHandleBytes is the size of a CUDA IPC memory handle.
const IPCHandleBytes = C.CU_IPC_HANDLE_SIZE

// IPCHandle names device memory for another process (cuIpcGetMemHandle).
type IPCHandle [IPCHandleBytes]byte

// ExportIPC returns the handle of the allocation at p, which another
// process opens with OpenIPC.
func (d *Device) ExportIPC(p Ptr) (IPCHandle, error) {
	var h IPCHandle
	err := d.Do(func() error {
		var ch C.CUipcMemHandle
		if err := check("export memory to another process", C.cuIpcGetMemHandle(&ch, C.CUdeviceptr(p))); err != nil {
			return err
		}
		C.memcpy(unsafe.Pointer(&h[0]), unsafe.Pointer(&ch), C.size_t(len(h)))
		return nil
	})
	return h, err
}

// OpenIPC maps memory another process exported into d's context, enabling
// peer access lazily, and returns its address here.
func (d *Device) OpenIPC(h IPCHandle) (Ptr, error) {
	var p Ptr
	err := d.Do(func() error {
		var ch C.CUipcMemHandle
		C.memcpy(unsafe.Pointer(&ch), unsafe.Pointer(&h[0]), C.size_t(len(h)))
		var dp C.CUdeviceptr
		if err := check("open another process's memory", C.cuIpcOpenMemHandle(&dp, ch, C.CU_IPC_MEM_LAZY_ENABLE_PEER_ACCESS)); err != nil {
			return err
		}
		p = Ptr(dp)
		return nil
	})
	return p, held(&live.ipc, err, 1)
}

// CloseIPC unmaps memory from OpenIPC.
func (d *Device) CloseIPC(p Ptr) error {
	return held(&live.ipc, d.Do(func() error { return check("close another process's memory", C.cuIpcCloseMemHandle(C.CUdeviceptr(p))) }), -1)
}

// RegisterHost pins host memory mem (page aligned: an mmap'd shared
// segment) and maps it for d's kernels; it returns the device address.
func (d *Device) RegisterHost(mem []byte) (Ptr, error) {
	var p Ptr
	err := d.Do(func() error {
		if len(mem) == 0 {
			return fmt.Errorf("cuda: registering no memory")
		}
		hp := unsafe.Pointer(&mem[0])
		if err := check("register host memory", C.cuMemHostRegister(hp, C.size_t(len(mem)), C.CU_MEMHOSTREGISTER_DEVICEMAP|C.CU_MEMHOSTREGISTER_PORTABLE)); err != nil {
			return err
		}
		var dp C.CUdeviceptr
		if err := check("map registered host memory", C.cuMemHostGetDevicePointer(&dp, hp, 0)); err != nil {
			C.cuMemHostUnregister(hp)
			return err
		}
		p = Ptr(dp)
		return nil
	})
	return p, held(&live.registered, err, 1)
}

// UnregisterHost undoes RegisterHost.
func (d *Device) UnregisterHost(mem []byte) error {
	return held(&live.registered, d.Do(func() error { return check("unregister host memory", C.cuMemHostUnregister(unsafe.Pointer(&mem[0]))) }), -1)
}
