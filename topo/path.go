package topo

import "strings"

// Path returns the PCIe distance between two devices from their sysfs
// paths and NUMA nodes, as nvidia-smi classifies it:
//
//	PIX   through at most one PCIe switch (its upstream and downstream ports)
//	PXB   through several PCIe bridges, not through the host bridge
//	PHB   through a PCIe host bridge (the two hang off one root complex)
//	NODE  between host bridges of one NUMA node
//	SYS   between NUMA nodes (the SMP interconnect: UPI, xGMI)
//
// It returns PathUnknown when either path is not known, PathSelf for the
// same device.
func Path(a, b PCI) PathKind {
	if a.Path == "" || b.Path == "" {
		return PathUnknown
	}
	if a.Path == b.Path {
		return PathSelf
	}
	pa, pb := splitPath(a.Path), splitPath(b.Path)
	if pa[0] != pb[0] { // different root complexes
		if a.NUMA == b.NUMA {
			return PathNODE
		}
		return PathSYS
	}
	k := 0 // components in common, the root complex first
	for k < len(pa) && k < len(pb) && pa[k] == pb[k] {
		k++
	}
	if k == 1 {
		return PathPHB
	}
	// Bridges between the common ancestor and each device: one each is
	// the two downstream ports of one switch.
	if len(pa)-1-k <= 1 && len(pb)-1-k <= 1 {
		return PathPIX
	}
	return PathPXB
}

func splitPath(p string) []string { return strings.Split(strings.Trim(p, "/"), "/") }
