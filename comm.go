package ringo

import (
	"errors"
	"fmt"
	"sync/atomic"

	"github.com/ringo-ccl/ringo/bootstrap"
	"github.com/ringo-ccl/ringo/host"
	"github.com/ringo-ccl/ringo/internal/calls"
	"github.com/ringo-ccl/ringo/internal/config"
	"github.com/ringo-ccl/ringo/internal/direct"
	"github.com/ringo-ccl/ringo/internal/errs"
	"github.com/ringo-ccl/ringo/internal/group"
	"github.com/ringo-ccl/ringo/internal/hier"
	"github.com/ringo-ccl/ringo/internal/mark"
	"github.com/ringo-ccl/ringo/reduce"
	"github.com/ringo-ccl/ringo/ring"
	"github.com/ringo-ccl/ringo/shm"
	"github.com/ringo-ccl/ringo/trace"
	"github.com/ringo-ccl/ringo/transport"
)

// Comm is one rank of a communicator. See the package documentation for its
// concurrency contract.
type Comm struct {
	rank  int
	size  int
	cfg   config.Settings
	group group.Group

	busy   atomic.Bool // a call is in progress
	closed atomic.Bool
	abort  transport.Abort // this rank's own Abort

	gpu *gpuRank // nil for host ranks

	made Config // the configuration the communicator was made with, for those Shrink and Split make
	// parentBroken is a hierarchical variant's sub-communicator's parent
	// group's Broken flag (nil otherwise): the parent's failure, loss or
	// revocation ends the sub-communicator's waits too.
	parentBroken *transport.Abort
	growIDs      []UniqueID // GrowID's, whose roots Close stops if no rank joined them; guarded by busy

	// Owned by the goroutine holding busy.
	exec  *host.Executor
	board *shm.Board // small collectives' one exchange, when every rank shares this host; nil otherwise
	crowd bool       // this host's ranks outnumber its cores: waits yield the core between polls
	// boardCrowded is crowd as every rank of the board computes it
	// (group.Group.BoardCrowded): what chooses the board's paths.
	boardCrowded bool
	shot         host.OneShot // the board's call, kept here so that running it does not allocate
	two          host.TwoShot // the board's rounds, with the stores they chose
	// Larger collectives' reads of the peers' buffers, when every rank
	// shares this host and the kernel allows it; nil otherwise.
	attach *shm.Attach
	direct host.Direct // its call, with its scratch, kept here so that running it does not allocate
	// Host windows (RegisterHostWindow), when every rank shares this host;
	// nil otherwise. windowed is set on every rank once any window was
	// registered (registration is collective): from then on, calls too
	// large for the board's one exchange, or large enough where windows
	// beat it (host.WindowsFirst), first try the windows.
	wins          *direct.Peers
	windowed      atomic.Bool
	win           host.Windowed // its call, kept here so that running it does not allocate
	windowedCalls uint64        // calls that ran on the windows
	seq           uint64        // collectives entered
	passed        hostKey       // the last host call checked, if Check passed it (enterHost)
	rec           calls.Record  // the call entered last, as the group records it (start)
	plan          ring.Plan
	wait          transport.Waiter
	waitSet       bool // wait has the communicator's settings (resetWait)
	funcs         reduce.Cache
	p2ps          p2pPlans
	wires         [reduce.NumTypes]*reduce.Wire // the precision variant's sums, by buffer type

	hier  *hier.Part[*Comm] // the hierarchical variant's sub-communicators; nil otherwise
	trace *trace.Recorder   // RINGO_TRACE's; nil when off
	marks *mark.Marks       // NVTX ranges and trace events of calls; nil when both are off
}

// newComm gives rank a host executor taking its connections from tr as
// its plans need them; tr is nil for GPU ranks, which have no host
// executor.
func newComm(rank, size int, s config.Settings, g group.Group, tr transport.Transport) (*Comm, error) {
	c := &Comm{rank: rank, size: size, cfg: s, group: g}
	if !s.Untraced { // a hierarchical communicator's part: its parent records the calls
		file := rank
		if _, inProcess := g.(*group.World); inProcess {
			file = -1 // one file for every rank of the process
		}
		c.trace = trace.FromEnv(file)
		c.marks = mark.New(rank, c.trace)
	}
	if tr == nil {
		return c, nil
	}
	c.exec = host.New(rank, tr, s.Channels, ring.SlotPayload(ring.LL, s.Sizes.LL))
	return c, nil
}

// NewLocal creates the n ranks of a communicator in this process, joined by
// in-memory connections; comms[r] is rank r. cfg may be nil.
func NewLocal(n int, cfg *Config) ([]*Comm, error) {
	if n < 1 {
		return nil, errs.Invalid("init", -1, "communicator of %d ranks, need at least 1", n)
	}
	s, err := resolve(cfg, n, config.LocalHost)
	if err != nil {
		return nil, errs.At("init", -1, err)
	}
	tr, err := transport.NewLoopback(n, s.Channels, s.Sizes)
	if err != nil {
		return nil, errs.At("init", -1, err)
	}
	w := group.NewWorld(n, tr, tr.Close)
	comms := make([]*Comm, n)
	for r := range n {
		if comms[r], err = newComm(r, n, s, w, tr); err != nil {
			tr.Close()
			return nil, err
		}
		comms[r].made = configOf(cfg)
	}
	sub := subConfig(cfg, &s)
	err = newHiers(comms, hier.Local(func(ranks []int) ([]*Comm, error) { return NewLocal(len(ranks), sub) }))
	if err != nil {
		for _, c := range comms {
			c.Close()
		}
		return nil, errs.At("init", -1, err)
	}
	return comms, nil
}

// Err returns the error that broke the communicator — an aborted or failed
// collective, a lost peer — or nil. It is cheap and safe to call from any
// goroutine at any time (NCCL's ncclCommGetAsyncError). Returning the
// error is telling the application: GPU kernels that a lost peer left
// waiting, under Config.StopGrace, stop now.
func (c *Comm) Err() error {
	err := c.abort.Err()
	if err == nil {
		err = c.group.Broken().Err()
	}
	if err == nil && c.hier != nil {
		err = c.hier.Err()
	}
	if err != nil {
		c.group.Told()
	}
	return err
}

// Rank returns this rank's index in [0, Size()).
func (c *Comm) Rank() int { return c.rank }

// Size returns the number of ranks of the communicator.
func (c *Comm) Size() int { return c.size }

// Abort stops every collective running on this rank, and on every rank of
// an in-process communicator: they return ErrAborted promptly. Ranks in
// other processes see this rank as lost once it closes. The communicator
// cannot be used again; Close each rank to release it. Abort is safe to call
// from any goroutine, at any time, more than once.
func (c *Comm) Abort() { c.abortWith(fmt.Errorf("rank %d called Abort", c.rank)) }

// abortWith is Abort with cause.
func (c *Comm) abortWith(cause error) {
	c.abort.Set(cause)
	c.group.Fail(cause)
	if c.gpu != nil {
		c.gpu.exec.Abort()
	}
	if c.hier != nil {
		c.hier.Abort()
	}
}

// Close releases this rank. It must not be called while a collective is
// running on this rank (call Abort first to stop one). Closing twice is a
// no-op. The GPU ranks of a NewGPUComm communicator that live in one process
// are released together by the last of them closed: closing the others
// returns at once, and the last waits for all their work and for the
// communicator's ranks in other processes to close (at most 10 s), then
// frees their memory and returns every error.
func (c *Comm) Close() error {
	if c.closed.Load() {
		return nil
	}
	if !c.busy.CompareAndSwap(false, true) {
		return errs.Invalid("close", c.rank, "a collective is still running on this rank; Abort it first")
	}
	if !c.closed.CompareAndSwap(false, true) {
		return nil // busy stays set: a closed rank takes no more calls
	}
	if c.exec != nil {
		c.exec.Close()
	}
	var wins error
	if c.wins != nil {
		wins = c.wins.Close()
	}
	for _, id := range c.growIDs {
		bootstrap.StopRootIdle(id)
	}
	var sub, tr error
	if c.hier != nil {
		sub = c.hier.Close()
	}
	rel := c.group.Release(c.rank) // the last GPU rank's release reads its kernels' last steps
	if c.trace != nil {
		tr = c.trace.Write()
	}
	return errors.Join(rel, sub, tr, wins)
}
