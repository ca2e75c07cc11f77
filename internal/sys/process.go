package sys

import (
	"errors"
	"fmt"
	"unsafe"

	"golang.org/x/sys/unix"
)

// Process is another process of this host whose memory this one reads
// directly (cross-memory attach, process_vm_readv(2)), held by a pidfd so
// that a read can be told apart from one of a stranger that took its pid
// after it died (Exited).
type Process struct {
	pid, fd int
	// The syscall's vectors, here rather than on the stack so that a read
	// does not allocate.
	local  unix.Iovec
	remote unix.RemoteIovec
	poll   [1]unix.PollFd
}

// OpenProcess returns process pid, held by a pidfd (pidfd_open(2), Linux
// 5.3).
func OpenProcess(pid int) (*Process, error) {
	fd, err := unix.PidfdOpen(pid, 0)
	if err != nil {
		return nil, fmt.Errorf("pidfd_open(%d): %w", pid, err)
	}
	p := &Process{pid: pid, fd: fd}
	p.poll[0] = unix.PollFd{Fd: int32(fd), Events: unix.POLLIN}
	return p, nil
}

// ErrGone is a read from a process that no longer exists (or is exiting:
// its memory is gone before its pidfd says it has exited).
var ErrGone = errors.New("process gone")

// Pid returns the process's id.
func (p *Process) Pid() int { return p.pid }

// Read copies len(dst) bytes at addr in p's memory into dst. A short read
// (the range is not all mapped there) is an error. It does not allocate.
func (p *Process) Read(dst []byte, addr uintptr) error {
	for len(dst) > 0 {
		p.local = unix.Iovec{Base: unsafe.SliceData(dst)}
		p.local.SetLen(len(dst))
		p.remote = unix.RemoteIovec{Base: addr, Len: len(dst)}
		n, _, e := unix.Syscall6(unix.SYS_PROCESS_VM_READV, uintptr(p.pid),
			uintptr(unsafe.Pointer(&p.local)), 1, uintptr(unsafe.Pointer(&p.remote)), 1, 0)
		switch {
		case e == unix.ESRCH:
			return fmt.Errorf("process_vm_readv from pid %d at %#x: %w: %w", p.pid, addr, ErrGone, e)
		case e != 0:
			return fmt.Errorf("process_vm_readv from pid %d at %#x: %w", p.pid, addr, e)
		case n == 0:
			return fmt.Errorf("process_vm_readv from pid %d at %#x: %d bytes not mapped there", p.pid, addr, len(dst))
		}
		dst, addr = dst[n:], addr+n
	}
	return nil
}

// Exited reports whether the process has exited: once it has, its pid may
// name another process, and what a read returned since it died is not its.
func (p *Process) Exited() bool {
	n, err := unix.Poll(p.poll[:], 0)
	return err == nil && n > 0
}

// Close releases the pidfd.
func (p *Process) Close() error { return unix.Close(p.fd) }
