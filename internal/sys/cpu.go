package sys

import (
	"sync"
	"unsafe"

	"golang.org/x/sys/unix"
)

// CPU returns the core the calling thread runs on, or -1 where it cannot
// be read cheaply. The answer may be stale by the time the caller uses
// it: the thread can move at any moment.
//
// On x86-64 Linux it reads the kernel's per-core segment, whose limit
// holds the core's number (LSL, as the vDSO's getcpu does on CPUs without
// RDPID): ~20 ns on the 2-core development VM, where the getcpu system
// call takes ~1.1 µs and RDPID and RDTSCP read 319 on both cores (the
// hypervisor does not set their register per core). The first call checks
// the segment against the system call and, where they differ, CPU returns
// -1 from then on.
func CPU() int {
	cpuOnce.Do(probeCPU)
	if !cpuSegment {
		return -1
	}
	return segmentCPU()
}

var (
	cpuOnce    sync.Once
	cpuSegment bool // the segment gives the core (probeCPU)
)

// probeCPU sets cpuSegment where the segment's number equals getcpu's,
// read before and after it, in most of a few tries (the thread may move
// between the reads).
func probeCPU() {
	agree := 0
	for range 8 {
		a, okA := getcpu()
		s := segmentCPU()
		b, okB := getcpu()
		if okA && okB && a == b && s == a {
			agree++
		}
	}
	cpuSegment = agree >= 4
}

func getcpu() (int, bool) {
	var cpu uint32
	_, _, e := unix.RawSyscall(unix.SYS_GETCPU, uintptr(unsafe.Pointer(&cpu)), 0, 0)
	return int(cpu), e == 0
}
