package topo

import (
	"strconv"
	"strings"
)

// NVLinkGBs returns one NVLink link's bandwidth per direction on a GPU of
// compute capability cc ("9.0"), the rate `nvidia-smi nvlink -s` shows:
// NVLink 1 (sm_60) 20 GB/s, NVLink 2 (sm_70) 25.781, NVLink 3 (sm_80)
// 25, (sm_86, bridged boards) 14.0625, NVLink 4 (sm_90) 26.562, NVLink 5
// (sm_100) 50. It returns 0 for a capability it does not know. (NVML's
// own NVLink version codes are not used: drivers have reported them
// inconsistently.)
func NVLinkGBs(cc string) float64 {
	switch cc {
	case "8.6", "8.7", "8.9":
		return 14.0625
	}
	major, _, _ := strings.Cut(cc, ".")
	switch major {
	case "6":
		return 20
	case "7":
		return 25.781
	case "8":
		return 25
	case "9":
		return 26.562
	case "10":
		return 50
	}
	return 0
}

// PCIeGBs returns a PCIe link's bandwidth per direction from sysfs's
// link speed ("32.0 GT/s PCIe", "8 GT/s") and width ("16"), after line
// coding (8b/10b up to 5 GT/s, 128b/130b at 8–32 GT/s, 242B/256B FLITs at
// 64 GT/s). It returns 0 when either does not parse.
func PCIeGBs(speed, width string) float64 {
	f := strings.Fields(speed)
	if len(f) == 0 {
		return 0
	}
	gts, err1 := strconv.ParseFloat(f[0], 64)
	lanes, err2 := strconv.Atoi(strings.TrimSpace(width))
	if err1 != nil || err2 != nil || gts <= 0 || lanes <= 0 {
		return 0
	}
	coding := 128.0 / 130
	switch {
	case gts <= 5:
		coding = 8.0 / 10
	case gts >= 64:
		coding = 242.0 / 256
	}
	return gts * float64(lanes) * coding / 8
}
