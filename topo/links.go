package topo

import (
	"fmt"
	"strconv"
	"strings"
)

// nvlinkPort is one active NVLink of a GPU, as NVML reported it.
type nvlinkPort struct {
	Remote string // the other end's PCI address (NormalizeBusID's form); "" when not reported
	GPU    bool   // NVML says the other end is a GPU
	Switch bool   // NVML says the other end is an NVSwitch
}

// peer is what the driver said about one GPU reaching another.
type peer struct {
	Access  bool // cuDeviceCanAccessPeer
	Atomics bool // native atomics over the link: NVLink
}

// buildLinks makes the GPU×GPU matrix from what was probed. ports[i] is
// GPU i's active NVLinks, nil when NVML did not report them; peers[i][j]
// is what the driver said about i reaching j.
//
// From GPU i to GPU j: NVLink with the number of i's links whose other end
// is j; else, when both have links to NVSwitches (a link whose other end
// is neither reported as a GPU nor a visible GPU counts as one) and the
// driver reports native atomics, NVLink through the switches with the
// fewer of the two GPUs' switch links. Otherwise PCIe when peer access
// works, None when it does not. Without NVML, native atomics alone say
// NVLink, with the count unknown (0).
func buildLinks(gpus []GPU, ports [][]nvlinkPort, peers [][]peer) [][]Link {
	n := len(gpus)
	visible := map[string]bool{}
	for _, g := range gpus {
		visible[g.PCI.BusID] = true
	}
	switchLinks := make([]int, n)
	for i := range n {
		for _, p := range ports[i] {
			if p.Switch || !p.GPU && !visible[p.Remote] {
				switchLinks[i]++
			}
		}
	}
	links := make([][]Link, n)
	for i := range n {
		links[i] = make([]Link, n)
		for j := range n {
			links[i][j] = link(gpus, ports, peers, switchLinks, i, j)
		}
	}
	return links
}

func link(gpus []GPU, ports [][]nvlinkPort, peers [][]peer, switchLinks []int, i, j int) Link {
	if i == j {
		return Link{Kind: Self}
	}
	p := peers[i][j]
	nv := 0
	if ports[i] != nil && ports[j] != nil {
		for _, q := range ports[i] {
			if q.Remote != "" && q.Remote == gpus[j].PCI.BusID {
				nv++
			}
		}
		if nv == 0 && p.Atomics && switchLinks[i] > 0 && switchLinks[j] > 0 {
			nv = min(switchLinks[i], switchLinks[j])
		}
	}
	switch {
	case nv > 0 || p.Atomics && (ports[i] == nil || ports[j] == nil):
		return Link{Kind: NVLink, NVLinks: nv, BandwidthGBs: float64(nv) * NVLinkGBs(gpus[i].CC)}
	case p.Access:
		return Link{Kind: PCIe, BandwidthGBs: min(gpus[i].PCIeGBs, gpus[j].PCIeGBs)}
	}
	return Link{Kind: None}
}

// NormalizeBusID writes a PCI address as sysfs names the device:
// "00000000:1A:00.0" (NVML) and "0000:1a:00.0" (the CUDA driver) both
// become "0000:1a:00.0". Its errors wrap errs.ErrInvalidArgument.
func NormalizeBusID(s string) (string, error) {
	parts := strings.Split(strings.TrimSpace(s), ":")
	if len(parts) != 3 {
		return "", invalid("PCI address %q is not domain:bus:device.function", s)
	}
	dev, fn, ok := strings.Cut(parts[2], ".")
	var v [4]uint64
	var err error
	for i, f := range []struct {
		s    string
		bits int
	}{{parts[0], 32}, {parts[1], 8}, {dev, 5}, {fn, 3}} {
		if v[i], err = strconv.ParseUint(f.s, 16, f.bits); err != nil {
			ok = false
		}
	}
	if !ok {
		return "", invalid("PCI address %q is not domain:bus:device.function in hex", s)
	}
	return fmt.Sprintf("%04x:%02x:%02x.%x", v[0], v[1], v[2], v[3]), nil
}
