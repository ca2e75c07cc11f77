package topo

import "testing"

func TestPath(t *testing.T) {
	const sw = "/pci0000:00/0000:00:01.0/0000:01:00.0" // a switch's upstream port
	for _, c := range []struct {
		name string
		a, b PCI
		want PathKind
	}{
		{"same device", PCI{Path: sw + "/0000:02:00.0/0000:03:00.0"}, PCI{Path: sw + "/0000:02:00.0/0000:03:00.0"}, PathSelf},
		{"one switch", PCI{Path: sw + "/0000:02:00.0/0000:03:00.0"}, PCI{Path: sw + "/0000:02:01.0/0000:04:00.0"}, PathPIX},
		{"one root port", PCI{Path: "/pci0000:00/0000:00:01.0/0000:01:00.0"}, PCI{Path: "/pci0000:00/0000:00:01.0/0000:01:00.1"}, PathPIX},
		{"two switches", PCI{Path: sw + "/0000:02:00.0/0000:03:00.0/0000:04:00.0/0000:05:00.0"}, PCI{Path: sw + "/0000:02:01.0/0000:06:00.0"}, PathPXB},
		{"host bridge", PCI{Path: "/pci0000:00/0000:00:01.0/0000:01:00.0"}, PCI{Path: "/pci0000:00/0000:00:02.0/0000:02:00.0"}, PathPHB},
		{"node", PCI{Path: "/pci0000:00/0000:00:01.0/0000:01:00.0", NUMA: 0}, PCI{Path: "/pci0000:40/0000:40:01.0/0000:41:00.0", NUMA: 0}, PathNODE},
		{"no NUMA", PCI{Path: "/pci0000:00/0000:00:01.0/0000:01:00.0", NUMA: -1}, PCI{Path: "/pci0000:40/0000:40:01.0/0000:41:00.0", NUMA: -1}, PathNODE},
		{"sys", PCI{Path: "/pci0000:00/0000:00:01.0/0000:01:00.0", NUMA: 0}, PCI{Path: "/pci0000:80/0000:80:01.0/0000:81:00.0", NUMA: 1}, PathSYS},
		{"unknown", PCI{}, PCI{Path: "/pci0000:80/0000:80:01.0/0000:81:00.0", NUMA: 1}, PathUnknown},
	} {
		if got := Path(c.a, c.b); got != c.want {
			t.Errorf("%s: Path = %v, want %v", c.name, got, c.want)
		}
		if got := Path(c.b, c.a); got != c.want {
			t.Errorf("%s (reversed): Path = %v, want %v", c.name, got, c.want)
		}
	}
}
