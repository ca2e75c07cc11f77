package ringo

import (
	"context"
	"fmt"

	"github.com/ringo-ccl/ringo/bootstrap"
	"github.com/ringo-ccl/ringo/internal/errs"
	"github.com/ringo-ccl/ringo/internal/group"
	"github.com/ringo-ccl/ringo/internal/peers"
)

// Growing a communicator (NCCL 2.29's ncclCommGetUniqueId and
// ncclCommGrow): one existing rank, the coordinator, makes the grown
// communicator's id with GrowID and hands it to the new ranks by its own
// means (a file, a launcher, the application's messages); every existing
// rank calls Grow, the coordinator passing the id, the others nil (they
// learn it from the coordinator over c's bootstrap); every new rank calls
// JoinGrow with the id and its rank. Existing ranks keep their ranks; the
// new ones take those from Size() up. The grown communicator is a
// communicator of ranks in processes (NewComm's kind; NewGPUComm's for GPU
// ranks), its bootstrap root in the coordinator's process — even when c's ranks share one process
// (NewLocal), whose grown ranks then reach each other through shared
// memory like ranks of separate processes.

// GrowID makes the id of a communicator grown from c: it starts a
// bootstrap root in this process (as NewUniqueID does), which serves the
// grown communicator for its life. If no rank ever joins it, c's Close
// stops it. Call it on one existing rank (the coordinator), before Grow.
func (c *Comm) GrowID() (UniqueID, error) {
	const op = "growid"
	if c.closed.Load() {
		return UniqueID{}, errs.Invalid(op, c.rank, "communicator is closed")
	}
	if !c.busy.CompareAndSwap(false, true) {
		return UniqueID{}, errs.Invalid(op, c.rank, "a call is running on this rank (one goroutine at a time)")
	}
	defer c.release()
	id, err := NewUniqueID()
	if err != nil {
		return UniqueID{}, errs.At(op, c.rank, err)
	}
	c.growIDs = append(c.growIDs, id)
	return id, nil
}

// Grow makes the communicator of c's ranks and newSize−Size() new ones
// (NCCL's ncclCommGrow on an existing rank): every rank of c calls it with
// the same newSize and cfg, the coordinator passing the id GrowID gave it
// and the others nil; it returns once the new ranks (JoinGrow) have come
// too. This rank keeps its rank. c must be healthy and this rank idle; c
// stays usable until closed. cfg nil takes c's configuration, less its
// ring order and group size. Errors: newSize not above Size(), a broken
// or closed c (ErrInvalidArgument); ranks that disagree on newSize, no rank
// or two ranks with different ids (on every rank alike); the new ranks not
// coming before ctx ends, or c's timeout when ctx has no deadline (naming
// them). A GPU rank stays on its GPU (the grown communicator's ranks are
// NewGPUComm's, those of one process among them too); the new ranks join
// with JoinGrowGPU.
func (c *Comm) Grow(ctx context.Context, newSize int, id *UniqueID, cfg *Config) (*Comm, error) {
	const op = "grow"
	if err := c.usable(op); err != nil {
		return nil, err
	}
	if newSize <= c.size {
		return nil, errs.Invalid(op, c.rank, "grow to %d ranks: the communicator has %d already", newSize, c.size)
	}
	return c.remake(ctx, op, true, nil, cfg, func(ctx context.Context, cfg *Config) (*Comm, error) {
		var grown UniqueID
		var err error
		switch g := c.group.(type) {
		case *group.World:
			grown, err = c.growLocal(ctx, g, newSize, id)
		case *group.Procs:
			grown, err = peers.Grow(ctx, g.BS, newSize, id)
		default:
			err = fmt.Errorf("%w: this communicator's ranks cannot grow", ErrNotSupported)
		}
		if err != nil {
			return nil, err
		}
		return c.rejoin(ctx, grown, newSize, c.rank, cfg)
	})
}

// JoinGrow makes this process rank rank (from the old size up) of the
// communicator that id, from GrowID, names, grown to newSize ranks (NCCL's
// ncclCommGrow on a new rank). It is NewComm, under the name of its role:
// it returns once the existing ranks (Grow) and the other new ones have
// come, with NewComm's errors.
func JoinGrow(ctx context.Context, id UniqueID, newSize, rank int, cfg *Config) (*Comm, error) {
	return NewComm(ctx, id, newSize, rank, cfg)
}

// JoinGrowGPU is JoinGrow for a communicator of GPU ranks (NewGPUComm's):
// this process becomes rank rank, on GPU gpu. It is NewGPUComm, with its
// errors (ErrNotSupported in a build without the cuda tag).
func JoinGrowGPU(ctx context.Context, id UniqueID, newSize, rank, gpu int, cfg *Config) (*Comm, error) {
	return NewGPUComm(ctx, id, newSize, rank, gpu, cfg)
}

// growValue is what a rank of one process brings to a grow's meeting.
type growValue struct {
	size int
	id   *UniqueID
}

// growLocal is Grow's agreement among ranks of one process: they meet in
// their world and check, as peers.Grow does across processes, that they
// grow to one size and that one id was passed.
func (c *Comm) growLocal(ctx context.Context, w *group.World, newSize int, id *UniqueID) (UniqueID, error) {
	all := make([]int, c.size)
	for r := range all {
		all[r] = r
	}
	got, err := w.Meet(ctx, "grow", c.rank, all, growValue{newSize, id}, func(values map[int]any) (map[int]any, error) {
		var grown *UniqueID
		from := -1
		for r := range c.size {
			v := values[r].(growValue)
			first := values[0].(growValue)
			switch {
			case v.size != first.size:
				return nil, fmt.Errorf("the ranks disagree on the grown size: rank 0 grows to %d ranks, rank %d to %d", first.size, r, v.size)
			case v.id == nil:
			case grown != nil && *v.id != *grown:
				return nil, fmt.Errorf("ranks %d and %d passed different grow ids", from, r)
			case grown == nil:
				grown, from = v.id, r
			}
		}
		if grown == nil {
			return nil, fmt.Errorf("no rank passed the grow id (the rank that made it with GrowID passes it)")
		}
		if _, err := bootstrap.ParseUniqueID(grown[:]); err != nil {
			return nil, fmt.Errorf("rank %d passed a bad grow id: %w", from, err)
		}
		out := make(map[int]any, c.size)
		for r := range c.size {
			out[r] = *grown
		}
		return out, nil
	})
	if err != nil {
		return UniqueID{}, err
	}
	return got.(UniqueID), nil
}
