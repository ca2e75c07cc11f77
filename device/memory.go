package device

import "time"

// GPU memory and streams for the public API's DevPtr and Stream, by GPU
// ordinal and raw address or CUstream handle, declared for every build.
// With the cuda tag memory_cuda.go implements them (a GPU that cannot be
// opened is an error wrapping errs.ErrInvalidArgument); without it they
// return an error wrapping errs.ErrNotSupported and cuda.ErrNoCUDA
// (stub.go).

// Alloc allocates n bytes (at least 1) on GPU dev.
func Alloc(dev int, n int64) (uintptr, error) { return alloc(dev, n) }

// AllocShared allocates n bytes on GPU dev as NCCL's ncclMemAlloc does:
// memory of CUDA's virtual memory API (cuMemCreate, rounded up to its
// granularity), which every GPU with peer access to dev reaches and other
// processes map through a file descriptor (a window's, across processes).
// An error wraps errs.ErrNotSupported where the driver has no virtual
// memory management.
func AllocShared(dev int, n int64) (uintptr, error) { return allocShared(dev, n) }

// Free releases memory from Alloc or AllocShared (which must start at p),
// once the GPU has finished its work.
func Free(dev int, p uintptr) error { return free(dev, p) }

// FreeShared frees p when it is memory from AllocShared, whatever GPU's,
// and says whether it was.
func FreeShared(p uintptr) (bool, error) { return freeShared(p) }

// CopyHtoD copies src to device address dst of GPU dev.
func CopyHtoD(dev int, dst uintptr, src []byte) error { return copyHtoD(dev, dst, src) }

// CopyDtoH copies len(dst) bytes from device address src of GPU dev.
func CopyDtoH(dev int, dst []byte, src uintptr) error { return copyDtoH(dev, dst, src) }

// NewStream creates a stream on GPU dev that does not synchronise with the
// default stream.
func NewStream(dev int) (uintptr, error) { return newStream(dev) }

// DestroyStream destroys a stream from NewStream.
func DestroyStream(dev int, h uintptr) error { return destroyStream(dev, h) }

// SyncStream waits for all work on stream h of GPU dev (0: the legacy
// default stream).
func SyncStream(dev int, h uintptr) error { return syncStream(dev, h) }

// BeginCapture starts capturing the work enqueued on stream h of GPU dev
// into a CUDA graph, in relaxed mode: no CUDA call of another goroutine —
// another rank's, on whatever OS thread — breaks the capture or is refused
// because of it.
func BeginCapture(dev int, h uintptr) error { return beginCapture(dev, h) }

// EndCapture stops capturing stream h and instantiates what was captured:
// a CUgraphExec, for LaunchGraph and DestroyGraph.
func EndCapture(dev int, h uintptr) (uintptr, error) { return endCapture(dev, h) }

// LaunchGraph enqueues a replay of graph g on stream h.
func LaunchGraph(dev int, g, h uintptr) error { return launchGraph(dev, g, h) }

// DestroyGraph releases graph g.
func DestroyGraph(dev int, g uintptr) error { return destroyGraph(dev, g) }

// StreamCapturing reports whether stream h of GPU dev is being captured
// into a graph.
func StreamCapturing(dev int, h uintptr) (bool, error) { return streamCapturing(dev, h) }

// StreamOwned reports whether stream h belongs to GPU dev's primary
// context.
func StreamOwned(dev int, h uintptr) (bool, error) { return streamOwned(dev, h) }

// CheckPtr verifies that [p, p+n) is device memory of GPU dev and returns
// its allocation's range.
func CheckPtr(dev int, p uintptr, n int64) (base, size uintptr, err error) {
	return checkPtr(dev, p, n)
}

// SyncBounded waits for sync (a wait for GPUs' work) for at most timeout
// (0 or less: forever), then calls stop and waits again.
func SyncBounded(sync func() error, timeout time.Duration, stop func()) error {
	synced := make(chan error, 1)
	go func() { synced <- sync() }()
	if timeout <= 0 {
		return <-synced
	}
	select {
	case err := <-synced:
		return err
	case <-time.After(timeout):
		stop()
		return <-synced
	}
}
