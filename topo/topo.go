package topo

import (
	"fmt"
	"math"

	"github.com/ringo-ccl/ringo/internal/errs"
)

//go:generate go run golang.org/x/tools/cmd/stringer@v0.52.0 -type=LinkKind,PathKind,NICKind -linecomment -output=enums_string.go

// Topology is one host's GPUs, the links between them and its NICs.
type Topology struct {
	Host  string   `json:"host,omitempty"`
	GPUs  []GPU    `json:"gpus"`
	Links [][]Link `json:"links"` // Links[i][j]: from GPUs[i] to GPUs[j]
	NICs  []NIC    `json:"nics"`
	Notes []string `json:"notes,omitempty"` // what could not be probed, and why
}

// GPU is one GPU as the driver and sysfs describe it.
type GPU struct {
	Index   int     `json:"index"` // CUDA ordinal
	Name    string  `json:"name"`
	UUID    string  `json:"uuid,omitempty"`
	CC      string  `json:"cc,omitempty"` // compute capability, "9.0"
	PCI     PCI     `json:"pci"`
	PCIeGBs float64 `json:"pcie_gbs,omitempty"` // the GPU's own PCIe link, per direction; 0 when unknown
}

// PCI places a device on the PCI tree.
type PCI struct {
	BusID string `json:"bus_id,omitempty"` // "0000:19:00.0" (sysfs's form)
	Path  string `json:"path,omitempty"`   // its sysfs path under /sys/devices: "/pci0000:17/0000:17:01.0/0000:19:00.0"; "" when unknown
	NUMA  int    `json:"numa"`             // NUMA node; -1 when the machine has none or it is unknown
	CPUs  string `json:"cpus,omitempty"`   // local CPUs as a kernel list, "0-47,96-143"
}

// LinkKind says how one GPU reaches another's memory.
type LinkKind uint8

const (
	Self   LinkKind = iota // self
	NVLink                 // nvlink
	PCIe                   // pcie
	None                   // none
	numLinkKinds
)

// Link is the connection from one GPU to another.
type Link struct {
	Kind         LinkKind `json:"kind"`
	NVLinks      int      `json:"nvlinks,omitempty"`       // NVLink: the links between the two (through NVSwitch: the fewer of the two GPUs'); 0 when not reported
	BandwidthGBs float64  `json:"bandwidth_gbs,omitempty"` // per direction; 0 when unknown
}

// PathKind is the PCIe distance between two devices, named as nvidia-smi
// names it.
type PathKind uint8

const (
	PathUnknown PathKind = iota // PCI
	PathSelf                    // X
	PathPIX                     // PIX
	PathPXB                     // PXB
	PathPHB                     // PHB
	PathNODE                    // NODE
	PathSYS                     // SYS
	numPathKinds
)

// NICKind says what a NIC is.
type NICKind uint8

const (
	RDMA   NICKind = iota // rdma
	Netdev                // netdev
	numNICKinds
)

// NIC is an RDMA device (with its ports) or a physical network interface
// that is not one.
type NIC struct {
	Name   string    `json:"name"` // "mlx5_0", "eth0"
	Kind   NICKind   `json:"kind"`
	Netdev string    `json:"netdev,omitempty"` // an RDMA device's network interface, if any
	PCI    PCI       `json:"pci"`
	Ports  []NICPort `json:"ports,omitempty"`
}

// NICPort is one port of a NIC (a network interface has one, numbered 1).
type NICPort struct {
	Port      int     `json:"port"`
	State     string  `json:"state,omitempty"`      // "ACTIVE", "DOWN", "up"
	RateGbps  float64 `json:"rate_gbps,omitempty"`  // 0 when unknown or down
	LinkLayer string  `json:"link_layer,omitempty"` // "InfiniBand", "Ethernet"
}

// Validate checks that t is well formed: one row and column of Links per
// GPU, Self exactly on the diagonal, no negative link counts or
// bandwidths, distinct GPU indices. Its errors wrap errs.ErrInvalidArgument.
func (t *Topology) Validate() error {
	n := len(t.GPUs)
	if len(t.Links) != n {
		return invalid("%d GPUs but %d rows of links", n, len(t.Links))
	}
	seen := map[int]bool{}
	for i, g := range t.GPUs {
		if seen[g.Index] {
			return invalid("GPU index %d appears twice", g.Index)
		}
		seen[g.Index] = true
		if len(t.Links[i]) != n {
			return invalid("GPU %d's row of links has %d entries, want %d", g.Index, len(t.Links[i]), n)
		}
		for j, l := range t.Links[i] {
			if err := l.validate(i == j); err != nil {
				return invalid("link GPU%d → GPU%d: %v", i, j, err)
			}
		}
	}
	return nil
}

func (l Link) validate(self bool) error {
	switch {
	case l.Kind >= numLinkKinds:
		return fmt.Errorf("kind %d is not a link kind", l.Kind)
	case self != (l.Kind == Self):
		return fmt.Errorf("kind %v off the diagonal, or another kind on it", l.Kind)
	case l.NVLinks < 0 || l.NVLinks > 0 && l.Kind != NVLink:
		return fmt.Errorf("%d NVLinks on a %v link", l.NVLinks, l.Kind)
	case !(l.BandwidthGBs >= 0) || math.IsInf(l.BandwidthGBs, 0):
		return fmt.Errorf("bandwidth %v GB/s", l.BandwidthGBs)
	}
	return nil
}

func invalid(format string, a ...any) error {
	return fmt.Errorf("topo: %w: %s", errs.ErrInvalidArgument, fmt.Sprintf(format, a...))
}
