package topo

import (
	"errors"
	"math"
	"os"
	"path/filepath"
	"reflect"
	"strings"
	"testing"

	"github.com/ringo-ccl/ringo/internal/errs"
	"github.com/ringo-ccl/ringo/rdma"
)

// fakeSysfs is a host in miniature: a GPU (0000:19:00.0) and an RDMA NIC
// (mlx5_0, netdev ibp24s0, 0000:18:00.0) behind one PCIe switch on NUMA
// node 0, a virtio network interface eth0, a loopback and a bridge.
type fakeSysfs struct {
	t    *testing.T
	root string
}

func newFakeSysfs(t *testing.T) fakeSysfs {
	f := fakeSysfs{t, t.TempDir()}
	const sw = "devices/pci0000:15/0000:15:01.0/0000:16:00.0"
	gpu, nic := sw+"/0000:17:00.0/0000:19:00.0", sw+"/0000:17:01.0/0000:18:00.0"
	f.files(gpu, map[string]string{"numa_node": "0\n", "local_cpulist": "0-47,96-143\n", "max_link_speed": "32.0 GT/s PCIe\n", "max_link_width": "16\n",
		"current_link_speed": "2.5 GT/s PCIe\n", "current_link_width": "16\n"})
	f.link("bus/pci/devices/0000:19:00.0", gpu)
	f.files(nic, map[string]string{"numa_node": "0\n", "net/ibp24s0/operstate": "up\n"})
	f.link("class/infiniband/mlx5_0/device", nic)
	f.files("class/infiniband/mlx5_0/ports/1", map[string]string{"state": "4: ACTIVE\n", "rate": "400 Gb/sec (4X NDR)\n", "link_layer": "InfiniBand\n"})
	f.link("class/net/ibp24s0/device", nic)
	virtio := "devices/pci0000:00/0000:00:03.0/virtio0"
	f.files(virtio, map[string]string{"vendor": "0x1af4\n"})
	f.files("devices/pci0000:00/0000:00:03.0", map[string]string{"numa_node": "-1\n", "local_cpulist": "0-1\n"})
	f.link("class/net/eth0/device", virtio)
	f.files("class/net/eth0", map[string]string{"operstate": "up\n", "speed": "25000\n", "type": "1\n"})
	f.files("class/net/lo", map[string]string{"operstate": "unknown\n", "type": "772\n"})
	f.files("class/net/br0", map[string]string{"operstate": "down\n"})
	return f
}

func (f fakeSysfs) files(dir string, files map[string]string) {
	for name, content := range files {
		p := filepath.Join(f.root, "sys", dir, name)
		if err := os.MkdirAll(filepath.Dir(p), 0o755); err != nil {
			f.t.Fatal(err)
		}
		if err := os.WriteFile(p, []byte(content), 0o644); err != nil {
			f.t.Fatal(err)
		}
	}
}

// link makes sys/at a symbolic link to sys/to, relative as sysfs's are.
func (f fakeSysfs) link(at, to string) {
	p := filepath.Join(f.root, "sys", at)
	if err := os.MkdirAll(filepath.Dir(p), 0o755); err != nil {
		f.t.Fatal(err)
	}
	rel, err := filepath.Rel(filepath.Dir(p), filepath.Join(f.root, "sys", to))
	if err != nil {
		f.t.Fatal(err)
	}
	if err := os.Symlink(rel, p); err != nil {
		f.t.Fatal(err)
	}
}

func TestSysfsPCIDevice(t *testing.T) {
	s := Sysfs{Root: newFakeSysfs(t).root}
	p, gbs, err := s.PCIDevice("00000000:19:00.0") // NVML's form
	if err != nil {
		t.Fatal(err)
	}
	want := PCI{BusID: "0000:19:00.0", Path: "/pci0000:15/0000:15:01.0/0000:16:00.0/0000:17:00.0/0000:19:00.0", NUMA: 0, CPUs: "0-47,96-143"}
	if p != want {
		t.Errorf("PCIDevice = %+v, want %+v", p, want)
	}
	if math.Abs(gbs-63.015) > 0.001 { // the maximum link, not the idle current one
		t.Errorf("PCIe bandwidth %v, want 63.015 (5.0 x16)", gbs)
	}
	if _, _, err := s.PCIDevice("0000:20:00.0"); err == nil || !strings.Contains(err.Error(), "sysfs has no PCI device 0000:20:00.0") {
		t.Errorf("a missing device: %v", err)
	}
	if _, _, err := s.PCIDevice("GPU0"); !errors.Is(err, errs.ErrInvalidArgument) {
		t.Errorf("a bad bus id: %v, want ErrInvalidArgument", err)
	}
}

func TestSysfsNICs(t *testing.T) {
	s := Sysfs{Root: newFakeSysfs(t).root}
	nics, err := s.NICs([]rdma.Port{{Device: "mlx5_0", Port: 1}})
	if err != nil {
		t.Fatal(err)
	}
	want := []NIC{
		{Name: "mlx5_0", Kind: RDMA, Netdev: "ibp24s0",
			PCI:   PCI{BusID: "0000:18:00.0", Path: "/pci0000:15/0000:15:01.0/0000:16:00.0/0000:17:01.0/0000:18:00.0", NUMA: 0},
			Ports: []NICPort{{Port: 1, State: "ACTIVE", RateGbps: 400, LinkLayer: "InfiniBand"}}},
		{Name: "eth0", Kind: Netdev, PCI: PCI{BusID: "0000:00:03.0", Path: "/pci0000:00/0000:00:03.0", NUMA: -1, CPUs: "0-1"},
			Ports: []NICPort{{Port: 1, State: "up", RateGbps: 25, LinkLayer: "Ethernet"}}},
	}
	if !reflect.DeepEqual(nics, want) {
		t.Errorf("NICs:\n%+v\nwant\n%+v", nics, want)
	}
	// The GPU and the NIC share a PCIe switch.
	gpu, _, _ := s.PCIDevice("0000:19:00.0")
	if got := Path(gpu, nics[0].PCI); got != PathPIX {
		t.Errorf("GPU–NIC path %v, want PIX", got)
	}

	// An RDMA device sysfs does not place, and one with two ports.
	nics, err = s.NICs([]rdma.Port{{Device: "rxe0", Port: 1}, {Device: "mlx5_0", Port: 1}, {Device: "rxe0", Port: 2}})
	if err != nil || len(nics) != 3 || nics[0].Name != "rxe0" || len(nics[0].Ports) != 2 || nics[0].PCI.Path != "" || nics[0].PCI.NUMA != -1 {
		t.Errorf("NICs with rxe0: %+v, %v", nics, err)
	}
}

func TestSysfsMissing(t *testing.T) {
	s := Sysfs{Root: filepath.Join(t.TempDir(), "nothing")}
	nics, err := s.NICs(nil)
	if err == nil || !strings.Contains(err.Error(), "listing network interfaces") || len(nics) != 0 {
		t.Errorf("NICs without sysfs: %v, %v", nics, err)
	}
	if _, _, err := s.PCIDevice("0000:19:00.0"); err == nil {
		t.Error("PCIDevice without sysfs: no error")
	}
}
