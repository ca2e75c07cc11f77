package ringo

import (
	"context"
	"fmt"

	"github.com/ringo-ccl/ringo/bootstrap"
	"github.com/ringo-ccl/ringo/internal/errs"
	"github.com/ringo-ccl/ringo/internal/group"
	"github.com/ringo-ccl/ringo/internal/peers"
)

// Shrink makes a communicator of this one's ranks less those of exclude,
// renumbered in order (NCCL's ncclCommShrink with NCCL_SHRINK_DEFAULT):
// every remaining rank calls it, with the same exclude (in any order);
// the excluded ranks do not. It returns this rank's Comm of the new
// communicator; c stays as it was — still usable if it was healthy —
// until closed.
//
// DEFAULT mode needs this rank idle (no call running on it) but not the
// communicator healthy: shrink a healthy one to drop live ranks, or one
// that has failed or been revoked. ShrinkAbort is the mode for a rank with
// a call stuck on another goroutine.
//
// cfg configures the new communicator; nil takes c's own configuration,
// less its ring order and group size (which were for c's ranks). Every
// rank must pass the same.
//
// The survivors agree before anything is made: ranks that disagree on
// exclude all fail, naming two of them and what each excludes; a survivor
// lost meanwhile fails them all, naming it — by then Lost lists it, so
// that a second call with Lost succeeds. A rank that the others exclude
// but that calls Shrink anyway (an excluded rank must not) fails at once,
// naming a survivor that excludes it and both lists: across processes each
// survivor tells the live ranks it excludes, and the others go on without
// it; in one process, where they meet in memory, it fails them all while
// they still meet.
//
// Ranks in one process get a new communicator of their kind (NewLocal's,
// or NewLocalGPUs's with each rank on its GPU). Ranks
// in separate processes (NewComm, and NewGPUComm's GPU ranks, each keeping
// its GPU) agree over the point-to-point connections of c's
// bootstrap, which a lost rank leaves working — not over its root, which
// may have died with a rank — and the first survivor starts the new
// communicator's bootstrap root in its own process (so the new
// communicator depends on no excluded rank); the new communicator's
// connections are made afresh (see README "Surviving a lost rank").
// Nothing waits for an excluded rank.
// Every wait is bounded by ctx, or, when ctx has no deadline, by c's
// timeout (Config.Timeout). Errors wrap ErrInvalidArgument for a bad
// exclude (a rank out of range or twice, this rank, every rank) or a
// closed c, ErrPeerLost for a survivor lost during the shrink.
func (c *Comm) Shrink(ctx context.Context, exclude []int, cfg *Config) (*Comm, error) {
	return c.shrink(ctx, exclude, cfg, false)
}

// ShrinkAbort is Shrink after aborting this rank's work on c (NCCL's
// ncclCommShrink with NCCL_SHRINK_ABORT): a call in progress on c, on any
// goroutine, ends with ErrAborted, as do later ones — c is broken for good
// and only to be closed — and the shrink goes on as Shrink's. On a GPU
// rank the abort stops c's kernels (as Abort does) before the new
// communicator is made; c's memory is freed when c is closed, which the
// caller does after the shrink (closing first would wait, up to 10 s, for
// the lost ranks to let go of it). It is the
// mode for survivors of a lost rank whose calls may still be waiting. Safe
// to call while another goroutine is inside a call on c.
func (c *Comm) ShrinkAbort(ctx context.Context, exclude []int, cfg *Config) (*Comm, error) {
	return c.shrink(ctx, exclude, cfg, true)
}

func (c *Comm) shrink(ctx context.Context, exclude []int, cfg *Config, abort bool) (*Comm, error) {
	const op = "shrink"
	if err := c.usable(op); err != nil {
		return nil, err
	}
	survivors, excluded, err := survivorsOf(c.rank, c.size, exclude)
	if err != nil {
		return nil, errs.InvalidErr(op, c.rank, err)
	}
	var cause error
	if abort {
		cause = fmt.Errorf("rank %d called ShrinkAbort", c.rank)
	}
	return c.remake(ctx, op, false, cause, cfg, func(ctx context.Context, cfg *Config) (*Comm, error) {
		switch g := c.group.(type) {
		case *group.World:
			return c.shrinkLocal(ctx, g, survivors, cfg)
		case *group.Procs:
			return shrinkProcs(ctx, g.BS, survivors, excluded, cfg, c.rejoin)
		}
		return nil, fmt.Errorf("%w: this communicator's ranks cannot be shrunk", ErrNotSupported)
	})
}

// survivorsOf checks exclude for rank of a communicator of size ranks and
// returns the ranks that remain and those excluded, both increasing.
func survivorsOf(rank, size int, exclude []int) (survivors, excluded []int, err error) {
	seen := make(map[int]int, len(exclude))
	for i, r := range exclude {
		if r < 0 || r >= size {
			return nil, nil, fmt.Errorf("exclude[%d] = %d is no rank of this communicator of %d ranks (0…%d)", i, r, size, size-1)
		}
		if j, dup := seen[r]; dup {
			return nil, nil, fmt.Errorf("rank %d is excluded twice (exclude[%d] and exclude[%d])", r, j, i)
		}
		seen[r] = i
	}
	if len(seen) == size {
		return nil, nil, fmt.Errorf("exclude names every rank of this communicator of %d ranks: none would remain", size)
	}
	if _, self := seen[rank]; self {
		return nil, nil, fmt.Errorf("exclude names this rank (%d): an excluded rank does not call Shrink", rank)
	}
	for r := range size {
		if _, out := seen[r]; out {
			excluded = append(excluded, r)
		} else {
			survivors = append(survivors, r)
		}
	}
	return survivors, excluded, nil
}

// shrinkLocal is Shrink of ranks in one process: they meet in their world
// (group.World.Meet) and the last to come makes the survivors' NewLocal
// communicator — NewLocalGPUs's, each rank on its GPU, for GPU ranks —
// with the first survivor's cfg.
func (c *Comm) shrinkLocal(ctx context.Context, w *group.World, survivors []int, cfg *Config) (*Comm, error) {
	got, err := w.Meet(ctx, "shrink", c.rank, survivors, localValue{cfg: cfg, gpu: c.GPU()}, func(values map[int]any) (map[int]any, error) {
		gpus := make([]int, len(survivors))
		for i, r := range survivors {
			gpus[i] = values[r].(localValue).gpu
		}
		comms, err := c.local(gpus, values[survivors[0]].(localValue).cfg)
		if err != nil {
			return nil, err
		}
		out := make(map[int]any, len(survivors))
		for i, r := range survivors {
			out[r] = comms[i]
		}
		return out, nil
	})
	if err != nil {
		return nil, err
	}
	return got.(*Comm), nil
}

// shrinkProcs is Shrink of a rank in its own process: the survivors agree
// over bs's point-to-point connections (peers.Shrink), then join (with
// join: Comm.rejoin) the new communicator whose root the first survivor
// started. When the first survivor cannot join, it stops that root, so
// that the others fail at once instead of waiting for it.
func shrinkProcs(ctx context.Context, bs *bootstrap.Bootstrap, survivors, excluded []int, cfg *Config,
	join func(ctx context.Context, id UniqueID, size, rank int, cfg *Config) (*Comm, error)) (*Comm, error) {
	part, err := peers.Shrink(ctx, bs, survivors, excluded, NewUniqueID, bootstrap.StopRoot)
	if err != nil {
		return nil, err
	}
	nc, err := join(ctx, part.ID, part.Size, part.Rank, cfg)
	if err != nil {
		if part.Rank == 0 {
			bootstrap.StopRoot(part.ID)
		}
		return nil, err
	}
	return nc, nil
}
