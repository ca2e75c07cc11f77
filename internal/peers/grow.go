package peers

import (
	"context"
	"encoding/json"
	"fmt"

	"github.com/ringo-ccl/ringo/bootstrap"
	"github.com/ringo-ccl/ringo/transport"
)

// growInfo is what an existing rank tells the others in a grow.
type growInfo struct {
	Size int
	ID   []byte `json:",omitempty"` // the grown communicator's id, from the rank that has it
}

// Grow is the existing ranks' agreement of ncclCommGrow, over ex (every
// rank of the communicator, all healthy): each says the size it grows the
// communicator to, and the rank (or ranks) that made the new
// communicator's id (id non-nil) hands it to the others. It returns that
// id. Errors, on every rank alike: sizes that differ (naming two ranks and
// their sizes), no rank with an id, or two different ids (naming the
// ranks).
func Grow(ctx context.Context, ex transport.Exchanger, size int, id *bootstrap.UniqueID) (bootstrap.UniqueID, error) {
	mine := growInfo{Size: size}
	if id != nil {
		mine.ID = id[:]
	}
	b, _ := json.Marshal(mine)
	blobs, err := ex.AllGather(ctx, b)
	if err != nil {
		return bootstrap.UniqueID{}, err
	}
	all := make([]growInfo, len(blobs))
	for r := range blobs {
		if err := json.Unmarshal(blobs[r], &all[r]); err != nil {
			return bootstrap.UniqueID{}, fmt.Errorf("rank %d sent a malformed grow: %v", r, err)
		}
	}
	var got bootstrap.UniqueID
	from := -1
	for r, gi := range all {
		if gi.Size != all[0].Size {
			return bootstrap.UniqueID{}, fmt.Errorf("the ranks disagree on the grown size: rank 0 grows to %d ranks, rank %d to %d", all[0].Size, r, gi.Size)
		}
		if gi.ID == nil {
			continue
		}
		theirs, err := bootstrap.ParseUniqueID(gi.ID)
		switch {
		case err != nil:
			return bootstrap.UniqueID{}, fmt.Errorf("rank %d passed a bad grow id: %w", r, err)
		case from >= 0 && theirs != got:
			return bootstrap.UniqueID{}, fmt.Errorf("ranks %d and %d passed different grow ids", from, r)
		case from < 0:
			got, from = theirs, r
		}
	}
	if from < 0 {
		return bootstrap.UniqueID{}, fmt.Errorf("no rank passed the grow id (the rank that made it with GrowID passes it)")
	}
	return got, nil
}
