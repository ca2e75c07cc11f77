package topo

import "fmt"

// fakeH200x2 is two H200s joined by 18 NVLinks, as on the GPU machine,
// each behind its own PCIe switch on its own NUMA node, with one NIC.
func fakeH200x2() *Topology {
	nv18 := Link{Kind: NVLink, NVLinks: 18, BandwidthGBs: 18 * 26.562}
	gpu := func(i int, bus, path string, numa int, cpus string) GPU {
		return GPU{Index: i, Name: "NVIDIA H200", UUID: fmt.Sprintf("GPU-0000000%d-aaaa-bbbb-cccc-dddddddddddd", i), CC: "9.0",
			PCI: PCI{BusID: bus, Path: path, NUMA: numa, CPUs: cpus}, PCIeGBs: 63.015}
	}
	return &Topology{
		Host: "h200",
		GPUs: []GPU{
			gpu(0, "0000:19:00.0", "/pci0000:15/0000:15:01.0/0000:16:00.0/0000:17:00.0/0000:19:00.0", 0, "0-47,96-143"),
			gpu(1, "0000:9a:00.0", "/pci0000:97/0000:97:01.0/0000:98:00.0/0000:99:00.0/0000:9a:00.0", 1, "48-95,144-191"),
		},
		Links: [][]Link{{{Kind: Self}, nv18}, {nv18, {Kind: Self}}},
		NICs: []NIC{{Name: "mlx5_0", Kind: RDMA, Netdev: "ibp24s0",
			PCI:   PCI{BusID: "0000:18:00.0", Path: "/pci0000:15/0000:15:01.0/0000:16:00.0/0000:17:01.0/0000:18:00.0", NUMA: 0},
			Ports: []NICPort{{Port: 1, State: "ACTIVE", RateGbps: 400, LinkLayer: "InfiniBand"}}}},
	}
}

// fakeMixed8 is eight V100s in a hybrid cube mesh with two of its NVLink
// pairs missing (GPU0–GPU1 and GPU4–GPU5 go over PCIe) and no peer access
// between the NUMA nodes except over NVLink; its PCI tree has every
// distance: PIX, PXB, PHB, NODE and SYS.
func fakeMixed8() *Topology {
	const (
		root0 = "/pci0000:00/0000:00:01.0/0000:01:00.0" // NUMA 0, switch
		root1 = "/pci0000:00/0000:00:02.0/0000:06:00.0" // NUMA 0, two levels of switches
		root2 = "/pci0000:80/0000:80:01.0/0000:81:00.0" // NUMA 1, switch
		root3 = "/pci0000:c0/0000:c0:01.0/0000:c1:00.0" // NUMA 1, switch
	)
	paths := []struct {
		bus, path string
		numa      int
	}{
		{"0000:03:00.0", root0 + "/0000:02:00.0/0000:03:00.0", 0},
		{"0000:04:00.0", root0 + "/0000:02:01.0/0000:04:00.0", 0},
		{"0000:0a:00.0", root1 + "/0000:07:00.0/0000:08:00.0/0000:09:00.0/0000:0a:00.0", 0},
		{"0000:0b:00.0", root1 + "/0000:07:01.0/0000:0b:00.0", 0},
		{"0000:83:00.0", root2 + "/0000:82:00.0/0000:83:00.0", 1},
		{"0000:84:00.0", root2 + "/0000:82:01.0/0000:84:00.0", 1},
		{"0000:c3:00.0", root3 + "/0000:c2:00.0/0000:c3:00.0", 1},
		{"0000:c4:00.0", root3 + "/0000:c2:01.0/0000:c4:00.0", 1},
	}
	nv := [8][8]int{ // NVLinks between GPUs
		{0, 0, 1, 2, 2, 0, 0, 0},
		{0, 0, 2, 1, 0, 2, 0, 0},
		{1, 2, 0, 2, 0, 0, 1, 0},
		{2, 1, 2, 0, 0, 0, 0, 1},
		{2, 0, 0, 0, 0, 0, 1, 2},
		{0, 2, 0, 0, 0, 0, 2, 1},
		{0, 0, 1, 0, 1, 2, 0, 2},
		{0, 0, 0, 1, 2, 1, 2, 0},
	}
	t := &Topology{Host: "mixed"}
	for i, p := range paths {
		cpus := "0-19,40-59"
		if p.numa == 1 {
			cpus = "20-39,60-79"
		}
		t.GPUs = append(t.GPUs, GPU{Index: i, Name: "Tesla V100-SXM2-32GB", CC: "7.0", PCIeGBs: 15.754,
			PCI: PCI{BusID: p.bus, Path: p.path, NUMA: p.numa, CPUs: cpus}})
	}
	t.Links = make([][]Link, 8)
	for i := range 8 {
		t.Links[i] = make([]Link, 8)
		for j := range 8 {
			switch {
			case i == j:
				t.Links[i][j] = Link{Kind: Self}
			case nv[i][j] > 0:
				t.Links[i][j] = Link{Kind: NVLink, NVLinks: nv[i][j], BandwidthGBs: float64(nv[i][j]) * 25.781}
			case paths[i].numa == paths[j].numa:
				t.Links[i][j] = Link{Kind: PCIe, BandwidthGBs: 15.754}
			default:
				t.Links[i][j] = Link{Kind: None}
			}
		}
	}
	t.NICs = []NIC{
		{Name: "mlx5_0", Kind: RDMA, PCI: PCI{BusID: "0000:0c:00.0", Path: root1 + "/0000:07:02.0/0000:0c:00.0", NUMA: 0},
			Ports: []NICPort{{Port: 1, State: "ACTIVE", RateGbps: 100, LinkLayer: "InfiniBand"}}},
		{Name: "eth0", Kind: Netdev, PCI: PCI{BusID: "0000:41:00.0", Path: "/pci0000:40/0000:40:01.0/0000:41:00.0", NUMA: 0},
			Ports: []NICPort{{Port: 1, State: "up", RateGbps: 25, LinkLayer: "Ethernet"}}},
	}
	t.Notes = []string{"GPU UUIDs are left out of this fake"}
	return t
}
