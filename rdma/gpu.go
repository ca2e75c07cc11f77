package rdma

import (
	"errors"
	"fmt"
	"strings"
)

// Strategy is how a GPU buffer is made reachable by the NIC.
type Strategy int

const (
	// Dmabuf: ibv_reg_dmabuf_mr on a dma-buf exported by the CUDA driver
	// (cuMemGetHandleForAddressRange); needs a kernel and NIC driver with
	// dma-buf support, no extra module.
	Dmabuf Strategy = iota + 1
	// PeerMem: ibv_reg_mr on the device address, which works when the
	// nvidia-peermem module is loaded.
	PeerMem
	// HostStaging: no GPUDirect RDMA; data goes through registered host
	// memory, copied to and from the GPU by the executor.
	HostStaging
)

func (s Strategy) String() string {
	switch s {
	case Dmabuf:
		return "dma-buf"
	case PeerMem:
		return "nvidia-peermem"
	case HostStaging:
		return "host staging"
	}
	return fmt.Sprintf("strategy %d", int(s))
}

// DmabufExport is a dma-buf covering a GPU buffer: the buffer starts Offset
// bytes into FD. Close releases the fd; the registration keeps its own
// reference.
type DmabufExport struct {
	FD     int
	Offset uint64
	Close  func() error
}

// ExportFunc exports the GPU buffer [addr, addr+n) as a dma-buf. The CUDA
// side supplies it (cuMemGetHandleForAddressRange); an error wrapping
// errs.ErrNotSupported means the driver cannot.
type ExportFunc func(addr uint64, n int) (DmabufExport, error)

// GPURegistration is the outcome of RegisterGPU: the strategy chosen, the
// region (nil for HostStaging: the caller registers its staging buffer)
// and why, naming each strategy tried and how it failed.
type GPURegistration struct {
	Strategy Strategy
	MR       MR
	Why      string
}

// RegisterGPU registers the GPU buffer [addr, addr+n) for RDMA, trying in
// NCCL's order: a dma-buf registration when export is non-nil and
// succeeds, else ibv_reg_mr on the device address (nvidia-peermem), else
// host staging. It returns an error only for an invalid request; the
// failure of every GPUDirect path is the HostStaging outcome, with Why
// saying what failed.
func RegisterGPU(dev Device, addr uint64, n int, access Access, export ExportFunc) (GPURegistration, error) {
	if n <= 0 || addr == 0 {
		return GPURegistration{}, fmt.Errorf("register GPU memory %#x+%d on %s: empty or null buffer", addr, n, dev.Name())
	}
	var why []string
	if export == nil {
		why = append(why, "dma-buf: no exporter supplied")
	} else if x, err := export(addr, n); err != nil {
		why = append(why, "dma-buf: export: "+err.Error())
	} else {
		mr, err := dev.RegDmabuf(x.FD, x.Offset, n, addr, access)
		var cerr error
		if x.Close != nil {
			cerr = x.Close()
		}
		if err == nil {
			reason := "ibv_reg_dmabuf_mr succeeded"
			if cerr != nil {
				reason += "; closing the dma-buf fd failed: " + cerr.Error()
			}
			return GPURegistration{Strategy: Dmabuf, MR: mr, Why: reason}, nil
		}
		why = append(why, "dma-buf: "+errors.Join(err, cerr).Error())
	}
	mr, err := dev.RegAddr(addr, n, access)
	if err == nil {
		return GPURegistration{Strategy: PeerMem, MR: mr, Why: strings.Join(append(why, "nvidia-peermem: ibv_reg_mr on the device address succeeded"), "; ")}, nil
	}
	why = append(why, "nvidia-peermem: "+err.Error())
	return GPURegistration{Strategy: HostStaging, Why: strings.Join(why, "; ")}, nil
}
