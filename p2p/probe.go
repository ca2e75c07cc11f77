package p2p

// Probe reports whether GPU a can access GPU b's memory: nil when it can,
// ErrNoPeerAccess when the driver says it cannot, another error when the
// probe itself failed (cuda.ErrNoCUDA in a build without the cuda tag).
// The answer is cached per ordered pair; a GPU can always access its own
// memory.
func Probe(a, b int) error { return probe(a, b) }
