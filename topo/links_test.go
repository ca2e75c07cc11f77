package topo

import (
	"errors"
	"strconv"
	"testing"

	"github.com/ringo-ccl/ringo/internal/errs"
)

// probed makes n H200s (bus ids 0000:0i:00.0, PCIe 5.0 x16), each
// reaching each other with atomics as given.
func probed(n int, access, atomics bool) ([]GPU, [][]peer) {
	gpus := make([]GPU, n)
	peers := make([][]peer, n)
	for i := range n {
		gpus[i] = GPU{Index: i, CC: "9.0", PCIeGBs: 63, PCI: PCI{BusID: "0000:0" + string(rune('1'+i)) + ":00.0"}}
		peers[i] = make([]peer, n)
		for j := range n {
			peers[i][j] = peer{Access: access, Atomics: atomics}
		}
	}
	return gpus, peers
}

func repeat(p nvlinkPort, k int) []nvlinkPort {
	out := make([]nvlinkPort, k)
	for i := range out {
		out[i] = p
	}
	return out
}

func TestBuildLinks(t *testing.T) {
	bw := func(n int) float64 { return float64(n) * NVLinkGBs("9.0") }
	nv18 := Link{Kind: NVLink, NVLinks: 18, BandwidthGBs: bw(18)}
	gpus, peers := probed(2, true, true)
	for _, c := range []struct {
		name    string
		ports   [][]nvlinkPort
		access  bool
		atomics bool
		want    Link
	}{
		{"direct NVLinks", [][]nvlinkPort{repeat(nvlinkPort{Remote: "0000:02:00.0", GPU: true}, 18), repeat(nvlinkPort{Remote: "0000:01:00.0", GPU: true}, 18)}, true, true, nv18},
		{"through NVSwitch", [][]nvlinkPort{repeat(nvlinkPort{Remote: "0000:a0:00.0", Switch: true}, 18), repeat(nvlinkPort{Remote: "0000:a1:00.0", Switch: true}, 18)}, true, true, nv18},
		{"unknown other end, not a visible GPU: a switch", [][]nvlinkPort{repeat(nvlinkPort{}, 18), repeat(nvlinkPort{}, 12)}, true, true, Link{Kind: NVLink, NVLinks: 12, BandwidthGBs: bw(12)}},
		{"switch links but no atomics between them", [][]nvlinkPort{repeat(nvlinkPort{Switch: true}, 18), repeat(nvlinkPort{Switch: true}, 18)}, true, false, Link{Kind: PCIe, BandwidthGBs: 63}},
		{"NVLinks to a GPU not visible", [][]nvlinkPort{repeat(nvlinkPort{Remote: "0000:09:00.0", GPU: true}, 4), {}}, true, false, Link{Kind: PCIe, BandwidthGBs: 63}},
		{"no NVML, atomics", [][]nvlinkPort{nil, nil}, true, true, Link{Kind: NVLink}},
		{"no NVML, no atomics", [][]nvlinkPort{nil, nil}, true, false, Link{Kind: PCIe, BandwidthGBs: 63}},
		{"no peer access", [][]nvlinkPort{{}, {}}, false, false, Link{Kind: None}},
	} {
		for i := range peers {
			for j := range peers {
				peers[i][j] = peer{Access: c.access, Atomics: c.atomics}
			}
		}
		l := buildLinks(gpus, c.ports, peers)
		if l[0][0] != (Link{Kind: Self}) || l[1][1] != (Link{Kind: Self}) {
			t.Errorf("%s: diagonal %v %v", c.name, l[0][0], l[1][1])
		}
		if l[0][1] != c.want {
			t.Errorf("%s: GPU0 → GPU1 = %+v, want %+v", c.name, l[0][1], c.want)
		}
		tp := &Topology{GPUs: gpus, Links: l}
		if err := tp.Validate(); err != nil {
			t.Errorf("%s: %v", c.name, err)
		}
	}
}

// TestBuildLinksMixed: four GPUs, 0–1 and 2–3 bonded by 6 NVLinks each,
// the pairs reaching each other over PCIe (the slower GPU's link counts).
func TestBuildLinksMixed(t *testing.T) {
	gpus, peers := probed(4, true, false)
	gpus[3].PCIeGBs = 31.5
	to := func(b string, k int) []nvlinkPort { return repeat(nvlinkPort{Remote: b, GPU: true}, k) }
	ports := [][]nvlinkPort{to("0000:02:00.0", 6), to("0000:01:00.0", 6), to("0000:04:00.0", 6), to("0000:03:00.0", 6)}
	peers[0][1].Atomics, peers[1][0].Atomics, peers[2][3].Atomics, peers[3][2].Atomics = true, true, true, true
	l := buildLinks(gpus, ports, peers)
	want := [4][4]string{
		{"self", "nvlink 6", "pcie 63", "pcie 31.5"},
		{"nvlink 6", "self", "pcie 63", "pcie 31.5"},
		{"pcie 63", "pcie 63", "self", "nvlink 6"},
		{"pcie 31.5", "pcie 31.5", "nvlink 6", "self"},
	}
	for i := range 4 {
		for j := range 4 {
			got := l[i][j].Kind.String()
			switch l[i][j].Kind {
			case NVLink:
				got += " " + itoa(l[i][j].NVLinks)
			case PCIe:
				got += " " + ftoa(l[i][j].BandwidthGBs)
			}
			if got != want[i][j] {
				t.Errorf("GPU%d → GPU%d: %s, want %s", i, j, got, want[i][j])
			}
		}
	}
}

func TestNormalizeBusID(t *testing.T) {
	for in, want := range map[string]string{
		"00000000:1A:00.0": "0000:1a:00.0",
		"0000:1a:00.0":     "0000:1a:00.0",
		" 0001:9A:1f.7 ":   "0001:9a:1f.7",
		"10000:01:00.0":    "10000:01:00.0",
	} {
		if got, err := NormalizeBusID(in); err != nil || got != want {
			t.Errorf("NormalizeBusID(%q) = %q, %v; want %q", in, got, err, want)
		}
	}
	for _, bad := range []string{"", "1a:00.0", "0000:1a:00", "0000:1g:00.0", "0000:1a:20.0", "0000:1a:00.8", "0000:100:00.0"} {
		if got, err := NormalizeBusID(bad); !errors.Is(err, errs.ErrInvalidArgument) {
			t.Errorf("NormalizeBusID(%q) = %q, %v; want ErrInvalidArgument", bad, got, err)
		}
	}
}

func itoa(n int) string     { return strconv.Itoa(n) }
func ftoa(f float64) string { return strconv.FormatFloat(f, 'g', -1, 64) }
