package hier

import (
	"context"
	"fmt"
	"slices"

	"github.com/ringo-ccl/ringo/bootstrap"
	"github.com/ringo-ccl/ringo/internal/peers"
	"github.com/ringo-ccl/ringo/ring"
	"github.com/ringo-ccl/ringo/transport"
)

// Maker makes the communicators of one split of a hierarchy — its groups
// or its columns, parts[i] the parent ranks of part i — for the parent's
// ranks in this process: subs[r] is parent rank r's, unset for a rank of
// another process. When a part cannot be made it returns the part's index
// with the error, having closed what it made.
type Maker[C Sub] func(parts [][]int) (subs []C, failed int, err error)

// Make gives the parent ranks r with local[r] — the communicator's ranks
// in this process — their group's and their column's communicators, made
// by mk as h splits the ranks: parts[r] is rank r's, nil for a rank of
// another process. When one cannot be made, the error names its group or
// column and nothing made is left open.
func Make[C Sub](h ring.Hierarchy, local []bool, mk Maker[C]) ([]*Part[C], error) {
	parts := make([]*Part[C], len(local))
	groups, failed, err := mk(h.Groups)
	if err != nil {
		return nil, fmt.Errorf("group %d %v: %w", failed, h.Groups[failed], err)
	}
	for i, g := range h.Groups {
		for j, r := range g {
			if local[r] {
				parts[r] = &Part[C]{Intra: groups[r], Group: i, Pos: j, Size: h.Size}
			}
		}
	}
	columns, failed, err := mk(h.Columns)
	if err != nil {
		for _, p := range parts {
			if p != nil {
				p.Intra.Close()
			}
		}
		return nil, fmt.Errorf("column %d %v: %w", failed, h.Columns[failed], err)
	}
	for r, p := range parts {
		if p != nil {
			p.Inter = columns[r]
		}
	}
	return parts, nil
}

// Local makes each part's ranks together in this process with mk (the
// ranks of NewLocal or NewLocalGPUs).
func Local[C Sub](mk func(ranks []int) ([]C, error)) Maker[C] {
	return func(parts [][]int) ([]C, int, error) {
		subs := make([]C, len(parts)*len(parts[0]))
		for i, part := range parts {
			made, err := mk(part)
			if err != nil {
				for _, done := range parts[:i] {
					for _, r := range done {
						subs[r].Close()
					}
				}
				return nil, i, err
			}
			for j, r := range part {
				subs[r] = made[j]
			}
		}
		return subs, -1, nil
	}
}

// Split makes the part of a rank in its own process (whose parent's
// bootstrap is ex) as NCCL's ncclCommSplit does: a rendezvous of all the
// parent's ranks (color: the part's index, key: the rank's place in it),
// then mk makes the rank's communicator from its place in the part, each
// rank in its process. The ranks then tell each other whether they made
// theirs, so that all fail together, naming a part that was not made.
func Split[C Sub](ctx context.Context, ex transport.Exchanger, mk func(p peers.Part) (C, error)) Maker[C] {
	return func(parts [][]int) ([]C, int, error) {
		rank := ex.Rank()
		partOf := func(r int) (part, pos int) {
			for i, p := range parts {
				if j := slices.Index(p, r); j >= 0 {
					return i, j
				}
			}
			return -1, 0
		}
		color, key := partOf(rank)
		var sub C
		made := false
		p, err := peers.Split(ctx, ex, color, key, bootstrap.NewUniqueID)
		if err == nil {
			sub, err = mk(p)
			made = err == nil
		}
		var why []byte
		if err != nil {
			why = []byte(err.Error())
		}
		all, gerr := ex.AllGather(ctx, why)
		if err == nil && gerr != nil {
			err = fmt.Errorf("learning whether the other ranks made theirs: %w", gerr)
		}
		for r := range all {
			if err == nil && len(all[r]) > 0 {
				color, _ = partOf(r)
				err = fmt.Errorf("rank %d could not make its communicator: %s", r, all[r])
			}
		}
		if err != nil {
			if made {
				sub.Close()
			}
			return nil, color, err
		}
		subs := make([]C, ex.Size())
		subs[rank] = sub
		return subs, -1, nil
	}
}
