package sys

import (
	"fmt"
	"io"

	"golang.org/x/sys/unix"
)

// ProcessReader reads other processes' memory (cross-memory attach:
// process_vm_readv), which the kernel allows for processes of the same
// user unless a security module forbids it. Its iovecs live in it, so
// Read does not allocate; one goroutine at a time.
type ProcessReader struct {
	local  [1]unix.Iovec
	remote [1]unix.RemoteIovec
}

// Read fills dst with the bytes at addr in process pid.
func (r *ProcessReader) Read(pid int, addr uintptr, dst []byte) error {
	for len(dst) > 0 {
		r.local[0].Base = &dst[0]
		r.local[0].SetLen(len(dst))
		r.remote[0] = unix.RemoteIovec{Base: addr, Len: len(dst)}
		n, err := unix.ProcessVMReadv(pid, r.local[:], r.remote[:], 0)
		if err != nil {
			return fmt.Errorf("reading %d bytes of process %d's memory at %#x: %w", len(dst), pid, addr, err)
		}
		if n <= 0 {
			return fmt.Errorf("reading process %d's memory at %#x: %w", pid, addr, io.ErrUnexpectedEOF)
		}
		dst, addr = dst[n:], addr+uintptr(n)
	}
	return nil
}
