package peers

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"slices"
	"sync"
	"time"

	"github.com/ringo-ccl/ringo/bootstrap"
)

// Shrink is the survivors' agreement of ncclCommShrink, for ranks in
// separate processes: the ranks of survivors (increasing; this rank of bs
// among them), having excluded the others (exclude, increasing), agree on
// it and on the new communicator's id, which the first survivor makes
// (newID: a root in its process) and hands to the others. It returns this
// rank's Part of the new communicator: ranks numbered in survivors' order.
//
// It needs neither the bootstrap's root nor its ring, either of which a
// dead rank may have taken down: it runs over the point-to-point
// connections between survivors (bs.Pair), which a loss leaves working.
// Two rounds, each an exchange between every two survivors:
//
//  1. each survivor sends its excluded ranks; every survivor compares the
//     others' with its own;
//  2. each sends its verdict — agreement, or what went wrong: a
//     disagreement (naming both ranks and both lists), a survivor lost
//     meanwhile (naming it) — and the first survivor, if it agreed, the new
//     id.
//
// So all survivors fail together, each naming the same trouble, or all get
// the id. Each survivor also tells every rank it excludes and does not know
// lost, on its own (Notify, not waited for): an excluded rank must not call
// Shrink, but one that does — the others left it out while it lives —
// fails at once, naming a survivor that excludes it and both lists, instead
// of waiting for ctx. The first survivor stops its new root when the
// agreement fails after it made the id (stopRoot).
//
// Every survivor's Pair calls with each other survivor are the pair's next
// two, so ranks that took part in different shrinks (or other Pair calls)
// of the communicator fail at once naming the call they are at, instead of
// reading each other's old messages.
func Shrink(ctx context.Context, bs *bootstrap.Bootstrap, survivors, exclude []int,
	newID func() (bootstrap.UniqueID, error), stopRoot func(bootstrap.UniqueID)) (Part, error) {
	me := bs.Rank()
	lead := survivors[0]
	mine, _ := json.Marshal(exclude)
	ctx, told := heedNotices(ctx, bs, survivors, exclude)
	defer told(nil)
	notifyExcluded(bs, exclude, mine)
	lists, errs := exchangeAmong(ctx, bs, survivors, mine)
	if err := context.Cause(ctx); errors.Is(err, errExcluded) {
		return Part{}, err
	}
	awaitLost(ctx, bs, errs)
	var problem error // what this survivor found wrong
	for _, q := range survivors {
		var theirs []int
		switch {
		case q == me:
			continue
		case errs[q] != nil:
			problem = fmt.Errorf("rank %d: %w", q, errs[q])
		case json.Unmarshal(lists[q], &theirs) != nil:
			problem = fmt.Errorf("rank %d sent a malformed list of excluded ranks", q)
		case !slices.Equal(theirs, exclude):
			problem = fmt.Errorf("the ranks disagree on whom to exclude: rank %d excludes %v, rank %d excludes %v", q, theirs, me, exclude)
		}
		if problem != nil {
			break
		}
	}
	var id bootstrap.UniqueID
	made := false
	if me == lead && problem == nil {
		var err error
		if id, err = newID(); err != nil {
			problem = fmt.Errorf("rank %d, the first survivor, could not make the new communicator's id: %w", me, err)
		} else {
			made = true
		}
	}
	verdict := shrinkVerdict{}
	if problem != nil {
		verdict.Err = problem.Error()
	} else if made {
		verdict.ID = id[:]
	}
	blob, _ := json.Marshal(verdict)
	verdicts, errs := exchangeAmong(ctx, bs, survivors, blob)
	awaitLost(ctx, bs, errs)
	fail := func(err error) (Part, error) {
		if made {
			stopRoot(id)
		}
		return Part{}, err
	}
	if problem != nil {
		return fail(problem)
	}
	for _, q := range survivors {
		var v shrinkVerdict
		switch {
		case q == me:
			continue
		case errs[q] != nil:
			return fail(fmt.Errorf("rank %d: %w", q, errs[q]))
		case json.Unmarshal(verdicts[q], &v) != nil:
			return fail(fmt.Errorf("rank %d sent a malformed verdict", q))
		case v.Err != "":
			return fail(fmt.Errorf("rank %d failed: %s", q, v.Err))
		case q == lead:
			var err error
			if id, err = bootstrap.ParseUniqueID(v.ID); err != nil {
				return fail(fmt.Errorf("rank %d, the first survivor, sent a bad id: %w", q, err))
			}
		}
	}
	return Part{ID: id, Rank: slices.Index(survivors, me), Size: len(survivors)}, nil
}

// errExcluded marks the error of a rank that calls Shrink though the
// survivors exclude it.
var errExcluded = errors.New("the other survivors exclude this rank")

// notifyWait bounds a notice's sending: a rank gone refuses it at once, a
// live one takes it within the connection's making.
const notifyWait = 5 * time.Second

// notifyExcluded tells each rank of exclude that bs's bootstrap does not
// count lost that this rank excludes it (list: this rank's excluded ranks),
// in the background: a rank gone, or busy elsewhere, delays nothing. A
// notice that no Shrink of the excluded rank takes stays unread (a later
// Shrink of that rank on this communicator would take it, and fail).
func notifyExcluded(bs *bootstrap.Bootstrap, exclude []int, list []byte) {
	lost := bs.Lost()
	for _, q := range exclude {
		if slices.Contains(lost, q) {
			continue
		}
		go func() {
			ctx, cancel := context.WithTimeout(context.Background(), notifyWait)
			defer cancel()
			bs.Notify(ctx, q, list) // a rank gone or closing: nothing to tell
		}()
	}
}

// heedNotices returns ctx, ended with an error wrapping errExcluded as soon
// as one of the other survivors' notices says it excludes this rank, and
// the function that ends the watch.
func heedNotices(ctx context.Context, bs *bootstrap.Bootstrap, survivors, exclude []int) (context.Context, context.CancelCauseFunc) {
	ctx, cancel := context.WithCancelCause(ctx)
	me := bs.Rank()
	for _, q := range survivors {
		if q == me {
			continue
		}
		go func() {
			blob, err := bs.Notified(ctx, q)
			if err != nil {
				return
			}
			var theirs []int
			if json.Unmarshal(blob, &theirs) != nil || !slices.Contains(theirs, me) {
				return
			}
			cancel(fmt.Errorf("%w: rank %d excludes this rank (rank %d): it excludes %v, this rank %v", errExcluded, q, me, theirs, exclude))
		}()
	}
	return ctx, cancel
}

// shrinkVerdict is a survivor's second message of Shrink.
type shrinkVerdict struct {
	Err string // what went wrong, as this survivor saw it; "" when it agreed
	ID  []byte `json:",omitempty"` // the new communicator's id, from the first survivor
}

// lossGrace bounds how long Shrink waits for the bootstrap to count a
// survivor lost whose connection failed.
const lossGrace = 500 * time.Millisecond

// awaitLost waits, up to lossGrace, until the bootstrap counts lost every
// rank whose exchange failed (a connection that ends or fails comes before
// the root's report, or before the bootstrap's probe of the rank's
// listener): a survivor that retries its shrink with Lost then leaves
// them out. A rank still not counted then is counted lost all the same,
// unless the caller's own context ended the exchange: its pair with this
// rank is out of step for good, so a retry that kept it would fail again.
func awaitLost(ctx context.Context, bs *bootstrap.Bootstrap, errs map[int]error) {
	wait, cancel := context.WithTimeout(ctx, lossGrace)
	defer cancel()
	for q, err := range errs {
		if !bs.AwaitLost(wait, q) && ctx.Err() == nil && !errors.Is(err, context.Canceled) && !errors.Is(err, context.DeadlineExceeded) {
			bs.CountLost(q)
		}
	}
}

// exchangeAmong sends blob to every other rank of ranks and returns what
// each sent this rank, by rank, with the error of each exchange that
// failed: one Pair AllGather with each, all at once.
func exchangeAmong(ctx context.Context, bs *bootstrap.Bootstrap, ranks []int, blob []byte) (map[int][]byte, map[int]error) {
	got, errs := map[int][]byte{}, map[int]error{}
	var mu sync.Mutex
	var wg sync.WaitGroup
	for _, q := range ranks {
		if q == bs.Rank() {
			continue
		}
		wg.Go(func() {
			x := bs.Pair(q)
			both, err := x.AllGather(ctx, blob)
			mu.Lock()
			defer mu.Unlock()
			if err != nil {
				errs[q] = err
				return
			}
			got[q] = both[1-x.Rank()]
		})
	}
	wg.Wait()
	return got, errs
}
