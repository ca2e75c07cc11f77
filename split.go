package ringo

import (
	"cmp"
	"context"
	"fmt"
	"maps"
	"slices"

	"github.com/ringo-ccl/ringo/internal/group"
	"github.com/ringo-ccl/ringo/internal/peers"
)

// Split makes the communicators of NCCL's ncclCommSplit: every rank of c
// calls it; the ranks that give the same color ≥ 0 form one communicator,
// ordered by key and then by their rank in c; a negative color takes no
// part and gets nil. c must be healthy and this rank idle; c stays usable.
// cfg nil takes c's configuration, less its ring order and group size.
//
// Ranks in one process meet in memory, each color's a new communicator of
// their kind (NewLocal's, or NewLocalGPUs's with each rank on its GPU),
// made with its first member's cfg; host ranks in separate processes meet
// over c's bootstrap and each color's first member starts the new
// communicator's root. GPU communicators made by NewGPUComm split each
// rank on its GPU (ranks may be in several processes); in a build without
// the cuda tag, that returns an error wrapping ErrNotSupported.
func (c *Comm) Split(ctx context.Context, color, key int, cfg *Config) (*Comm, error) {
	if _, procs := c.group.(*group.Procs); c.gpu != nil && procs {
		return c.split(ctx, color, key, cfg)
	}
	const op = "split"
	if err := c.usable(op); err != nil {
		return nil, err
	}
	return c.remake(ctx, op, true, nil, cfg, func(ctx context.Context, cfg *Config) (*Comm, error) {
		switch g := c.group.(type) {
		case *group.World:
			return c.splitLocal(ctx, g, color, key, cfg)
		case *group.Procs:
			part, err := peers.Split(ctx, g.BS, color, key, NewUniqueID)
			if err != nil || color < 0 {
				return nil, err
			}
			return NewComm(ctx, part.ID, part.Size, part.Rank, cfg)
		}
		return nil, fmt.Errorf("%w: this communicator's ranks cannot be split", ErrNotSupported)
	})
}

// localValue is what a rank of one process brings to a shrink's or a
// split's meeting.
type localValue struct {
	color, key int
	cfg        *Config
	gpu        int // the rank's GPU; -1 for a host rank
}

// splitLocal is Split of ranks in one process: every rank meets in their
// world and the last to come makes each color's NewLocal communicator.
func (c *Comm) splitLocal(ctx context.Context, w *group.World, color, key int, cfg *Config) (*Comm, error) {
	all := make([]int, c.size)
	for r := range all {
		all[r] = r
	}
	got, err := w.Meet(ctx, "split", c.rank, all, localValue{color: color, key: key, cfg: cfg, gpu: c.GPU()}, func(values map[int]any) (map[int]any, error) {
		byColor := map[int][]int{}
		for r := range c.size {
			if v := values[r].(localValue); v.color >= 0 {
				byColor[v.color] = append(byColor[v.color], r)
			}
		}
		out := make(map[int]any, c.size)
		var made []*Comm
		for _, col := range slices.Sorted(maps.Keys(byColor)) {
			members := byColor[col]
			slices.SortStableFunc(members, func(a, b int) int { return cmp.Compare(values[a].(localValue).key, values[b].(localValue).key) })
			gpus := make([]int, len(members))
			for i, r := range members {
				gpus[i] = values[r].(localValue).gpu
			}
			comms, err := c.local(gpus, values[members[0]].(localValue).cfg)
			if err != nil {
				for _, m := range made {
					m.Close()
				}
				return nil, fmt.Errorf("color %d (ranks %v): %w", col, members, err)
			}
			made = append(made, comms...)
			for i, r := range members {
				out[r] = comms[i]
			}
		}
		return out, nil
	})
	if err != nil || got == nil {
		return nil, err
	}
	return got.(*Comm), nil
}
