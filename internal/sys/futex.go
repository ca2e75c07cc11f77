package sys

import (
	"sync/atomic"
	"time"
	"unsafe"

	"golang.org/x/sys/unix"
)

// futex(2) operations, shared between processes (no FUTEX_PRIVATE_FLAG):
// the words live in memory that several processes map.
const (
	futexWait = 0
	futexWake = 1
)

// FutexWait sleeps while *addr == val, for at most d. It returns early on a
// wake-up, a signal, or when *addr already differs; the caller re-checks its
// condition either way.
func FutexWait(addr *atomic.Uint32, val uint32, d time.Duration) {
	ts := unix.NsecToTimespec(d.Nanoseconds())
	unix.Syscall6(unix.SYS_FUTEX, uintptr(unsafe.Pointer(addr)), futexWait, uintptr(val),
		uintptr(unsafe.Pointer(&ts)), 0, 0)
}

// FutexWake wakes up to n sleepers on addr.
func FutexWake(addr *atomic.Uint32, n int) {
	unix.Syscall6(unix.SYS_FUTEX, uintptr(unsafe.Pointer(addr)), futexWake, uintptr(n), 0, 0, 0)
}

// Yield gives the calling thread's core to another runnable thread, of
// any process (sched_yield). It does not tell Go's scheduler it is in a
// system call, as the runtime's own spin loops do not: a yield that hands
// the core to another process for a while would otherwise lose its
// processor to sysmon, which then starts another thread to run it, and
// take it back on return. 4 processes on 2 cores, two sets of runs: an
// all-reduce of 64 B took 10.3–17.1 µs a call this way against 18.1–24.3
// through unix.Syscall, with 2.9–5.3 yields a call against 5.2–6.5 (perf
// stat; BENCHMARKS.md, issue 25).
func Yield() { unix.RawSyscall(unix.SYS_SCHED_YIELD, 0, 0, 0) }
