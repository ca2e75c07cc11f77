package group

import (
	"context"
	"encoding/binary"
	"errors"
	"fmt"
	"maps"
	"slices"
	"strings"
	"sync"
	"sync/atomic"
	"time"

	"github.com/ringo-ccl/ringo/bootstrap"
	"github.com/ringo-ccl/ringo/host"
	"github.com/ringo-ccl/ringo/internal/calls"
	"github.com/ringo-ccl/ringo/internal/config"
	"github.com/ringo-ccl/ringo/internal/direct"
	"github.com/ringo-ccl/ringo/internal/env"
	"github.com/ringo-ccl/ringo/internal/errs"
	"github.com/ringo-ccl/ringo/internal/peers"
	"github.com/ringo-ccl/ringo/network"
	"github.com/ringo-ccl/ringo/ring"
	"github.com/ringo-ccl/ringo/shm"
	"github.com/ringo-ccl/ringo/transport"
)

// Procs is what a rank in its own process shares with the others: the
// bootstrap (which reports lost ranks) and the transports to its neighbours
// (shared memory, sockets).
type Procs struct {
	BS     *bootstrap.Bootstrap
	tr     transport.Transport // host ranks' connections; nil for GPU ranks
	abort  transport.Abort
	done   chan struct{} // closed by Release: stops the watcher
	once   sync.Once
	failed chan struct{} // closed by the Fail that raises abort
	Tag    string        // what names the communicator's shared-memory segments (a host rank's)

	// For a GPU rank: what stops its kernels — set once its executor
	// exists, after proxies that may call Fail already run — and what
	// releases its connections (before the bootstrap closes: it may still
	// need it).
	stop atomic.Pointer[func()]
	// StopGrace defers the stop of a lost peer or a revocation (see fail);
	// stopTimer is its timer, once one is running.
	StopGrace time.Duration
	stopTimer atomic.Pointer[time.Timer]
	stopped   atomic.Bool // the kernels were stopped once (logged)
	Cleanup   func() error
	Sib       *peers.Siblings // the communicator's ranks in this process, for release
	// Board is the one-shot exchange area of host ranks that all share
	// this host (shared memory on); nil otherwise.
	Board *shm.Board
	// BoardCrowded: the host's ranks outnumber the cores they run on
	// together (peers.HostCPUs) — what every rank computes alike, so all
	// choose the same paths on the board (host.OneShotLimit,
	// host.BoardSlot).
	BoardCrowded bool
	// Attach lets host ranks that all share this host read each other's
	// buffers (host.RunDirect); nil where the kernel forbids it.
	Attach *shm.Attach
	// Crowded: this host's ranks outnumber the cores they run on together
	// (peers.HostCPUs; as BoardCrowded where all ranks share the host),
	// so a rank's waits give the core to other processes between polls
	// (transport.Waiter.YieldCores): the rank waited for may need it.
	Crowded bool
	Net     bool // this rank has net connections (and their proxies)
	// Reads is a GPU rank's access to the others' memory for direct
	// all-reduces (package direct); nil where they run the ring.
	Reads *direct.Peers
	// connectGPU makes a GPU rank's new connections (ConnectGPU's).
	connectGPU func(ctx context.Context, edges []transport.Edge) error

	seq uint64 // the rank's current collective, for Leave

	// check (RINGO_CHECK=1): every call's record is all-gathered over the
	// bootstrap and compared, within timeout (0: none).
	check   bool
	timeout time.Duration
}

var _ Group = (*Procs)(nil)

// NewProcs returns the group of the rank that joined bs; with check
// (RINGO_CHECK=1) every call is compared with the other ranks' within
// timeout (0: none). Watch starts its liveness watcher.
func NewProcs(bs *bootstrap.Bootstrap, check bool, timeout time.Duration) *Procs {
	return &Procs{BS: bs, done: make(chan struct{}), failed: make(chan struct{}), check: check, timeout: timeout}
}

// Watch starts routineWatch, which Release stops.
func (g *Procs) Watch() { go g.routineWatch() }

// SetStop sets what stops the rank's kernels, once its executor exists
// (proxies that may call Fail already run).
func (g *Procs) SetStop(stop func()) { g.stop.Store(&stop) }

// Transport returns the host ranks' connections (nil for GPU ranks).
func (g *Procs) Transport() transport.Transport { return g.tr }

// ConnectHosts connects host ranks in separate processes: through /dev/shm
// to a neighbour of the same host, through sockets to one of another host
// or when shared memory is off. Without a ring order in the
// configuration, the ring visits each host's ranks in a row, so it
// crosses between hosts as few times as it can.
func ConnectHosts(ctx context.Context, bs *bootstrap.Bootstrap, tag string, s *config.Settings) (*Procs, error) {
	ps, err := peers.Exchange(ctx, bs, peers.Local{Settings: s.Fingerprint(), ShmOff: s.SHMOff})
	if err != nil {
		return nil, err
	}
	if !s.RingGiven {
		s.Ring = peers.Ring(ps)
	}
	g := NewProcs(bs, s.Check, s.Timeout)
	g.Tag = tag
	n, rank := bs.Size(), bs.Rank()
	var here []peers.Info
	for _, p := range ps {
		if p.SameHost(ps[rank]) {
			here = append(here, p)
		}
	}
	g.Crowded = crowdedAll(here)
	if n == 1 {
		g.Watch()
		return g, nil
	}
	// Which edges go through shared memory, and whether any goes over the
	// network; every rank computes the same.
	shmLink := func(from, to int) bool { return !ps[from].ShmOff && ps[from].SameHost(ps[to]) }
	edges := transport.RingEdges(s.Ring, ring.Bidirectional, 1) // both ways round: what any variant's channels use
	anyNet := slices.ContainsFunc(edges, func(e transport.Edge) bool { return !shmLink(e.From, e.To) })
	if anyNet && !s.ChannelsGiven {
		// A net connection is bound by its proxies' and the executor's
		// round trips, not by one core: channels run side by side.
		cpus := ps[0].CPUs
		for _, p := range ps {
			cpus = min(cpus, p.CPUs)
		}
		s.Channels = min(max(s.Channels, network.HostChannels(cpus)), s.ChannelsMax)
	}
	ringEdges := transport.RingEdges(s.Ring, s.Variant, s.Channels)
	// The Simple FIFOs' size, before any exists: every rank decides alike
	// from what every rank said of its /dev/shm.
	s.FitShm(ps, ringEdges, shmLink)
	sc, err := shm.NewConnector(tag, s.Sizes, shmLink)
	if err != nil {
		return nil, err
	}
	kinds := []transport.Connector{sc}
	if anyNet {
		nc, err := network.NewConnector(ctx, bs, s.Sizes, g.Fail, &g.abort)
		if err != nil {
			return nil, err
		}
		kinds = append(kinds, nc)
	}
	mesh := transport.NewMesh(bs, kinds...)
	if err := mesh.Connect(ctx, ringEdges); err != nil {
		mesh.Close()
		return nil, err
	}
	for _, e := range ringEdges {
		if e.From != rank && e.To != rank {
			continue
		}
		via := mesh.Via(e)
		g.Net = g.Net || strings.HasPrefix(via, "NET")
		if e.From == rank {
			env.Info(env.SubInit|env.SubShm|env.SubNet, "Channel %02d : %d -> %d via %s", e.Ch, rank, e.To, via)
		}
	}
	if oneHostShm(ps) {
		// Every rank on this host, shared memory on: small collectives
		// take one exchange (host.RunOneShot).
		g.BoardCrowded = crowdedAll(ps)
		if g.Board, err = shm.NewBoard(ctx, bs, tag, host.BoardSlot(g.BoardCrowded)); err != nil {
			mesh.Close()
			return nil, err
		}
		if g.BoardCrowded {
			g.Board.SetShare(peers.CoreShare(ps), ps[0].Affinity)
		}
		// And larger ones read the peers' buffers (host.RunDirect) where
		// the kernel lets every rank.
		switch g.Attach, err = shm.NewAttach(ctx, bs, s.CMA); {
		case errors.Is(err, shm.ErrNoAttach):
			env.Info(env.SubInit|env.SubShm, "rank %d: collectives move through FIFOs only: %v", rank, err)
		case err != nil:
			g.Board.Close()
			mesh.Close()
			return nil, err
		}
	}
	g.tr = mesh
	g.Watch()
	return g, nil
}

// routineWatch turns the loss of a peer into the group's abort, so every
// wait of this rank ends with ErrPeerLost naming it, and so a revocation
// (ErrRevoked naming who revoked).
func (g *Procs) routineWatch() {
	select {
	case err, ok := <-g.BS.PeerLost():
		if ok && err != nil {
			g.fail(err, true)
		}
	case <-g.BS.Revoked():
		g.fail(g.BS.RevokeCause(), true)
	case <-g.done:
	}
}

// Revoke revokes the bootstrap (which tells the other ranks) and fails the
// group with its cause.
func (g *Procs) Revoke(reason string) {
	g.BS.Revoke(reason)
	g.fail(g.BS.RevokeCause(), false)
}

// Lost returns the ranks the bootstrap knows are gone.
func (g *Procs) Lost() []int { return g.BS.Lost() }

// enter publishes the rank's progress, which the other ranks' stall
// reports read through the bootstrap root.
func (g *Procs) Enter(rank int, rec *calls.Record) error {
	g.seq = rec.Seq
	g.BS.SetProgress(rec.Seq, false)
	if g.Sib != nil {
		if err := g.Sib.Enter(rank, *rec); err != nil {
			return err
		}
	}
	if !g.check {
		return nil
	}
	return calls.Compare(g.BS, rank, *rec, g.timeout)
}

func (g *Procs) Leave(int) { g.BS.SetProgress(g.seq, true) }

// stalled asks every rank, through the bootstrap root, where it is.
func (g *Procs) Stalled(seq uint64) string {
	ctx, cancel := context.WithTimeout(context.Background(), 3*time.Second)
	defer cancel()
	ps, err := g.BS.Query(ctx)
	if err != nil {
		return fmt.Sprintf("collective #%d: the other ranks could not be asked where they are: %v", seq, err)
	}
	return calls.StallReport(seq, ps)
}

func (g *Procs) Broken() *transport.Abort { return &g.abort }

// Connect makes the rank's missing connections of edges: a GPU rank's
// through its connector (connectGPU), a host rank's through the mesh —
// each with one peer alone, in the peers' order (byPeer): the other ranks
// need not take part, and those that do know alike which connections they
// have.
func (g *Procs) Connect(ctx context.Context, _ int, edges []transport.Edge) error {
	if g.connectGPU != nil {
		return g.connectGPU(ctx, edges)
	}
	m, ok := g.tr.(*transport.Mesh)
	if !ok {
		return fmt.Errorf("%w: this communicator's ranks have no host connections", errs.ErrNotSupported)
	}
	return byPeer(g.BS, edges, func(q int, es []transport.Edge) error {
		return m.ConnectPair(ctx, g.BS.Pair(q), q, es)
	})
}
func (g *Procs) Proxied() bool { return g.Net }

// Match matches sends and receives among the ranks of this process (a GPU
// communicator's siblings) and, with RINGO_CHECK=1, with ranks of other
// processes too: each send's size goes to its receiver over the
// bootstrap (Announce) before the call runs, and each receive waits for
// its sender's (within the check's timeout) and compares. The sends go
// first, so two ranks that exchange in one call never wait for each
// other; a receive waits on the host for its send's call to begin, where
// without the check its kernel or executor would wait for the data.
func (g *Procs) Match(ctx context.Context, rank int, msgs []calls.Msg) error {
	if g.Sib != nil {
		if err := g.Sib.Match(rank, msgs); err != nil {
			return err
		}
	}
	if !g.check {
		return nil
	}
	remote := func(m *calls.Msg) bool { return m.Peer != rank && (g.Sib == nil || !g.Sib.Local(m.Peer)) }
	if g.timeout > 0 {
		var cancel context.CancelFunc
		ctx, cancel = context.WithTimeout(ctx, g.timeout)
		defer cancel()
	}
	for i := range msgs {
		if m := &msgs[i]; m.Send && remote(m) {
			if err := g.BS.Announce(ctx, m.Peer, binary.LittleEndian.AppendUint64(nil, uint64(m.Bytes()))); err != nil {
				return fmt.Errorf("telling rank %d the size of this rank's send (RINGO_CHECK=1): %w", m.Peer, err)
			}
		}
	}
	for i := range msgs {
		m := &msgs[i]
		if m.Send || !remote(m) {
			continue
		}
		blob, err := g.BS.Announced(ctx, m.Peer)
		if err != nil {
			return fmt.Errorf("waiting for the size of rank %d's send this rank receives (RINGO_CHECK=1): %w", m.Peer, err)
		}
		if len(blob) != 8 {
			return fmt.Errorf("%w: rank %d announced a send size of %d bytes, not 8", errs.ErrInvalidArgument, m.Peer, len(blob))
		}
		if sent := int64(binary.LittleEndian.Uint64(blob)); sent != m.Bytes() {
			return fmt.Errorf("%w: rank %d's send to rank %d is %d bytes, and rank %d's receive that matches it takes %d (RINGO_CHECK=1)", errs.ErrInvalidArgument, m.Peer, rank, sent, rank, m.Bytes())
		}
	}
	return nil
}

// Fail breaks the group and stops this rank's kernels, if it has any. A
// cause that is a lost peer learned elsewhere than from the bootstrap — a
// net connection that its peer closed, a hierarchical variant's
// sub-communicator whose own bootstrap named a rank lost — first waits up
// to lossGrace for this group's bootstrap to report the loss (within
// milliseconds: the root's report, or the root's own loss when it lived in
// the dead rank's process), so that the group's error names the rank lost
// and Lost lists it by the time a call fails, as over shared memory, where
// only the bootstrap can tell.
func (g *Procs) Fail(cause error) {
	if errors.Is(cause, errs.ErrPeerLost) {
		t := time.NewTimer(lossGrace)
		select {
		case <-g.failed:
		case <-g.done:
		case <-t.C:
		}
		t.Stop()
	}
	g.fail(cause, errors.Is(cause, errs.ErrPeerLost))
}

// lossGrace is how long Fail waits for the bootstrap to name a rank lost.
const lossGrace = 500 * time.Millisecond

// fail is Fail without the wait: the bootstrap's own reports. It breaks
// the group at once — every call, and Err, report cause from now on — and
// stops the rank's kernels: at once, unless news is true (cause came to
// this rank on its own: a lost peer, another rank's revocation) and
// StopGrace is set, in which case they stop when the application has been
// told (Told), or StopGrace later. A C ABI caller such as PyTorch learns of
// a loss by polling ncclCommGetAsyncError and its collective's completion
// event in turn: a kernel stopped before the caller has read the error
// completes the event as if the collective had succeeded, its output made
// without the lost rank (seen on one H200: survivors of a kill disagreed by
// one step on which all-reduce failed, issue 21).
func (g *Procs) fail(cause error, news bool) {
	if g.abort.Set(cause) {
		close(g.failed)
	}
	if news && g.StopGrace > 0 && (errors.Is(cause, errs.ErrPeerLost) || errors.Is(cause, errs.ErrRevoked)) {
		t := time.AfterFunc(g.StopGrace, func() { g.stopKernelsFor("the grace of %v ran out", g.StopGrace) })
		if !g.stopTimer.CompareAndSwap(nil, t) {
			t.Stop() // a stop is already on its way
		} else if g.stop.Load() != nil {
			env.Info(env.SubInit, "rank %d: broken (%v); its kernels stop once that is reported, or in %v", g.rankOrNone(), cause, g.StopGrace)
		}
		return
	}
	g.stopKernelsFor("broken: %v", cause)
}

// Told records that the application is being told that the group is
// broken (Err returned the cause): a stop that fail deferred happens now.
func (g *Procs) Told() {
	if g.abort.IsSet() {
		g.stopKernelsFor("the error was reported")
	}
}

// rankOrNone is the rank, for logs: -1 for a group without a bootstrap
// (tests').
func (g *Procs) rankOrNone() int {
	if g.BS == nil {
		return -1
	}
	return g.BS.Rank()
}

// stopKernelsFor stops the rank's kernels, once its executor exists, and
// logs (INFO, INIT) the first stop and why. Safe to call any number of
// times, from any goroutine.
func (g *Procs) stopKernelsFor(why string, args ...any) {
	if stop := g.stop.Load(); stop != nil {
		(*stop)()
		if g.stopped.CompareAndSwap(false, true) {
			env.Info(env.SubInit, "rank %d: kernels stopped: "+why, append([]any{g.rankOrNone()}, args...)...)
		}
	}
}

func (g *Procs) Release(int) error {
	var err error
	g.once.Do(func() {
		close(g.done)
		if t := g.stopTimer.Load(); t != nil {
			t.Stop()
		}
		if g.abort.IsSet() { // kernels a loss left waiting stop now, not at the cleanup's timeout
			g.stopKernelsFor("closing")
		}
		free := func() error {
			var errs []error
			if g.Cleanup != nil {
				errs = append(errs, g.Cleanup())
			}
			t := time.Now()
			errs = append(errs, g.BS.Close())
			env.Info(env.SubInit|env.SubBootstrap, "rank %d: bootstrap closed in %v", g.BS.Rank(), time.Since(t))
			if g.tr != nil {
				errs = append(errs, g.tr.Close())
			}
			if g.Board != nil {
				errs = append(errs, g.Board.Close())
			}
			if g.Attach != nil {
				errs = append(errs, g.Attach.Close())
			}
			return errors.Join(errs...)
		}
		if g.Sib == nil {
			err = free()
		} else {
			err = g.Sib.Close(free)
		}
	})
	return err
}

// crowdedAll reports whether the ranks of ps, all on one host, outnumber
// the CPUs they run on together (peers.HostCPUs): what every rank of the
// host computes alike.
func crowdedAll(ps []peers.Info) bool { return len(ps) > peers.HostCPUs(ps) }

// oneHostShm reports whether every rank of ps is on the first's host with
// shared memory on.
func oneHostShm(ps []peers.Info) bool {
	for _, p := range ps {
		if p.ShmOff || !p.SameHost(ps[0]) {
			return false
		}
	}
	return true
}

// byPeer calls connect for each peer of the rank of bs that edges join it
// to, in the peers' order, with the edges between them.
func byPeer(bs *bootstrap.Bootstrap, edges []transport.Edge, connect func(peer int, edges []transport.Edge) error) error {
	rank := bs.Rank()
	peers := map[int][]transport.Edge{}
	for _, e := range edges {
		switch {
		case e.From == rank && e.To != rank:
			peers[e.To] = append(peers[e.To], e)
		case e.To == rank && e.From != rank:
			peers[e.From] = append(peers[e.From], e)
		}
	}
	for _, q := range slices.Sorted(maps.Keys(peers)) {
		if err := connect(q, peers[q]); err != nil {
			return fmt.Errorf("connecting with rank %d: %w", q, err)
		}
	}
	return nil
}
