package topo

import (
	"strings"
	"testing"
)

func render(t *testing.T, tp *Topology) string {
	t.Helper()
	c, err := Order(tp)
	if err != nil {
		t.Fatal(err)
	}
	var b strings.Builder
	if err := Render(&b, tp, &c); err != nil {
		t.Fatal(err)
	}
	return b.String()
}

func TestRenderH200x2(t *testing.T) {
	want := `GPU0: NVIDIA H200, compute capability 9.0, PCI 0000:19:00.0, GPU-00000000-aaaa-bbbb-cccc-dddddddddddd
GPU1: NVIDIA H200, compute capability 9.0, PCI 0000:9a:00.0, GPU-00000001-aaaa-bbbb-cccc-dddddddddddd

      GPU0  GPU1  NIC0  CPU Affinity   NUMA Affinity
GPU0  X     NV18  PIX   0-47,96-143    0
GPU1  NV18  X     SYS   48-95,144-191  1
NIC0  PIX   SYS   X

` + legend + `
NIC Legend:

  NIC0: mlx5_0 (ibp24s0), rdma, PCI 0000:18:00.0, NUMA 0; port 1 ACTIVE 400 Gb/s InfiniBand

Ring order: GPU0 → GPU1 → GPU0
Slowest link: 478.1 GB/s (NV18); all links: 478.1 GB/s
`
	if got := render(t, fakeH200x2()); got != want {
		t.Errorf("got\n%s\nwant\n%s", got, want)
	}
}

func TestRenderMixed8(t *testing.T) {
	got := render(t, fakeMixed8())
	for _, want := range []string{`
      GPU0  GPU1  GPU2  GPU3  GPU4  GPU5  GPU6  GPU7  NIC0  NIC1  CPU Affinity  NUMA Affinity
GPU0  X     PIX   NV1   NV2   NV2   SYS   SYS   SYS   PHB   NODE  0-19,40-59    0
GPU1  PIX   X     NV2   NV1   SYS   NV2   SYS   SYS   PHB   NODE  0-19,40-59    0
GPU2  NV1   NV2   X     NV2   SYS   SYS   NV1   SYS   PXB   NODE  0-19,40-59    0
GPU3  NV2   NV1   NV2   X     SYS   SYS   SYS   NV1   PIX   NODE  0-19,40-59    0
GPU4  NV2   SYS   SYS   SYS   X     PIX   NV1   NV2   SYS   SYS   20-39,60-79   1
GPU5  SYS   NV2   SYS   SYS   PIX   X     NV2   NV1   SYS   SYS   20-39,60-79   1
GPU6  SYS   SYS   NV1   SYS   NV1   NV2   X     NV2   SYS   SYS   20-39,60-79   1
GPU7  SYS   SYS   SYS   NV1   NV2   NV1   NV2   X     SYS   SYS   20-39,60-79   1
NIC0  PHB   PHB   PXB   PIX   SYS   SYS   SYS   SYS   X     NODE
NIC1  NODE  NODE  NODE  NODE  SYS   SYS   SYS   SYS   NODE  X
`, `
  NIC0: mlx5_0, rdma, PCI 0000:0c:00.0, NUMA 0; port 1 ACTIVE 100 Gb/s InfiniBand
  NIC1: eth0, netdev, PCI 0000:41:00.0, NUMA 0; port 1 up 25 Gb/s Ethernet
`, `
No peer access (data would go through host memory): GPU0-GPU5, GPU0-GPU6, GPU0-GPU7, GPU1-GPU4, GPU1-GPU6, GPU1-GPU7, GPU2-GPU4, GPU2-GPU5, GPU2-GPU7, GPU3-GPU4, GPU3-GPU5, GPU3-GPU6
`, `
Note: GPU UUIDs are left out of this fake
`, `
Ring order: GPU0 → GPU3 → GPU2 → GPU1 → GPU5 → GPU6 → GPU7 → GPU4 → GPU0
Slowest link: 51.6 GB/s (NV2); all links: 412.5 GB/s
`} {
		if !strings.Contains(got, want) {
			t.Errorf("output lacks\n%s\ngot\n%s", want, got)
		}
	}
	if strings.Contains(got, "nominal") {
		t.Errorf("every link on the ring has a bandwidth, yet the output says a nominal one stood in:\n%s", got)
	}
}

// TestRenderUnknowns: without NVML counts, PCI paths or NUMA nodes the
// matrix says NV? and PCI, affinity N/A, and the ring says a nominal
// bandwidth stood in.
func TestRenderUnknowns(t *testing.T) {
	tp := &Topology{
		GPUs:  []GPU{{Index: 0, Name: "G", PCI: PCI{NUMA: -1}}, {Index: 1, Name: "G", PCI: PCI{NUMA: -1}}, {Index: 2, Name: "G", PCI: PCI{NUMA: -1}}},
		Links: [][]Link{{{Kind: Self}, {Kind: NVLink}, {Kind: PCIe}}, {{Kind: NVLink}, {Kind: Self}, {Kind: PCIe}}, {{Kind: PCIe}, {Kind: PCIe}, {Kind: Self}}},
	}
	got := render(t, tp)
	for _, want := range []string{
		"GPU0  X     NV?   PCI   N/A           N/A\n",
		"GPU2  PCI   PCI   X     N/A           N/A\n",
		"Slowest link: 12.0 GB/s (PCIe PCI); all links: 88.0 GB/s\n(where a bandwidth was not reported a nominal one stood in)\n",
	} {
		if !strings.Contains(got, want) {
			t.Errorf("output lacks %q; got\n%s", want, got)
		}
	}
	if strings.Contains(got, "NIC Legend") {
		t.Errorf("NIC legend without NICs:\n%s", got)
	}
}
