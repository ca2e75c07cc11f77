//go:build !cuda

package cuda

// Available reports whether this build can drive GPUs. Without the "cuda"
// build tag it cannot.
func Available() bool { return false }

// FreeMemory fails with ErrNoCUDA: this build has no GPUs.
func FreeMemory(int) (int64, error) { return 0, ErrNoCUDA }
