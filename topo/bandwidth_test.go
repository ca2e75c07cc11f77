package topo

import (
	"math"
	"testing"
)

func TestPCIeGBs(t *testing.T) {
	for _, c := range []struct {
		speed, width string
		want         float64
	}{
		{"32.0 GT/s PCIe", "16", 32 * 16 * 128 / 130.0 / 8}, // 5.0 x16: 63.0
		{"16.0 GT/s PCIe", "16", 16 * 16 * 128 / 130.0 / 8},
		{"8 GT/s", "8", 8 * 8 * 128 / 130.0 / 8},
		{"2.5 GT/s", "1", 0.25},
		{"5.0 GT/s PCIe", "4", 2},
		{"64.0 GT/s PCIe", "16", 64 * 16 * 242 / 256.0 / 8},
		{"Unknown", "16", 0},
		{"", "", 0},
		{"16.0 GT/s PCIe", "0", 0},
		{"-8 GT/s", "16", 0},
	} {
		if got := PCIeGBs(c.speed, c.width); math.Abs(got-c.want) > 1e-9 {
			t.Errorf("PCIeGBs(%q, %q) = %v, want %v", c.speed, c.width, got, c.want)
		}
	}
}

func TestNVLinkGBs(t *testing.T) {
	for cc, want := range map[string]float64{"6.0": 20, "7.0": 25.781, "8.0": 25, "8.6": 14.0625, "9.0": 26.562, "10.0": 50, "12.0": 0, "": 0, "x": 0} {
		if got := NVLinkGBs(cc); got != want {
			t.Errorf("NVLinkGBs(%q) = %v, want %v", cc, got, want)
		}
	}
}
