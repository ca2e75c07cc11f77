package ringo

import (
	"context"
	"fmt"

	"github.com/ringo-ccl/ringo/internal/errs"
)

// What Shrink, Split and Grow share: they make a communicator from c's
// ranks. Each checks its own arguments first (usable, then its own), so a
// refused call leaves c as it was; remake then holds this rank (or aborts
// c's work, for ShrinkAbort) and runs the making.

// usable refuses op on a closed c.
func (c *Comm) usable(op string) error {
	if c.closed.Load() {
		return errs.Invalid(op, c.rank, "communicator is closed")
	}
	return nil
}

// local makes the ranks of a communicator of one process made from c's
// (Shrink, Split), one per entry of gpus (the members' GPU(), -1 for host
// ranks): NewLocalGPUs's for a c of GPU ranks, else NewLocal's.
func (c *Comm) local(gpus []int, cfg *Config) ([]*Comm, error) {
	if c.gpu != nil {
		return NewLocalGPUs(gpus, cfg)
	}
	return NewLocal(len(gpus), cfg)
}

// rejoin makes this rank rank of the size-rank communicator of id, of c's
// kind: NewComm for a host rank, NewGPUComm on c's GPU for a GPU rank.
func (c *Comm) rejoin(ctx context.Context, id UniqueID, size, rank int, cfg *Config) (*Comm, error) {
	if c.gpu != nil {
		return NewGPUComm(ctx, id, size, rank, c.gpu.dev, cfg)
	}
	return NewComm(ctx, id, size, rank, cfg)
}

// remake runs make for op: with healthy, only on a communicator that has
// not failed; then, with abort nil, holding this rank idle for the call,
// else after aborting c's work with abort. make gets cfg (nil: c's,
// inherited) and ctx bounded by c's timeout; its error is located at op.
func (c *Comm) remake(ctx context.Context, op string, healthy bool, abort error, cfg *Config,
	make func(ctx context.Context, cfg *Config) (*Comm, error)) (*Comm, error) {
	if err := c.Err(); healthy && err != nil {
		return nil, errs.InvalidErr(op, c.rank, fmt.Errorf("this needs a healthy communicator (shrink a broken one): %w", err))
	}
	if abort != nil {
		c.abortWith(abort)
	} else {
		if !c.busy.CompareAndSwap(false, true) {
			if c.closed.Load() {
				return nil, errs.Invalid(op, c.rank, "communicator is closed")
			}
			return nil, errs.Invalid(op, c.rank, "a call is running on this rank: %s needs it idle", op)
		}
		defer c.release()
	}
	if cfg == nil {
		cfg = c.inherited()
	}
	ctx, cancel := c.bounded(ctx)
	defer cancel()
	nc, err := make(ctx, cfg)
	if err != nil {
		return nil, errs.At(op, c.rank, err)
	}
	return nc, nil
}

// inherited is the configuration of a communicator made from c with no
// Config of its own: c's, less its ring order and group size.
func (c *Comm) inherited() *Config {
	cfg := configOf(&c.made)
	cfg.Ring, cfg.Group = nil, 0
	return &cfg
}

// bounded returns ctx bounded, when it has no deadline, by c's timeout.
func (c *Comm) bounded(ctx context.Context) (context.Context, context.CancelFunc) {
	if _, ok := ctx.Deadline(); !ok && c.cfg.Timeout > 0 {
		return context.WithTimeout(ctx, c.cfg.Timeout)
	}
	return context.WithCancel(ctx)
}
