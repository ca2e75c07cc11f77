package ringo

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"os"
	"runtime"
	"slices"
	"strings"
	"sync"
	"sync/atomic"
	"time"

	"github.com/ringo-ccl/ringo/bootstrap"
	"github.com/ringo-ccl/ringo/internal/env"
	"github.com/ringo-ccl/ringo/internal/errs"
	"github.com/ringo-ccl/ringo/internal/sys"
	"github.com/ringo-ccl/ringo/network"
	"github.com/ringo-ccl/ringo/ring"
	"github.com/ringo-ccl/ringo/shm"
	"github.com/ringo-ccl/ringo/transport"
)

// UniqueID names a communicator whose ranks are separate processes: the
// address of its bootstrap root and a random secret, 128 bytes like NCCL's
// ncclUniqueId. One process makes it with NewUniqueID and hands it to the
// others (String and UniqueIDFromString give a text form).
type UniqueID = bootstrap.UniqueID

// NewUniqueID starts a bootstrap root in this process and returns the ID
// that names it. The root serves until every rank that joined has closed.
func NewUniqueID() (UniqueID, error) { return bootstrap.NewUniqueID() }

// UniqueIDFromString parses the text form of a UniqueID (UniqueID.String),
// checking its length and checksum.
func UniqueIDFromString(s string) (UniqueID, error) { return bootstrap.UniqueIDFromString(s) }

var envHostID = env.Var{Name: "HOSTID", NCCL: true}

// hostID names the host this process runs on, for deciding which ranks can
// share memory: NCCL_HOSTID (RINGO_HOSTID) when set, as NCCL, else the
// host name.
func hostID() string {
	if v, _, ok := envHostID.Lookup(); ok && v != "" {
		return v
	}
	h, _ := os.Hostname()
	return h
}

// NewComm makes this process rank rank of the nranks-rank communicator that
// id names. Every rank calls it, each in its own process, with the same id
// and nranks; it returns once all of them have joined and connected their
// ring, or fails when ctx ends first, naming the ranks that never came. The
// ranks must be on one host (they connect through shared memory in
// /dev/shm) and resolve cfg and the environment to the same settings.
func NewComm(ctx context.Context, id UniqueID, nranks, rank int, cfg *Config) (*Comm, error) {
	if nranks < 1 || rank < 0 || rank >= nranks {
		return nil, errs.Invalid("init", rank, "rank %d of a communicator of %d ranks", rank, nranks)
	}
	return newHostComm(ctx, nranks, rank, cfg, func() (*bootstrap.Bootstrap, UniqueID, error) {
		bs, err := bootstrap.Join(ctx, id, nranks, rank)
		return bs, id, err
	})
}

// NewCommFromEnv joins the job a launcher describes in the environment:
// rank and size from RINGO_RANK and RINGO_NRANKS, torchrun (RANK,
// WORLD_SIZE), Open MPI (OMPI_COMM_WORLD_*), MVAPICH2 (MV2_COMM_WORLD_*),
// MPICH or Intel MPI (PMI_RANK, PMI_SIZE) or an srun step (SLURM_PROCID,
// SLURM_NTASKS), in that order; the bootstrap root's address from
// RINGO_COMM_ID or NCCL_COMM_ID (host:port), else MASTER_ADDR and
// MASTER_PORT, else, under srun, the step's first node. Rank 0 starts the
// root there. bootstrap.LaunchFromEnv has the details; the job's secret
// is RINGO_SECRET's, else derived (bootstrap.JoinLaunch says what that
// protects against).
func NewCommFromEnv(ctx context.Context, cfg *Config) (*Comm, error) {
	l, ok, err := bootstrap.LaunchFromEnv()
	if err == nil && !ok {
		err = fmt.Errorf("%w: no launcher variables (RINGO_RANK/RINGO_NRANKS, RANK/WORLD_SIZE, OMPI_COMM_WORLD_RANK/SIZE, MV2_COMM_WORLD_RANK/SIZE, PMI_RANK/PMI_SIZE, or SLURM_PROCID/SLURM_NTASKS in an srun step)", ErrInvalidArgument)
	}
	if err != nil {
		return nil, errs.At("init", -1, err)
	}
	return newHostComm(ctx, l.Size, l.Rank, cfg, func() (*bootstrap.Bootstrap, UniqueID, error) {
		return bootstrap.JoinLaunch(ctx, l)
	})
}

// newHostComm makes rank of an nranks-rank communicator of host
// processes, joining its bootstrap with join (which returns the bootstrap
// and the communicator's id) once cfg has resolved.
func newHostComm(ctx context.Context, nranks, rank int, cfg *Config, join func() (*bootstrap.Bootstrap, UniqueID, error)) (*Comm, error) {
	s, err := resolve(cfg, nranks, hostDefaults)
	if err != nil {
		return nil, errs.At("init", rank, err)
	}
	bs, id, err := join()
	if err != nil {
		return nil, errs.At("init", rank, err)
	}
	g, err := connectProcs(ctx, bs, id.Tag(), &s)
	if err != nil {
		bs.Close()
		return nil, errs.At("init", rank, err)
	}
	c, err := newComm(rank, nranks, s, g, g.tr)
	if err != nil {
		g.release(rank)
		return nil, err
	}
	err = c.procHier(ctx, cfg, func(p splitPart, cfg *Config) (*Comm, error) {
		return NewComm(ctx, p.id, p.size, p.rank, cfg)
	})
	if err != nil {
		c.Close()
		return nil, errs.At("init", rank, err)
	}
	return c, nil
}

// procGroup is what a rank in its own process shares with the others: the
// bootstrap (which reports lost ranks) and the transports to its neighbours
// (shared memory, sockets).
type procGroup struct {
	bs    *bootstrap.Bootstrap
	tr    transport.Transport // host ranks' connections; nil for GPU ranks
	abort transport.Abort
	done  chan struct{} // closed by release: stops the watcher
	once  sync.Once

	// For a GPU rank: what stops its kernels — set once its executor
	// exists, after proxies that may call fail already run — and what
	// releases its connections (before the bootstrap closes: it may still
	// need it).
	stop    atomic.Pointer[func()]
	cleanup func() error
	sib     *siblings // the communicator's ranks in this process, for release
	net     bool      // this rank has net connections (and their proxies)

	seq uint64 // the rank's current collective, for leave

	// check (RINGO_CHECK=1): every call's record is all-gathered over the
	// bootstrap and compared, within timeout (0: none).
	check   bool
	timeout time.Duration
}

var _ group = (*procGroup)(nil)

// peerInfo is what ranks tell each other before connecting.
type peerInfo struct {
	Host     string `json:"host"`
	Pid      int    `json:"pid"`
	ShmDev   uint64 `json:"shm_dev"`
	ShmOff   bool   `json:"shm_off"` // NCCL_SHM_DISABLE=1
	CPUs     int    `json:"cpus"`    // for the channels of a ring with net links
	Settings string `json:"settings"`
	GPU      string `json:"gpu,omitempty"`      // a GPU rank's device: its UUID
	Resident int    `json:"resident,omitempty"` // a GPU rank's device: blocks of ringo's kernels it holds at once
}

// sameHost reports whether two ranks can share memory.
func (p peerInfo) sameHost(q peerInfo) bool { return p.Host == q.Host && p.ShmDev == q.ShmDev }

// exchangePeers tells every rank about every other — host, /dev/shm
// device, GPU — and checks that they agree on their settings.
func exchangePeers(ctx context.Context, bs *bootstrap.Bootstrap, s *settings, gpu string, resident int) ([]peerInfo, error) {
	dev, err := sys.ShmDevice()
	if err != nil {
		dev = 0 // no /dev/shm: this rank shares memory with nobody
	}
	me := peerInfo{Host: hostID(), Pid: os.Getpid(), ShmDev: dev, ShmOff: s.shmOff || dev == 0, CPUs: runtime.NumCPU(),
		Settings: s.fingerprint(), GPU: gpu, Resident: resident}
	blob, _ := json.Marshal(me)
	blobs, err := bs.AllGather(ctx, blob)
	if err != nil {
		return nil, fmt.Errorf("exchanging peer information: %w", err)
	}
	peers := make([]peerInfo, len(blobs))
	for r, b := range blobs {
		p := &peers[r]
		if err := json.Unmarshal(b, p); err != nil {
			return nil, fmt.Errorf("rank %d sent malformed peer information: %v", r, err)
		}
		switch {
		case p.Settings != me.Settings:
			return nil, fmt.Errorf("%w: rank %d resolved its settings to %s, rank %d to %s", ErrInvalidArgument, r, p.Settings, bs.Rank(), me.Settings)
		case p.ShmOff != me.ShmOff:
			return nil, fmt.Errorf("%w: rank %d has shared memory off (NCCL_SHM_DISABLE or no /dev/shm), rank %d on: set NCCL_SHM_DISABLE alike everywhere", ErrInvalidArgument, r, bs.Rank())
		}
	}
	return peers, nil
}

// connectProcs connects host ranks in separate processes: through /dev/shm
// to a neighbour of the same host, through sockets to one of another host
// or when shared memory is off. Without a ring order in the
// configuration, the ring visits each host's ranks in a row, so it
// crosses between hosts as few times as it can.
func connectProcs(ctx context.Context, bs *bootstrap.Bootstrap, tag string, s *settings) (*procGroup, error) {
	peers, err := exchangePeers(ctx, bs, s, "", 0)
	if err != nil {
		return nil, err
	}
	if !s.ringGiven {
		s.ring = hostRing(peers)
	}
	g := &procGroup{bs: bs, done: make(chan struct{}), check: s.check, timeout: s.timeout}
	n, rank := bs.Size(), bs.Rank()
	if n == 1 {
		go g.routineWatch()
		return g, nil
	}
	// Which edges go through shared memory, and whether any goes over the
	// network; every rank computes the same.
	shmLink := func(from, to int) bool { return !peers[from].ShmOff && peers[from].sameHost(peers[to]) }
	edges := transport.RingEdges(s.ring, ring.Bidirectional, 1) // both ways round: what any variant's channels use
	anyNet := slices.ContainsFunc(edges, func(e transport.Edge) bool { return !shmLink(e.From, e.To) })
	if anyNet && !s.channelsGiven {
		// A net connection is bound by its proxies' and the executor's
		// round trips, not by one core: channels run side by side.
		cpus := peers[0].CPUs
		for _, p := range peers {
			cpus = min(cpus, p.CPUs)
		}
		s.channels = min(max(s.channels, network.HostChannels(cpus)), s.channelsMax)
	}
	sc, err := shm.NewConnector(bs, tag, s.sizes, shmLink)
	if err != nil {
		return nil, err
	}
	kinds := []transport.Connector{sc}
	if anyNet {
		nc, err := network.NewConnector(ctx, bs, s.sizes, g.fail, &g.abort)
		if err != nil {
			return nil, err
		}
		kinds = append(kinds, nc)
	}
	mesh := transport.NewMesh(rank, kinds...)
	ringEdges := transport.RingEdges(s.ring, s.variant, s.channels)
	if err := mesh.Connect(ctx, ringEdges); err != nil {
		mesh.Close()
		return nil, err
	}
	for _, e := range ringEdges {
		if e.From != rank && e.To != rank {
			continue
		}
		via := mesh.Via(e)
		g.net = g.net || strings.HasPrefix(via, "NET")
		if e.From == rank {
			env.Info(env.SubInit|env.SubShm|env.SubNet, "Channel %02d : %d -> %d via %s", e.Ch, rank, e.To, via)
		}
	}
	g.tr = mesh
	go g.routineWatch()
	return g, nil
}

// hostRing orders the ranks host by host — hosts in the order of their
// lowest rank, ranks ascending within each — so each host's ranks are
// contiguous and a ring over h hosts crosses the network h times (once per
// host boundary: the fewest a ring can).
func hostRing(peers []peerInfo) ring.Ring {
	var hosts []peerInfo // one representative per host, in order of first rank
	byHost := map[int][]int{}
	for r, p := range peers {
		h := -1
		for i, q := range hosts {
			if p.sameHost(q) {
				h = i
				break
			}
		}
		if h < 0 {
			h = len(hosts)
			hosts = append(hosts, p)
		}
		byHost[h] = append(byHost[h], r)
	}
	order := make([]int, 0, len(peers))
	for h := range hosts {
		order = append(order, byHost[h]...)
	}
	return ring.Ring{Order: order}
}

// routineWatch turns the loss of a peer into the group's abort, so every
// wait of this rank ends with ErrPeerLost naming it.
func (g *procGroup) routineWatch() {
	select {
	case err, ok := <-g.bs.PeerLost():
		if ok && err != nil {
			g.fail(err)
		}
	case <-g.done:
	}
}

// enter publishes the rank's progress, which the other ranks' stall
// reports read through the bootstrap root.
func (g *procGroup) enter(rank int, rec callRecord) error {
	g.seq = rec.seq
	g.bs.SetProgress(rec.seq, false)
	if g.sib != nil {
		if err := g.sib.enter(rank, rec); err != nil {
			return err
		}
	}
	if !g.check {
		return nil
	}
	ctx := context.Background()
	if g.timeout > 0 {
		var cancel context.CancelFunc
		ctx, cancel = context.WithTimeout(ctx, g.timeout)
		defer cancel()
	}
	all, err := g.bs.AllGather(ctx, rec.encode())
	if err != nil {
		return fmt.Errorf("RINGO_CHECK: comparing collective #%d with the other ranks: %w", rec.seq, err)
	}
	for r, b := range all {
		o, err := decodeCallRecord(b)
		if err != nil {
			return fmt.Errorf("RINGO_CHECK: rank %d's record of collective #%d: %w", r, rec.seq, err)
		}
		if err := rec.mismatch(rank, o, r); err != nil {
			return err
		}
	}
	return nil
}

func (g *procGroup) leave(int) { g.bs.SetProgress(g.seq, true) }

// stalled asks every rank, through the bootstrap root, where it is.
func (g *procGroup) stalled(seq uint64) string {
	ctx, cancel := context.WithTimeout(context.Background(), 3*time.Second)
	defer cancel()
	ps, err := g.bs.Query(ctx)
	if err != nil {
		return fmt.Sprintf("collective #%d: the other ranks could not be asked where they are: %v", seq, err)
	}
	return stallReport(seq, ps)
}

func (g *procGroup) broken() *transport.Abort { return &g.abort }

// connect makes the host ranks' missing connections through the mesh.
func (g *procGroup) connect(ctx context.Context, edges []transport.Edge) error {
	m, ok := g.tr.(*transport.Mesh)
	if !ok {
		return fmt.Errorf("%w: this communicator's ranks have no host connections", ErrNotSupported)
	}
	return m.Connect(ctx, edges)
}
func (g *procGroup) proxied() bool { return g.net }

// fail breaks the group and stops this rank's kernels, if it has any.
func (g *procGroup) fail(cause error) {
	g.abort.Set(cause)
	if stop := g.stop.Load(); stop != nil {
		(*stop)()
	}
}

func (g *procGroup) release(int) error {
	var err error
	g.once.Do(func() {
		close(g.done)
		free := func() error {
			var errs []error
			if g.cleanup != nil {
				errs = append(errs, g.cleanup())
			}
			errs = append(errs, g.bs.Close())
			if g.tr != nil {
				errs = append(errs, g.tr.Close())
			}
			return errors.Join(errs...)
		}
		if g.sib == nil {
			err = free()
		} else {
			err = g.sib.close(free)
		}
	})
	return err
}

// siblings are the ranks of one communicator that live in this process.
// They share their memory directly, and one thread may close them one
// after another (as nccl-tests does) while the last still needs the first
// one's memory, so none is freed before all are closed: the last to close
// frees them all, concurrently (each waits in the bootstrap for the ranks
// of other processes), and returns their errors — as NCCL's ncclCommDestroy
// defers its frees to the process's last rank of a communicator.
type siblings struct {
	mu     sync.Mutex
	joined int                // ranks that have joined
	left   int                // ranks not yet closed
	frees  []func() error     // the closed ranks' releases
	calls  map[int]callRecord // each rank's latest call, by rank, for sameStream
}

// enter records rank's call and refuses it when another rank of this
// process enqueued the same collective on the same stream (sameStream).
func (s *siblings) enter(rank int, rec callRecord) error {
	s.mu.Lock()
	defer s.mu.Unlock()
	for r, o := range s.calls {
		if r != rank && o.seq == rec.seq {
			if err := sameStream(rec.seq, r, o.stream, rank, rec.stream); err != nil {
				return err
			}
		}
	}
	s.calls[rank] = rec
	return nil
}

var (
	siblingsMu sync.Mutex
	siblingsOf = map[string]*siblings{} // by communicator, until all have joined
)

// joinSiblings returns the siblings record of communicator tag, which has
// n ranks in this process.
func joinSiblings(tag string, n int) *siblings {
	siblingsMu.Lock()
	defer siblingsMu.Unlock()
	s := siblingsOf[tag]
	if s == nil {
		s = &siblings{left: n, calls: map[int]callRecord{}}
		siblingsOf[tag] = s
	}
	if s.joined++; s.joined == n {
		delete(siblingsOf, tag)
	}
	return s
}

// close records one rank's release; the last rank runs them all.
func (s *siblings) close(free func() error) error {
	s.mu.Lock()
	s.frees = append(s.frees, free)
	if s.left--; s.left > 0 {
		s.mu.Unlock()
		return nil
	}
	frees := s.frees
	s.frees = nil
	s.mu.Unlock()
	errc := make(chan error, len(frees))
	for _, f := range frees {
		go func() { errc <- f() }()
	}
	var errs []error
	for range frees {
		errs = append(errs, <-errc)
	}
	return errors.Join(errs...)
}
