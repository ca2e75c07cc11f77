//go:build cuda

package cuda

/*
#cgo LDFLAGS: -ldl
#include <stdlib.h>
#include "helpers.h"
#include "nvml.h"
*/
import "C"

import (
	"errors"
	"fmt"
	"sync"
	"unsafe"
)

// PCIBusID returns the GPU's PCI address as the driver writes it, e.g.
// "0000:19:00.0".
func (d *Device) PCIBusID() (string, error) {
	var buf [32]C.char
	if err := check(fmt.Sprintf("PCI bus id of GPU %d", d.Ordinal), C.cuDeviceGetPCIBusId(&buf[0], C.int(len(buf)), C.CUdevice(d.dev))); err != nil {
		return "", err
	}
	return C.GoString(&buf[0]), nil
}

// ErrNoNVML is wrapped by NVLinks when NVML (libnvidia-ml.so.1) cannot be
// loaded or initialised: NVLink details are then not reported.
var ErrNoNVML = errors.New("NVML is not available")

// NVLink is one active NVLink link of a GPU, as NVML reports it.
type NVLink struct {
	Link       int    // the link's number on its GPU
	Version    int    // NVML's NVLink version code; 0 when not reported
	Remote     string // PCI address of the other end, as NVML writes it ("00000000:1A:00.0"); "" when not reported
	RemoteType int    // NVML's type of the other end: 0 GPU, 1 IBM NPU, 2 NVSwitch, 255 not reported
}

// maxNVLinks bounds the links asked about; NVML answers a link past a GPU's
// last with an error, which ends the walk.
const maxNVLinks = 32

var (
	nvmlOnce sync.Once
	nvmlErr  error

	nvlinkMu sync.Mutex
	nvlinks  = map[string][]NVLink{} // by bus id; guarded by nvlinkMu
)

func openNVML() error {
	nvmlOnce.Do(func() {
		var msg [256]C.char
		if C.ringoNvmlOpen(&msg[0], C.size_t(len(msg))) != 0 {
			nvmlErr = fmt.Errorf("%w: %s", ErrNoNVML, C.GoString(&msg[0]))
		}
	})
	return nvmlErr
}

// NVLinks returns the active NVLink links of the GPU at PCI address busID
// (as PCIBusID returns it). NVML is loaded on first use; an error wraps
// ErrNoNVML when it cannot be. A GPU without NVLink has none (nil, nil).
// Answers are cached; NVLinks may be called from any goroutine.
func NVLinks(busID string) ([]NVLink, error) {
	if err := openNVML(); err != nil {
		return nil, err
	}
	nvlinkMu.Lock()
	defer nvlinkMu.Unlock()
	if l, ok := nvlinks[busID]; ok {
		return l, nil
	}
	cbus := C.CString(busID)
	defer C.free(unsafe.Pointer(cbus))
	var out []NVLink
	for link := range maxNVLinks {
		var active, remoteType C.int
		var version C.uint
		var remote [32]C.char
		r := C.ringoNvmlLink(cbus, C.uint(link), &active, &version, &remote[0], C.size_t(len(remote)), &remoteType)
		if r != 0 {
			if link == 0 && len(out) == 0 && r != nvmlNotSupported && r != nvmlInvalidArgument {
				return nil, fmt.Errorf("NVML: NVLink 0 of GPU %s: %s", busID, C.GoString(C.ringoNvmlErrorString(r)))
			}
			break
		}
		if active != 0 {
			out = append(out, NVLink{Link: link, Version: int(version), Remote: C.GoString(&remote[0]), RemoteType: int(remoteType)})
		}
	}
	nvlinks[busID] = out
	return out, nil
}

// NVML statuses that mean "no such link" rather than a failure.
const (
	nvmlInvalidArgument = 2
	nvmlNotSupported    = 3
)
