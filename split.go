package ringo

import "context"

// Split makes the communicators of NCCL's ncclCommSplit: every rank of c
// calls it; the ranks that give the same color ≥ 0 form one communicator,
// ordered by key and then by their rank in c, each on its GPU; a negative
// color takes no part and gets nil. It works for communicators made by
// NewGPUComm (whose ranks may be in several processes); in a build without
// the cuda tag, it returns an error wrapping ErrNotSupported.
func (c *Comm) Split(ctx context.Context, color, key int, cfg *Config) (*Comm, error) {
	return c.split(ctx, color, key, cfg)
}
