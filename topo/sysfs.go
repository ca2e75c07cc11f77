package topo

import (
	"fmt"
	"os"
	"path/filepath"
	"regexp"
	"sort"
	"strconv"
	"strings"

	"github.com/ringo-ccl/ringo/rdma"
)

// Sysfs reads devices from the sysfs tree at Root/sys: Root "" is this
// machine's; tests point it at a fake tree.
type Sysfs struct{ Root string }

func (s Sysfs) path(elem ...string) string {
	return filepath.Join(append([]string{s.Root, "/sys"}, elem...)...)
}

// read returns a sysfs file's content, trimmed; "" when it cannot be read.
func read(path string) string {
	b, err := os.ReadFile(path)
	if err != nil {
		return ""
	}
	return strings.TrimSpace(string(b))
}

var busIDPattern = regexp.MustCompile(`^[0-9a-f]{4,8}:[0-9a-f]{2}:[0-9a-f]{2}\.[0-7]$`)

// PCIDevice places the PCI device busID (any form NormalizeBusID takes):
// its path under /sys/devices, NUMA node and local CPUs. It also returns
// its PCIe link's bandwidth per direction (PCIeGBs of its maximum link
// speed and width, as a GPU's current link slows down when idle), 0 when
// sysfs does not say.
func (s Sysfs) PCIDevice(busID string) (PCI, float64, error) {
	id, err := NormalizeBusID(busID)
	if err != nil {
		return PCI{NUMA: -1}, 0, err
	}
	dir, err := filepath.EvalSymlinks(s.path("bus/pci/devices", id))
	if err != nil {
		return PCI{BusID: id, NUMA: -1}, 0, fmt.Errorf("topo: sysfs has no PCI device %s: %w", id, err)
	}
	p, err := s.pciAt(dir)
	if err != nil {
		return p, 0, err
	}
	speed, width := read(filepath.Join(dir, "max_link_speed")), read(filepath.Join(dir, "max_link_width"))
	if speed == "" {
		speed, width = read(filepath.Join(dir, "current_link_speed")), read(filepath.Join(dir, "current_link_width"))
	}
	return p, PCIeGBs(speed, width), nil
}

// pciAt places the PCI device whose sysfs directory (symlinks resolved)
// is dir, or the nearest PCI device above it (a network interface's
// virtio device lies under one).
func (s Sysfs) pciAt(dir string) (PCI, error) {
	devices, err := filepath.EvalSymlinks(s.path("devices"))
	if err != nil {
		return PCI{NUMA: -1}, fmt.Errorf("topo: sysfs: %w", err)
	}
	for dir != devices && len(dir) > len(devices) && !busIDPattern.MatchString(filepath.Base(dir)) {
		dir = filepath.Dir(dir)
	}
	rel, err := filepath.Rel(devices, dir)
	if err != nil || rel == "." || strings.HasPrefix(rel, "..") {
		return PCI{NUMA: -1}, fmt.Errorf("topo: sysfs: %s is not a PCI device under %s", dir, devices)
	}
	p := PCI{BusID: filepath.Base(dir), Path: "/" + filepath.ToSlash(rel), NUMA: -1, CPUs: read(filepath.Join(dir, "local_cpulist"))}
	if n, err := strconv.Atoi(read(filepath.Join(dir, "numa_node"))); err == nil && n >= 0 {
		p.NUMA = n
	}
	return p, nil
}

// NICs lists the NICs: first the RDMA devices of ports (rdma.Ports), in
// the order they first appear there, with their ports' state, rate and link layer, then the
// physical network interfaces (those with a device) that belong to none
// of them, sorted by name. A NIC sysfs does not place on the PCI tree
// is listed with an empty PCI path. The error is for a sysfs without
// /sys/class/net; what was found is returned with it.
func (s Sysfs) NICs(ports []rdma.Port) ([]NIC, error) {
	var nics []NIC
	rdmaPCI := map[string]int{} // bus id → index in nics
	byName := map[string]int{}  // RDMA device → index in nics
	for _, p := range ports {
		i, ok := byName[p.Device]
		if !ok {
			i = len(nics)
			byName[p.Device] = i
			nic := NIC{Name: p.Device, Kind: RDMA, PCI: PCI{NUMA: -1}}
			if dir, err := filepath.EvalSymlinks(s.path("class/infiniband", p.Device, "device")); err == nil {
				nic.PCI, _ = s.pciAt(dir)
				if nets, _ := os.ReadDir(filepath.Join(dir, "net")); len(nets) > 0 {
					nic.Netdev = nets[0].Name()
				}
				if nic.PCI.BusID != "" {
					rdmaPCI[nic.PCI.BusID] = i
				}
			}
			nics = append(nics, nic)
		}
		dir := s.path("class/infiniband", p.Device, "ports", strconv.Itoa(p.Port))
		state := read(filepath.Join(dir, "state")) // "4: ACTIVE"
		if _, name, ok := strings.Cut(state, ":"); ok {
			state = strings.TrimSpace(name)
		}
		port := NICPort{Port: p.Port, State: state, LinkLayer: read(filepath.Join(dir, "link_layer"))}
		if f := strings.Fields(read(filepath.Join(dir, "rate"))); len(f) > 0 { // "200 Gb/sec (4X HDR)"
			port.RateGbps, _ = strconv.ParseFloat(f[0], 64)
		}
		nics[i].Ports = append(nics[i].Ports, port)
	}
	entries, err := os.ReadDir(s.path("class/net"))
	if err != nil {
		return nics, fmt.Errorf("topo: listing network interfaces: %w", err)
	}
	names := make([]string, 0, len(entries))
	for _, e := range entries {
		names = append(names, e.Name())
	}
	sort.Strings(names)
	for _, name := range names {
		dir, err := filepath.EvalSymlinks(s.path("class/net", name, "device"))
		if err != nil {
			continue // virtual: loopback, bridges, veth
		}
		pci, _ := s.pciAt(dir)
		if i, ok := rdmaPCI[pci.BusID]; ok && pci.BusID != "" {
			if nics[i].Netdev == "" {
				nics[i].Netdev = name
			}
			continue
		}
		nics = append(nics, netdev(s.path("class/net", name), name, pci))
	}
	return nics, nil
}

// netdev describes the network interface name, whose sysfs directory is dir.
func netdev(dir, name string, pci PCI) NIC {
	port := NICPort{Port: 1, State: read(filepath.Join(dir, "operstate"))}
	if mbps, err := strconv.Atoi(read(filepath.Join(dir, "speed"))); err == nil && mbps > 0 {
		port.RateGbps = float64(mbps) / 1000
	}
	switch read(filepath.Join(dir, "type")) { // ARPHRD_*
	case "1":
		port.LinkLayer = "Ethernet"
	case "32":
		port.LinkLayer = "InfiniBand"
	}
	return NIC{Name: name, Kind: Netdev, PCI: pci, Ports: []NICPort{port}}
}
