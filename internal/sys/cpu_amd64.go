package sys

// cpuSegLimit returns the limit of the kernel's per-core segment (the GDT
// entry the vDSO's getcpu reads: its selector 15·8+3), whose low 12 bits
// are the core's number, or 0xffffffff where the selector is not valid.
func cpuSegLimit() uint32

func segmentCPU() int {
	l := cpuSegLimit()
	if l == 0xffffffff {
		return -1
	}
	return int(l & 0xfff)
}
