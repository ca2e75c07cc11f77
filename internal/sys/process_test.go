package sys

import (
	"os"
	"testing"
	"unsafe"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// TestProcessRead: a read of mapped memory copies it; one of an address
// that is not mapped is an error naming the pid and the address.
func TestProcessRead(t *testing.T) {
	p, err := OpenProcess(os.Getpid())
	require.NoError(t, err)
	defer p.Close()
	src := make([]byte, 3<<20+5)
	for i := range src {
		src[i] = byte(i * 7)
	}
	dst := make([]byte, len(src))
	require.NoError(t, p.Read(dst, addr(src)))
	assert.Equal(t, src, dst)
	assert.False(t, p.Exited())
	err = p.Read(dst[:8], 8)
	require.Error(t, err)
	assert.Contains(t, err.Error(), "process_vm_readv from pid")
	assert.Contains(t, err.Error(), "at 0x8")
	assert.Zero(t, testing.AllocsPerRun(10, func() { _ = p.Read(dst[:4096], addr(src)) }))
}

// TestOpenProcessGone: no pidfd for a pid that names no process.
func TestOpenProcessGone(t *testing.T) {
	_, err := OpenProcess(1 << 30)
	require.Error(t, err)
	assert.Contains(t, err.Error(), "pidfd_open(1073741824)")
}

func addr(b []byte) uintptr { return uintptr(unsafe.Pointer(unsafe.SliceData(b))) }
