package main

import (
	"cmp"
	"context"
	"slices"
	"sync"
	"time"
)

// A creation is one rank's part in making a communicator: an
// ncclCommInitRank* call, one parent rank's ncclCommSplit, or one device of
// ncclCommInitAll. Its run makes the rank through ringo, which blocks until
// every rank of the communicator — in this process or in others — has
// joined, so the creations of one process run concurrently.
type creation struct {
	fn          string     // the API, for messages
	entry       *commEntry // the handle it fills; nil for a split's NCCL_SPLIT_NOCOLOR
	parent      *commEntry // the communicator split, shrunk or grown; nil for an init
	init        *idRank    // for ncclCommInitRank*: the rank of a unique id it makes
	nonblocking bool       // its communicator's config.blocking is 0 (nonblocking.go)
	run         func(ctx context.Context) (rankComm, error)

	// Guarded by registry.mu.
	running   bool               // run has started
	withdrawn bool               // its handle was destroyed before it started: it never runs
	finished  chan struct{}      // made when it starts; closed once its entry holds the outcome
	cancel    context.CancelFunc // set when it starts: ends run's context (ncclCommAbort)

	err error // the outcome, set before finished is closed
}

// idRank names a rank of the communicator of a unique id.
type idRank struct {
	id           [128]byte
	nranks, rank int
}

// idRanks are this process's ranks of one unique id being made.
type idRanks struct {
	nranks int
	ranks  map[int]*creation // by rank
}

// ncclSplitNoColor is NCCL_SPLIT_NOCOLOR.
const ncclSplitNoColor = -1

// groupState is one thread's ncclGroupStart nesting and what its
// outermost ncclGroupEnd runs: first the creations, concurrently, then the
// sends and receives, as one ringo.SendRecv (group.go).
type groupState struct {
	depth    int
	mode     groupMode   // the kind of the communicators of its creations, sends and receives
	deferred []*creation // enrolled inside the group, run at its end
	p2p      []p2pOp     // ncclSend, ncclRecv and the calls made of them, in order
	windows  []*windowOp // ncclCommWindowRegister's, run after the creations
	err      error       // the first failure that fails the group (a send's or receive's argument error, a communicator of the other mode): the end reports it and runs none of its sends and receives
}

// groupMode is the kind of communicators a group holds: NCCL refuses
// blocking and non-blocking ones in one group.
type groupMode uint8

const (
	groupUnset groupMode = iota // none yet
	groupBlocking
	groupNonblocking
)

var groupModes = [...]string{"unset", "blocking", "non-blocking"}

// join admits a creation, send or receive of fn on a communicator that is
// non-blocking or not into g. The first sets g's mode; one of the other
// mode is refused, as NCCL refuses it, and fails the group (g.err).
func (g *groupState) join(fn string, nonblocking bool) error {
	mode := groupBlocking
	if nonblocking {
		mode = groupNonblocking
	}
	switch g.mode {
	case groupUnset:
		g.mode = mode
	case mode:
	default:
		err := invalidArg("%s: Blocking and nonblocking communicators are not allowed in the same group (this communicator is %s, the group's are %s)", fn, groupModes[mode], groupModes[g.mode])
		g.err = cmp.Or(g.err, err)
		return err
	}
	return nil
}

// registry holds the threads' groups and the creations deferred to their
// ends or under way. Safe for concurrent use: every C thread calls into it.
type registry struct {
	timeout func() time.Duration // bound of a creation; ≤ 0: none

	mu     sync.Mutex // guards inits, groups, and the fields so marked elsewhere
	inits  map[[128]byte]*idRanks
	groups map[uint64]*groupState // by thread
	spare  spares[groupState]     // closed groups, reused (recycle)
}

func newRegistry(timeout func() time.Duration) *registry {
	return &registry{timeout: timeout, inits: map[[128]byte]*idRanks{}, groups: map[uint64]*groupState{}}
}

// groupStart opens a (nested) group on thread tid.
func (r *registry) groupStart(tid uint64) {
	r.mu.Lock()
	defer r.mu.Unlock()
	g := r.groups[tid]
	if g == nil {
		g = r.spare.get()
		r.groups[tid] = g
	}
	g.depth++
}

// recycle keeps g, a closed group whose end has run and that nothing
// refers to any more, for a later group to reuse its slices.
func (r *registry) recycle(g *groupState) {
	clear(g.deferred)
	clear(g.p2p)
	clear(g.windows)
	*g = groupState{deferred: g.deferred[:0], p2p: g.p2p[:0], windows: g.windows[:0]}
	r.spare.put(g)
}

// inGroup reports whether thread tid has a group open.
func (r *registry) inGroup(tid uint64) bool {
	r.mu.Lock()
	defer r.mu.Unlock()
	return r.groups[tid] != nil
}

// closeGroup closes thread tid's innermost group. Closing the outermost
// returns it, for the caller to run what it holds (library.groupEnd);
// closing an inner one returns nil.
func (r *registry) closeGroup(tid uint64) (*groupState, error) {
	r.mu.Lock()
	defer r.mu.Unlock()
	g := r.groups[tid]
	if g == nil {
		return nil, invalidUsage("ncclGroupEnd: no ncclGroupStart is open on this thread")
	}
	g.depth--
	if g.depth > 0 {
		return nil, nil
	}
	delete(r.groups, tid)
	return g, nil
}

// deferP2P records ops, of one call on one communicator, in thread tid's
// group and reports true, or reports false when the thread has no group
// open (the caller runs them). A communicator of the other mode than the
// group's is refused (groupState.join).
func (r *registry) deferP2P(tid uint64, ops ...p2pOp) (bool, error) {
	r.mu.Lock()
	defer r.mu.Unlock()
	g := r.groups[tid]
	if g == nil {
		return false, nil
	}
	if err := g.join(ops[0].fn, ops[0].entry.cfg.nonblocking()); err != nil {
		return true, err
	}
	g.p2p = append(g.p2p, ops...)
	return true, nil
}

// deferWindow records op in thread tid's group and reports true, or
// reports false when the thread has no group open (the caller runs it). A
// communicator of the other mode than the group's is refused
// (groupState.join).
func (r *registry) deferWindow(tid uint64, op *windowOp) (bool, error) {
	r.mu.Lock()
	defer r.mu.Unlock()
	g := r.groups[tid]
	if g == nil {
		return false, nil
	}
	if err := g.join(op.fn, op.entry.cfg.nonblocking()); err != nil {
		return true, err
	}
	g.windows = append(g.windows, op)
	return true, nil
}

// failP2P records err, a send's or receive's argument error, in thread
// tid's group, if one is open: as in NCCL, its end then fails with the
// first such error and runs none of its sends and receives.
func (r *registry) failP2P(tid uint64, err error) {
	r.mu.Lock()
	defer r.mu.Unlock()
	if g := r.groups[tid]; g != nil && g.err == nil {
		g.err = err
	}
}

// enroll takes c. Inside a group of thread tid it is recorded (deferred =
// true) to run at the group's end; otherwise the caller runs it
// (library.create). An ncclCommInitRank* creation is refused when this
// process is already making the same rank of its unique id, or when its
// nranks differs from that of the id's other ranks being made here; one of
// the other mode than its group's is refused (groupState.join).
func (r *registry) enroll(tid uint64, c *creation) (deferred bool, err error) {
	r.mu.Lock()
	defer r.mu.Unlock()
	k := c.init
	var ir *idRanks // this process's other ranks of k's id
	if k != nil {
		ir = r.inits[k.id]
	}
	switch {
	case ir != nil && ir.nranks != k.nranks:
		return false, invalidArg("%s: nranks %d differs from the %d ranks another call in this process gave with the same ncclUniqueId", c.fn, k.nranks, ir.nranks)
	case ir != nil && ir.ranks[k.rank] != nil:
		return false, invalidArg("%s: rank %d of ncclUniqueId %#x is already being initialised by another call", c.fn, k.rank, idHash(k.id))
	}
	g := r.groups[tid]
	if g != nil {
		if err := g.join(c.fn, c.nonblocking); err != nil {
			return false, err
		}
		g.deferred = append(g.deferred, c)
	}
	if k != nil {
		if ir == nil {
			ir = &idRanks{nranks: k.nranks, ranks: map[int]*creation{}}
			r.inits[k.id] = ir
		}
		ir.ranks[k.rank] = c
	}
	if c.entry != nil {
		c.entry.creation = c
	}
	return g != nil, nil
}

// run runs the creations of cs that were not withdrawn, each on a
// goroutine of its own — they wait for each other in ringo's bootstrap —
// under one context bounded by the timeout (each may be cancelled alone:
// withdraw), and waits for them all. It returns the first one's error.
func (r *registry) run(cs []*creation) error {
	if len(cs) == 0 {
		return nil
	}
	ctx, cancel := r.context()
	defer cancel()
	var live []*creation
	var ctxs []context.Context
	r.mu.Lock()
	for _, c := range cs {
		if !c.withdrawn {
			c.running, c.finished = true, make(chan struct{})
			cctx, stop := context.WithCancel(ctx)
			c.cancel = stop
			live, ctxs = append(live, c), append(ctxs, cctx)
		}
	}
	r.mu.Unlock()
	var wg sync.WaitGroup
	for i, c := range live {
		wg.Go(func() { r.do(ctxs[i], c) })
	}
	wg.Wait()
	for _, c := range live {
		if c.err != nil {
			return c.err
		}
	}
	return nil
}

// context bounds a run of creations by the timeout.
func (r *registry) context() (context.Context, context.CancelFunc) {
	if t := r.timeout(); t > 0 {
		return context.WithTimeout(context.Background(), t)
	}
	return context.WithCancel(context.Background())
}

// do runs c and gives its entry the outcome. A panic fails c: on a goroutine
// of its own, it would otherwise end the process.
func (r *registry) do(ctx context.Context, c *creation) {
	comm, err := func() (comm rankComm, err error) {
		defer func() {
			if p := recover(); p != nil {
				comm, err = nil, panicError(c.fn, p)
			}
		}()
		return c.run(ctx)
	}()
	if err == nil && comm == nil && c.entry != nil {
		err = apiErrorf(ncclInternalError, "%s: ringo returned no communicator and no error", c.fn)
	}
	if c.entry != nil {
		if err != nil {
			c.entry.fail(err)
		} else {
			c.entry.ready(comm)
		}
	}
	c.err = err
	r.mu.Lock()
	r.forget(c)
	r.mu.Unlock()
	close(c.finished)
}

// forget drops c from the registry's tables. Called with r.mu held.
func (r *registry) forget(c *creation) {
	if c.entry != nil && c.entry.creation == c {
		c.entry.creation = nil
	}
	if k := c.init; k != nil {
		if ir := r.inits[k.id]; ir != nil && ir.ranks[k.rank] == c {
			delete(ir.ranks, k.rank)
			if len(ir.ranks) == 0 {
				delete(r.inits, k.id)
			}
		}
	}
}

// waiting returns the ranks of unique id that this process has enrolled
// inside a group whose ncclGroupEnd has not run, for messages.
func (r *registry) waiting(id [128]byte) []int {
	r.mu.Lock()
	defer r.mu.Unlock()
	var ranks []int
	if ir := r.inits[id]; ir != nil {
		for rank, c := range ir.ranks {
			if !c.running {
				ranks = append(ranks, rank)
			}
		}
	}
	slices.Sort(ranks)
	return ranks
}

// withdraw takes a handle being destroyed out of its creation. A creation
// that has not started never will (its group's end skips it); for one under
// way it returns a channel closed once it is finished, after which the entry
// holds its outcome — with abort, once ringo has given up, as its context
// is cancelled.
func (r *registry) withdraw(e *commEntry, abort bool) <-chan struct{} {
	r.mu.Lock()
	defer r.mu.Unlock()
	c := e.creation
	switch {
	case c == nil:
		return nil
	case c.running:
		if abort {
			c.cancel()
		}
		return c.finished
	}
	c.withdrawn = true
	r.forget(c)
	return nil
}

// pendingCount returns the number of ncclCommInitRank* ranks deferred or
// under way, for tests.
func (r *registry) pendingCount() int {
	r.mu.Lock()
	defer r.mu.Unlock()
	n := 0
	for _, ir := range r.inits {
		n += len(ir.ranks)
	}
	return n
}
