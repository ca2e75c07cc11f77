//go:build cuda

package topo

import (
	"errors"
	"fmt"

	"github.com/ringo-ccl/ringo/internal/cuda"
	"github.com/ringo-ccl/ringo/p2p"
)

// NVML's types of an NVLink's other end.
const (
	nvmlRemoteGPU    = 0
	nvmlRemoteSwitch = 2
)

// discoverGPUs fills t's GPUs and links from the driver, NVML and sysfs.
func discoverGPUs(t *Topology, s Sysfs) error {
	n, err := cuda.Count()
	if err != nil {
		return fmt.Errorf("topo: %w", err)
	}
	if n == 0 {
		return fmt.Errorf("topo: %w", ErrNoGPU)
	}
	note := func(format string, a ...any) { t.Notes = append(t.Notes, fmt.Sprintf(format, a...)) }
	ports := make([][]nvlinkPort, n)
	nvmlMissing := false
	for i := range n {
		d, err := cuda.Open(i)
		if err != nil {
			return fmt.Errorf("topo: %w", err)
		}
		g := GPU{Index: i, Name: d.Name(), UUID: d.UUID(), PCI: PCI{NUMA: -1}}
		if major, minor, err := d.ComputeCapability(); err == nil {
			g.CC = fmt.Sprintf("%d.%d", major, minor)
		}
		bus, err := d.PCIBusID()
		if err != nil {
			note("GPU%d: %v", i, err)
			t.GPUs = append(t.GPUs, g)
			continue
		}
		g.PCI.BusID, _ = NormalizeBusID(bus)
		if p, gbs, err := s.PCIDevice(bus); err != nil {
			note("GPU%d: %v: its PCIe path, NUMA node and CPUs are not known", i, err)
		} else {
			g.PCI, g.PCIeGBs = p, gbs
		}
		links, err := cuda.NVLinks(bus)
		switch {
		case errors.Is(err, cuda.ErrNoNVML):
			if !nvmlMissing {
				note("%v: NVLink counts and bandwidths are not reported (native atomics between two GPUs still say NVLink: NV?)", err)
			}
			nvmlMissing = true
		case err != nil:
			note("GPU%d: %v: its NVLinks are not reported", i, err)
		default:
			ports[i] = make([]nvlinkPort, 0, len(links))
			for _, l := range links {
				remote, _ := NormalizeBusID(l.Remote)
				ports[i] = append(ports[i], nvlinkPort{Remote: remote, GPU: l.RemoteType == nvmlRemoteGPU, Switch: l.RemoteType == nvmlRemoteSwitch})
			}
		}
		t.GPUs = append(t.GPUs, g)
	}
	peers := make([][]peer, n)
	for i := range n {
		peers[i] = make([]peer, n)
		for j := range n {
			if i != j {
				peers[i][j] = probePeer(i, j, note)
			}
		}
	}
	t.Links = buildLinks(t.GPUs, ports, peers)
	return nil
}

// probePeer asks the driver whether GPU i reaches GPU j's memory and over
// a link with native atomics; a failed probe is noted and counts as no.
func probePeer(i, j int, note func(string, ...any)) peer {
	var p peer
	switch err := p2p.Probe(i, j); {
	case err == nil:
		p.Access = true
	case !errors.Is(err, p2p.ErrNoPeerAccess):
		note("GPU%d → GPU%d: %v", i, j, err)
	}
	a, errA := cuda.Open(i)
	b, errB := cuda.Open(j)
	if errA != nil || errB != nil {
		return p
	}
	atomics, err := a.PeerAtomics(b)
	if err != nil {
		note("GPU%d → GPU%d: %v", i, j, err)
	}
	p.Atomics = atomics && p.Access
	return p
}
