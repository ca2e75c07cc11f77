//go:build !cuda

package cuda

// Available reports whether this build can drive GPUs. Without the "cuda"
// build tag it cannot.
func Available() bool { return false }
