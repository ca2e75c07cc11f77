package peers

import (
	"context"
	"encoding/json"
	"fmt"
	"slices"
	"sort"

	"github.com/ringo-ccl/ringo/bootstrap"
	"github.com/ringo-ccl/ringo/transport"
)

// splitInfo is what a rank tells the others in a split.
type splitInfo struct {
	Color, Key int
	ID         []byte // the new communicator's id, from its color's first rank
	Err        string // why that rank could not make one
}

// Part is a rank's place in the communicator a split makes: its id, the
// rank's index in it and its size.
type Part struct {
	ID         bootstrap.UniqueID
	Rank, Size int
}

// Split is the meeting of ncclCommSplit over ex, which every
// rank of the communicator enters: the ranks giving the same color ≥ 0 are
// ordered by key, then by their rank, and the first makes the new
// communicator's id (newID) and hands it to the others. A rank with a
// negative color takes part and gets nothing. When the first rank of a
// color cannot make the id, every rank of that color fails naming it; no
// rank waits for an id that will not come.
func Split(ctx context.Context, ex transport.Exchanger, color, key int, newID func() (bootstrap.UniqueID, error)) (Part, error) {
	gather := func(si splitInfo) ([]splitInfo, error) {
		b, _ := json.Marshal(si)
		blobs, err := ex.AllGather(ctx, b)
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
		return Part{}, err
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
	if len(members) > 0 && members[0] == ex.Rank() {
		if id, err := newID(); err != nil {
			mine.Err = err.Error()
		} else {
			mine.ID = id[:]
		}
	}
	if all, err = gather(mine); err != nil || color < 0 {
		return Part{}, err
	}
	lead := all[members[0]]
	if lead.Err != "" {
		return Part{}, fmt.Errorf("rank %d, the first of color %d, could not make the new communicator's id: %s", members[0], color, lead.Err)
	}
	id, err := bootstrap.ParseUniqueID(lead.ID)
	if err != nil {
		return Part{}, fmt.Errorf("rank %d sent a bad id for color %d: %w", members[0], color, err)
	}
	return Part{ID: id, Rank: slices.Index(members, ex.Rank()), Size: len(members)}, nil
}
