package topo

import (
	"errors"
	"os"

	"github.com/ringo-ccl/ringo/rdma"
)

// ErrNoGPU is wrapped by Discover's error when the driver sees no GPU.
var ErrNoGPU = errors.New("no GPU found")

// Discover describes this machine: its GPUs and the links between them
// (build tag cuda), its NICs (RDMA devices as rdma.Ports lists them, and
// physical network interfaces) and where sysfs places them. What could
// not be probed — NVML missing, a device sysfs does not show — is listed
// in Notes. When no GPU can be listed the topology, NICs only, comes with
// an error wrapping cuda.ErrNoCUDA (a build without the cuda tag) or
// ErrNoGPU. Every call probes afresh, except what package internal/cuda
// and p2p cache for the process.
func Discover() (*Topology, error) { return discover(Sysfs{}, rdma.Ports()) }

func discover(s Sysfs, ports []rdma.Port) (*Topology, error) {
	t := &Topology{GPUs: []GPU{}, Links: [][]Link{}}
	t.Host, _ = os.Hostname()
	nics, err := s.NICs(ports)
	t.NICs = append([]NIC{}, nics...)
	if err != nil {
		t.Notes = append(t.Notes, err.Error())
	}
	return t, discoverGPUs(t, s)
}
