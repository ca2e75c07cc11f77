//go:build cuda

package ringo

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"os"
	"runtime"
	"time"

	"github.com/ringo-ccl/ringo/bootstrap"
	"github.com/ringo-ccl/ringo/device"
	"github.com/ringo-ccl/ringo/internal/cuda"
	"github.com/ringo-ccl/ringo/internal/env"
	"github.com/ringo-ccl/ringo/internal/errs"
	"github.com/ringo-ccl/ringo/internal/mem"
	"github.com/ringo-ccl/ringo/internal/sys"
	"github.com/ringo-ccl/ringo/network"
	"github.com/ringo-ccl/ringo/p2p"
	"github.com/ringo-ccl/ringo/ring"
	"github.com/ringo-ccl/ringo/shm"
	"github.com/ringo-ccl/ringo/transport"
)

// newGPUComm is NewGPUComm in a build with the cuda tag.
func newGPUComm(ctx context.Context, id UniqueID, nranks, rank, gpu int, cfg *Config) (*Comm, error) {
	fail := func(err error) (*Comm, error) {
		return nil, errs.At("init", rank, err)
	}
	if nranks < 1 || rank < 0 || rank >= nranks {
		return nil, errs.Invalid("init", rank, "rank %d of a communicator of %d ranks", rank, nranks)
	}
	s, err := resolve(cfg, nranks, gpuDefaults)
	if err != nil {
		return fail(err)
	}
	dev, err := cuda.Open(gpu)
	if err != nil {
		return fail(err)
	}
	bs, err := bootstrap.Join(ctx, id, nranks, rank)
	if err != nil {
		return fail(err)
	}
	g := &procGroup{bs: bs, done: make(chan struct{}), check: s.check, timeout: s.timeout}
	c, err := connectGPUs(ctx, g, id.Tag(), s, dev)
	if err != nil {
		bs.Close()
		return fail(err)
	}
	go g.routineWatch()
	err = c.procHier(ctx, cfg, func(p splitPart, cfg *Config) (*Comm, error) {
		return NewGPUComm(ctx, p.id, p.size, p.rank, gpu, cfg)
	})
	if err != nil {
		c.Close()
		return fail(err)
	}
	return c, nil
}

// gpuPeer is what GPU ranks tell each other after the first exchange.
type gpuPeer struct {
	P2P   bool   // whether this rank's GPU and its successor's reach each other
	LL128 string // why LL128 is not safe on that link ("" where it is)
}

// connectGPUs lays out this rank's connections, shares them with its ring
// neighbours and starts its device executor.
func connectGPUs(ctx context.Context, g *procGroup, tag string, s settings, dev *cuda.Device) (_ *Comm, err error) {
	bs := g.bs
	n, rank := bs.Size(), bs.Rank()
	resident, err := device.Resident(dev.Ordinal)
	if err != nil {
		return nil, err
	}
	peers, err := exchangePeers(ctx, bs, &s, dev.UUID(), resident)
	if err != nil {
		return nil, err
	}
	// Ranks on one GPU may run their kernels at once (ranks of this
	// process, or of several under MPS): fit them all.
	var shares []gpuShare
	at := map[string]int{}
	for _, p := range peers {
		key := fmt.Sprint(p.Host, p.ShmDev, p.GPU)
		local := 0
		if p.Pid == peers[rank].Pid && p.sameHost(peers[rank]) {
			local = 1
		}
		if i, ok := at[key]; ok {
			shares[i].ranks++
			shares[i].local += local
			continue
		}
		at[key] = len(shares)
		shares = append(shares, gpuShare{name: "GPU " + p.GPU, ranks: 1, local: local, resident: p.Resident})
	}
	if err := s.fitShared(shares); err != nil {
		return nil, err
	}
	if !s.ringGiven {
		s.ring = hostRing(peers) // each host's ranks in a row
	}
	local := 0
	for _, p := range peers {
		if p.Pid == peers[rank].Pid {
			local++
		}
	}
	sib := joinSiblings(tag, local)
	defer func() {
		if err != nil {
			sib.close(func() error { return nil }) // a rank that never was
		} else {
			g.sib = sib
		}
	}()
	me := s.ring.Index(rank)
	prev, next := s.ring.At(me, -1), s.ring.At(me, 1)
	oneHost := true
	for _, p := range peers {
		oneHost = oneHost && p.sameHost(peers[0])
	}
	// Can this rank's GPU and its successor's reach each other?
	p2pOK := !s.p2pOff
	ll128 := "" // a ring of one has no link
	if ord := cuda.ByUUID(peers[next].GPU); ord < 0 {
		p2pOK = false // the successor's GPU is not visible here
	} else if n > 1 {
		nd, err := cuda.Open(ord)
		switch {
		case err != nil:
			p2pOK, ll128 = false, err.Error()
		case p2pOK:
			p2pOK = p2p.EnablePeers(dev, nd) == nil
			ll128 = p2p.LL128Unsafe(dev, nd)
		}
	}
	blob, _ := json.Marshal(gpuPeer{P2P: p2pOK, LL128: ll128})
	blobs, err := bs.AllGather(ctx, blob)
	if err != nil {
		return nil, fmt.Errorf("exchanging peer access: %w", err)
	}
	allP2P := true
	var link ll128Link
	for r, b := range blobs {
		var p gpuPeer
		if err := json.Unmarshal(b, &p); err != nil {
			return nil, fmt.Errorf("malformed peer access: %v", err)
		}
		allP2P = allP2P && p.P2P
		if link.unsafe == "" && p.LL128 != "" {
			link.unsafe = fmt.Sprintf("rank %d: %s", r, p.LL128)
		}
	}
	shmOK := oneHost && !s.shmOff
	link.hostMemory = n > 1 && !(allP2P && oneHost) // shared memory or the network
	net := link.hostMemory && !shmOK
	if err := s.placeLL128(link); err != nil {
		return nil, err
	}
	if net && !s.channelsGiven {
		// As for host ranks: a few channels keep the socket connections
		// busy; 64 would be 256 sockets and as many polling proxies.
		s.channels = min(s.channels, network.GPUChannels)
		s.minChannels = min(s.minChannels, s.channels)
	}
	layout := s.layout()
	var self, prevBase, nextBase uint64
	var via string
	switch {
	case n == 1:
		via = "none"
	case allP2P && oneHost:
		via = "P2P/IPC"
		self, prevBase, nextBase, g.cleanup, err = shareIPC(ctx, bs, dev, layout, prev, next)
	case shmOK:
		via = "SHM/direct"
		self, prevBase, nextBase, g.cleanup, err = shareShm(ctx, bs, tag, dev, layout, prev, next)
	default: // as NCCL: p2p, then shm, then the network
		var kind string
		self, nextBase, kind, g.cleanup, err = shareNet(ctx, g, dev, layout, s.ring, s.variant)
		via = "NET/" + kind
	}
	if err != nil {
		return nil, err
	}
	if n == 1 {
		p, err := dev.Alloc(layout.Bytes())
		if err != nil {
			return nil, err
		}
		if err := dev.Memset(p, 0, layout.Bytes()); err != nil {
			return nil, err
		}
		self, prevBase, nextBase = uint64(p), uint64(p), uint64(p)
		g.cleanup = func() error { return dev.Free(p) }
	}
	conns := layout.Conns(self, prevBase, nextBase)
	if net {
		conns = layout.NetConns(self, nextBase)
	}
	table, err := p2p.Upload(dev, conns)
	if err != nil {
		g.cleanup()
		return nil, err
	}
	exec, err := device.New(dev.Ordinal, uintptr(table), s.channels)
	if err != nil {
		dev.Free(table)
		g.cleanup()
		return nil, err
	}
	for c := range s.channels {
		env.Info(env.SubInit|env.SubP2P, "Channel %02d : %d[%d] -> %d[%s] via %s", c, rank, dev.Ordinal, next, peers[next].GPU, via)
	}
	transportCleanup := g.cleanup
	stop := exec.Abort
	g.stop.Store(&stop)
	g.cleanup = func() error {
		// Let the kernels end — or stop them past the timeout — before
		// the memory they use goes away; then make sure the ranks of other
		// processes are done with this rank's memory too (this process's
		// are: see siblings).
		errs := []error{syncBounded(dev.Synchronize, s.timeout, exec.Abort)}
		bctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
		defer cancel()
		errs = append(errs, bs.Barrier(bctx))
		errs = append(errs, exec.Close(), dev.Free(table), transportCleanup())
		return errors.Join(errs...)
	}
	c, _ := newComm(rank, n, s, g, nil)
	c.gpu = &gpuRank{dev: dev.Ordinal, exec: exec}
	c.traceKernels()
	return c, nil
}

// syncBounded waits for sync (a wait for GPUs' work) for at most timeout
// (0: forever), then calls stop and waits again.
func syncBounded(sync func() error, timeout time.Duration, stop func()) error {
	synced := make(chan error, 1)
	go func() { synced <- sync() }()
	if timeout <= 0 {
		return <-synced
	}
	select {
	case err := <-synced:
		return err
	case <-time.After(timeout):
		stop()
		return <-synced
	}
}

// regionShare is how a rank shares its connections' region.
type regionShare struct {
	Pid    int    `json:"pid"`
	Addr   uint64 `json:"addr"`   // for ranks of the same process
	Handle []byte `json:"handle"` // CUDA IPC handle, for the others
}

// shareIPC places this rank's connections in its GPU's memory and maps its
// ring neighbours' through CUDA IPC. It returns the three regions' bases as
// this GPU sees them and what releases them.
func shareIPC(ctx context.Context, bs *bootstrap.Bootstrap, dev *cuda.Device, l p2p.Layout, prev, next int) (self, prevBase, nextBase uint64, cleanup func() error, err error) {
	region, err := dev.Alloc(l.Bytes())
	if err != nil {
		return 0, 0, 0, nil, err
	}
	var opened []cuda.Ptr
	cleanup = func() error {
		var errs []error
		for _, p := range opened {
			errs = append(errs, dev.CloseIPC(p))
		}
		return errors.Join(append(errs, dev.Free(region))...)
	}
	fail := func(err error) (uint64, uint64, uint64, func() error, error) {
		cleanup()
		return 0, 0, 0, nil, err
	}
	if err := dev.Memset(region, 0, l.Bytes()); err != nil {
		return fail(err)
	}
	h, err := dev.ExportIPC(region)
	if err != nil {
		return fail(err)
	}
	// Ranks in this process (nccl-tests' -g 2, say) use the region's
	// address itself: a process cannot open its own IPC handles.
	mine := regionShare{Pid: os.Getpid(), Addr: uint64(region), Handle: h[:]}
	blob, _ := json.Marshal(mine)
	blobs, err := bs.AllGather(ctx, blob)
	if err != nil {
		return fail(fmt.Errorf("exchanging IPC handles: %w", err))
	}
	bases := map[int]uint64{bs.Rank(): uint64(region)}
	for _, r := range []int{prev, next} {
		if _, ok := bases[r]; ok {
			continue
		}
		var sh regionShare
		if err := json.Unmarshal(blobs[r], &sh); err != nil {
			return fail(fmt.Errorf("rank %d sent malformed connection handles: %v", r, err))
		}
		if sh.Pid == mine.Pid {
			bases[r] = sh.Addr
			continue
		}
		var hr cuda.IPCHandle
		if len(sh.Handle) != len(hr) {
			return fail(fmt.Errorf("rank %d sent a %d-byte IPC handle", r, len(sh.Handle)))
		}
		copy(hr[:], sh.Handle)
		p, err := dev.OpenIPC(hr)
		if err != nil {
			return fail(fmt.Errorf("mapping rank %d's connections: %w", r, err))
		}
		opened = append(opened, p)
		bases[r] = uint64(p)
	}
	if err := bs.Barrier(ctx); err != nil {
		return fail(err)
	}
	return bases[bs.Rank()], bases[prev], bases[next], cleanup, nil
}

// shareShm places this rank's connections in a /dev/shm segment that its
// neighbours map; every process registers its mappings with CUDA, so the
// kernels read and write host memory directly. The segment's name goes
// away once everyone has mapped it.
func shareShm(ctx context.Context, bs *bootstrap.Bootstrap, tag string, dev *cuda.Device, l p2p.Layout, prev, next int) (self, prevBase, nextBase uint64, cleanup func() error, err error) {
	rank := bs.Rank()
	size := int(l.Bytes())
	name := shm.SegmentName(tag+"g", rank)
	var segs []*sys.Segment
	var registered [][]byte
	cleanup = func() error {
		var errs []error
		for _, m := range registered {
			errs = append(errs, dev.UnregisterHost(m))
		}
		for _, sg := range segs {
			errs = append(errs, sg.Close())
		}
		return errors.Join(errs...)
	}
	fail := func(err error) (uint64, uint64, uint64, func() error, error) {
		for r := range bs.Size() {
			sys.Unlink(shm.SegmentName(tag+"g", r))
		}
		cleanup()
		return 0, 0, 0, nil, err
	}
	own, err := sys.CreateSegment(name, size)
	if err != nil {
		return fail(err)
	}
	segs = append(segs, own)
	if err := bs.Barrier(ctx); err != nil {
		return fail(err)
	}
	maps := map[int][]byte{rank: own.Mem}
	for _, r := range []int{prev, next} {
		if _, ok := maps[r]; ok {
			continue
		}
		sg, err := sys.OpenSegment(shm.SegmentName(tag+"g", r), size)
		if err != nil {
			return fail(fmt.Errorf("mapping rank %d's connections: %w", r, err))
		}
		segs = append(segs, sg)
		maps[r] = sg.Mem
	}
	if err := bs.Barrier(ctx); err != nil {
		return fail(err)
	}
	if err := sys.Unlink(name); err != nil {
		return fail(err)
	}
	bases := map[int]uint64{}
	for r, m := range maps {
		p, err := dev.RegisterHost(m)
		if err != nil {
			return fail(err)
		}
		registered = append(registered, m)
		bases[r] = uint64(p)
	}
	return bases[rank], bases[prev], bases[next], cleanup, nil
}

// shareNet connects this rank's GPU to its neighbours through the net
// transport: two regions of host memory registered with CUDA — its own
// (the receive side, which the proxy from each channel's predecessor
// fills) and a mirror of the neighbours' (which the kernel fills and the
// proxy to each channel's successor forwards) — driven by proxies
// (network.Start; an RDMA wire registers the regions' channel parts: the
// FIFOs are staged in host memory, GPUDirect is not done). Each channel's
// neighbours are those variant v gives it on ring r. It returns the
// regions' device addresses for p2p.Layout.NetConns.
func shareNet(ctx context.Context, g *procGroup, dev *cuda.Device, l p2p.Layout, r ring.Ring, v ring.Variant) (self, mirror uint64, kind string, cleanup func() error, err error) {
	own, mir := mem.Alloc(int(l.Bytes()), 4096), mem.Alloc(int(l.Bytes()), 4096)
	send, recv, err := l.NetViews(own, mir)
	if err != nil {
		return 0, 0, "", nil, err
	}
	var registered [][]byte
	var nt *network.Net
	cleanup = func() error {
		var errs []error
		if nt != nil {
			errs = append(errs, nt.Close())
		}
		for _, m := range registered {
			errs = append(errs, dev.UnregisterHost(m))
		}
		runtime.KeepAlive(own)
		runtime.KeepAlive(mir)
		return errors.Join(errs...)
	}
	var bases [2]uint64
	for i, m := range [][]byte{own, mir} {
		p, err := dev.RegisterHost(m)
		if err != nil {
			cleanup()
			return 0, 0, "", nil, err
		}
		registered, bases[i] = append(registered, m), uint64(p)
	}
	me := g.bs.Rank()
	var ends []network.End
	for c := range l.Channels {
		prev, next := ring.Neighbours(r, v, c, me)
		ends = append(ends,
			network.End{Edge: transport.Edge{From: me, To: next, Ch: c}, Conn: send[c], Mem: l.ChannelRegion(mir, c)},
			network.End{Edge: transport.Edge{From: prev, To: me, Ch: c}, Conn: recv[c], Mem: l.ChannelRegion(own, c)})
	}
	sizes := transport.Sizes{Simple: l.SimpleBytes, LL: l.LLBytes}
	if nt, kind, err = network.Start(ctx, g.bs, ends, sizes, g.fail, &g.abort); err != nil {
		cleanup()
		return 0, 0, "", nil, err
	}
	g.net = true
	return bases[0], bases[1], kind, cleanup, nil
}

// split is Split in a build with the cuda tag.
func (c *Comm) split(ctx context.Context, color, key int, cfg *Config) (*Comm, error) {
	g, ok := c.group.(*procGroup)
	if !ok || c.gpu == nil {
		return nil, errs.Invalid("split", c.rank, "Split needs a communicator made by NewGPUComm")
	}
	part, err := splitRendezvous(ctx, g.bs, color, key, NewUniqueID)
	if err != nil {
		return nil, errs.At("split", c.rank, err)
	}
	if color < 0 {
		return nil, nil
	}
	return NewGPUComm(ctx, part.id, part.size, part.rank, c.gpu.dev, cfg)
}
