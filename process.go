package ringo

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"os"
	"sync"

	"github.com/ringo-ccl/ringo/internal/env"
	"github.com/ringo-ccl/ringo/internal/errs"
	"github.com/ringo-ccl/ringo/internal/sys"
	"github.com/ringo-ccl/ringo/shm"
	"github.com/ringo-ccl/ringo/transport"
)

// UniqueID names a communicator whose ranks are separate processes: the
// address of its bootstrap root and a random secret, 128 bytes like NCCL's
// ncclUniqueId. One process makes it with NewUniqueID and hands it to the
// others (String and UniqueIDFromString give a text form).
type UniqueID = transport.UniqueID

// NewUniqueID starts a bootstrap root in this process and returns the ID
// that names it. The root serves until every rank that joined has closed.
func NewUniqueID() (UniqueID, error) { return transport.NewUniqueID() }

// UniqueIDFromString parses the text form of a UniqueID (UniqueID.String),
// checking its length and checksum.
func UniqueIDFromString(s string) (UniqueID, error) { return transport.UniqueIDFromString(s) }

var envShmDisable = env.Var{Name: "SHM_DISABLE", NCCL: true}

// NewComm makes this process rank rank of the nranks-rank communicator that
// id names. Every rank calls it, each in its own process, with the same id
// and nranks; it returns once all of them have joined and connected their
// ring, or fails when ctx ends first, naming the ranks that never came. The
// ranks must be on one host (they connect through shared memory in
// /dev/shm) and resolve cfg and the environment to the same settings.
func NewComm(ctx context.Context, id UniqueID, nranks, rank int, cfg *Config) (*Comm, error) {
	fail := func(err error) (*Comm, error) {
		return nil, &Error{Op: "init", Rank: rank, Peer: -1, Channel: -1, Step: -1, Err: err}
	}
	if nranks < 1 || rank < 0 || rank >= nranks {
		return nil, errs.Invalid("init", rank, "rank %d of a communicator of %d ranks", rank, nranks)
	}
	s, err := resolve(cfg, nranks, hostDefaults)
	if err != nil {
		return fail(err)
	}
	bs, err := transport.Join(ctx, id, nranks, rank)
	if err != nil {
		return fail(err)
	}
	g, err := connectProcs(ctx, bs, id.Tag(), s)
	if err != nil {
		bs.Close()
		return fail(err)
	}
	c, err := newComm(rank, nranks, s, g, g.tr)
	if err != nil {
		g.release(rank)
		return nil, err
	}
	return c, nil
}

// NewCommFromEnv joins the job a launcher describes in the environment:
// rank and size from torchrun (RANK, WORLD_SIZE), mpirun
// (OMPI_COMM_WORLD_RANK, OMPI_COMM_WORLD_SIZE) or RINGO_RANK and
// RINGO_NRANKS; the bootstrap root's address from RINGO_COMM_ID or
// NCCL_COMM_ID (host:port), else MASTER_ADDR and MASTER_PORT. Rank 0 starts
// the root there.
func NewCommFromEnv(ctx context.Context, cfg *Config) (*Comm, error) {
	l, ok, err := transport.LaunchFromEnv()
	if err == nil && !ok {
		err = fmt.Errorf("%w: no launcher variables (RANK/WORLD_SIZE, OMPI_COMM_WORLD_RANK/SIZE or RINGO_RANK/RINGO_NRANKS)", ErrInvalidArgument)
	}
	if err != nil {
		return nil, &Error{Op: "init", Rank: -1, Peer: -1, Channel: -1, Step: -1, Err: err}
	}
	s, err := resolve(cfg, l.Size, hostDefaults)
	if err != nil {
		return nil, &Error{Op: "init", Rank: l.Rank, Peer: -1, Channel: -1, Step: -1, Err: err}
	}
	bs, id, err := transport.JoinLaunch(ctx, l)
	if err != nil {
		return nil, &Error{Op: "init", Rank: l.Rank, Peer: -1, Channel: -1, Step: -1, Err: err}
	}
	g, err := connectProcs(ctx, bs, id.Tag(), s)
	if err != nil {
		bs.Close()
		return nil, &Error{Op: "init", Rank: l.Rank, Peer: -1, Channel: -1, Step: -1, Err: err}
	}
	c, err := newComm(l.Rank, l.Size, s, g, g.tr)
	if err != nil {
		g.release(l.Rank)
		return nil, err
	}
	return c, nil
}

// procGroup is what a rank in its own process shares with the others: the
// bootstrap (which reports lost ranks) and the shared-memory transport.
type procGroup struct {
	bs    *transport.Bootstrap
	tr    transport.Transport // host ranks' connections; nil for GPU ranks
	abort transport.Abort
	done  chan struct{} // closed by release: stops the watcher
	once  sync.Once

	// For a GPU rank: what stops its kernels, and what releases its
	// connections (before the bootstrap closes: it may still need it).
	stop    func()
	cleanup func() error
	sib     *siblings // the communicator's ranks in this process, for release
}

var _ group = (*procGroup)(nil)

// peerInfo is what ranks tell each other before connecting.
type peerInfo struct {
	Host     string `json:"host"`
	Pid      int    `json:"pid"`
	ShmDev   uint64 `json:"shm_dev"`
	Settings string `json:"settings"`
	GPU      string `json:"gpu,omitempty"`    // a GPU rank's device: "ordinal/UUID"
	Access   []bool `json:"access,omitempty"` // GPU rank: whether its GPU reaches each rank's GPU
}

// exchangePeers tells every rank about every other — host, /dev/shm
// device, GPU — and checks that they can share memory and agree on their
// settings.
func exchangePeers(ctx context.Context, bs *transport.Bootstrap, s settings, gpu string) ([]peerInfo, error) {
	host, _ := os.Hostname()
	dev, err := sys.ShmDevice()
	if err != nil {
		return nil, fmt.Errorf("%w: /dev/shm: %v", errs.ErrNotSupported, err)
	}
	me := peerInfo{Host: host, Pid: os.Getpid(), ShmDev: dev, Settings: s.fingerprint(), GPU: gpu}
	blob, _ := json.Marshal(me)
	blobs, err := bs.AllGather(ctx, blob)
	if err != nil {
		return nil, fmt.Errorf("exchanging peer information: %w", err)
	}
	peers := make([]peerInfo, len(blobs))
	gpuRank := map[string]int{} // which rank holds each GPU
	for r, b := range blobs {
		p := &peers[r]
		if err := json.Unmarshal(b, p); err != nil {
			return nil, fmt.Errorf("rank %d sent malformed peer information: %v", r, err)
		}
		switch {
		case p.Settings != me.Settings:
			return nil, fmt.Errorf("%w: rank %d resolved its settings to %s, rank %d to %s", ErrInvalidArgument, r, p.Settings, bs.Rank(), me.Settings)
		case p.Host != me.Host || p.ShmDev != me.ShmDev:
			return nil, fmt.Errorf("%w: rank %d runs on host %q, rank %d on %q: ranks on different hosts need the socket transport, which does not exist yet",
				errs.ErrNotSupported, r, p.Host, bs.Rank(), me.Host)
		}
		if p.GPU == "" {
			continue
		}
		if q, dup := gpuRank[p.GPU]; dup {
			return nil, fmt.Errorf("%w: ranks %d and %d use the same GPU (%s); ringo, like NCCL, runs one rank per GPU", ErrInvalidArgument, q, r, p.GPU)
		}
		gpuRank[p.GPU] = r
	}
	return peers, nil
}

// connectProcs connects host ranks in separate processes through
// /dev/shm.
func connectProcs(ctx context.Context, bs *transport.Bootstrap, tag string, s settings) (*procGroup, error) {
	if _, err := exchangePeers(ctx, bs, s, ""); err != nil {
		return nil, err
	}
	g := &procGroup{bs: bs, done: make(chan struct{})}
	var err error
	n := bs.Size()
	if n > 1 {
		if envShmDisable.Int(0, 0, 1) == 1 {
			return nil, fmt.Errorf("%w: NCCL_SHM_DISABLE=1 leaves no transport between processes of one host", errs.ErrNotSupported)
		}
		me := s.ring.Index(bs.Rank())
		g.tr, err = shm.Connect(ctx, bs, tag, n, bs.Rank(), s.ring.At(me, -1), s.ring.At(me, 1), s.channels, s.sizes)
		if err != nil {
			return nil, err
		}
	}
	go g.routineWatch()
	return g, nil
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

func (g *procGroup) enter(int, callRecord) error { return nil }
func (g *procGroup) leave(int)                   {}
func (g *procGroup) stalled(uint64) string       { return "" }
func (g *procGroup) broken() *transport.Abort    { return &g.abort }

// fail breaks the group and stops this rank's kernels, if it has any.
func (g *procGroup) fail(cause error) {
	g.abort.Set(cause)
	if g.stop != nil {
		g.stop()
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
	joined int            // ranks that have joined
	left   int            // ranks not yet closed
	frees  []func() error // the closed ranks' releases
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
		s = &siblings{left: n}
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
