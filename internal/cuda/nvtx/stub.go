//go:build !cuda

package nvtx

// Message is a range's name; without the cuda tag, nothing.
type Message struct{}

// Range is a started range; without the cuda tag, nothing.
type Range uint64

// Enabled reports false: this build has no NVTX.
func Enabled() bool { return false }

// Register does nothing without the cuda tag.
func Register(string) Message { return Message{} }

// NameCategory does nothing without the cuda tag.
func NameCategory(uint32, string) {}

// Start does nothing without the cuda tag.
func Start(Message, uint32, uint32, uint64) Range { return 0 }

// End does nothing without the cuda tag.
func End(Range) {}
