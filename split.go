package ringo

import (
	"context"
	"encoding/json"
	"fmt"
	"slices"
	"sort"

	"github.com/ringo-ccl/ringo/bootstrap"
)

// Split makes the communicators of NCCL's ncclCommSplit: every rank of c
// calls it; the ranks that give the same color ≥ 0 form one communicator,
// ordered by key and then by their rank in c, each on its GPU; a negative
// color takes no part and gets nil. It works for communicators made by
// NewGPUComm (whose ranks may be in several processes); in a build without
// the cuda tag, it returns an error wrapping ErrNotSupported.
func (c *Comm) Split(ctx context.Context, color, key int, cfg *Config) (*Comm, error) {
	return c.split(ctx, color, key, cfg)
}

// splitInfo is what a rank tells the others in a split.
type splitInfo struct {
	Color, Key int
	ID         []byte // the new communicator's id, from its color's first rank
	Err        string // why that rank could not make one
}

// splitPart is a rank's place in the communicator a split makes.
type splitPart struct {
	id         UniqueID
	rank, size int
}

// splitRendezvous is the meeting of ncclCommSplit over bs, which every
// rank of the communicator enters: the ranks giving the same color ≥ 0 are
// ordered by key, then by their rank, and the first makes the new
// communicator's id (newID) and hands it to the others. A rank with a
// negative color takes part and gets nothing. When the first rank of a
// color cannot make the id, every rank of that color fails naming it; no
// rank waits for an id that will not come.
func splitRendezvous(ctx context.Context, bs *bootstrap.Bootstrap, color, key int, newID func() (UniqueID, error)) (splitPart, error) {
	gather := func(si splitInfo) ([]splitInfo, error) {
		b, _ := json.Marshal(si)
		blobs, err := bs.AllGather(ctx, b)
		if err != nil {
			return nil, err
		}
		out := make([]splitInfo, len(blobs))
		for r := range blobs {
			if err := json.Unmarshal(blobs[r], &out[r]); err != nil {
				return nil, fmt.Errorf("rank %d sent a malformed split: %v", r, err)
			}
		}
		return out, nil
	}
	all, err := gather(splitInfo{Color: color, Key: key})
	if err != nil {
		return splitPart{}, err
	}
	// My color's members in order; the first makes the id.
	var members []int
	for r, si := range all {
		if color >= 0 && si.Color == color {
			members = append(members, r)
		}
	}
	sort.SliceStable(members, func(i, j int) bool { return all[members[i]].Key < all[members[j]].Key })
	mine := splitInfo{Color: color, Key: key}
	if len(members) > 0 && members[0] == bs.Rank() {
		if id, err := newID(); err != nil {
			mine.Err = err.Error()
		} else {
			mine.ID = id[:]
		}
	}
	if all, err = gather(mine); err != nil || color < 0 {
		return splitPart{}, err
	}
	lead := all[members[0]]
	if lead.Err != "" {
		return splitPart{}, fmt.Errorf("rank %d, the first of color %d, could not make the new communicator's id: %s", members[0], color, lead.Err)
	}
	id, err := bootstrap.ParseUniqueID(lead.ID)
	if err != nil {
		return splitPart{}, fmt.Errorf("rank %d sent a bad id for color %d: %w", members[0], color, err)
	}
	return splitPart{id: id, rank: slices.Index(members, bs.Rank()), size: len(members)}, nil
}
