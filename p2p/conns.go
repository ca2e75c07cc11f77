//go:build cuda

package p2p

import (
	"errors"
	"fmt"

	"github.com/ringo-ccl/ringo/internal/cuda"
	"github.com/ringo-ccl/ringo/kernels"
)

// Ring is the connections of every rank of an in-process ring.
type Ring struct {
	devs    []*cuda.Device
	regions []cuda.Ptr // per rank, on its GPU
	tables  []cuda.Ptr // per rank: its RingoConn table, one per channel
}

// Layout is where a rank keeps its connections: one region per rank, in
// which channel c occupies [c·Stride, (c+1)·Stride):
//
//	tail  (128 B)  steps produced into this rank's incoming connection
//	head  (128 B)  steps consumed from this rank's outgoing connection
//	state (128 B)  this rank's send and receive step (kept across launches)
//	LL in          LL FIFO of the incoming connection
//	Simple         Simple FIFO of the incoming connection (write) or of the
//	               outgoing one (read)
//
// The same layout serves ranks of one process (regions in GPU memory, seen
// directly), of several (GPU memory through CUDA IPC) and GPUs without peer
// access (host shared memory registered with CUDA).
type Layout struct {
	Channels    int
	SimpleBytes int  // Simple FIFO per connection (NCCL_BUFFSIZE)
	LLBytes     int  // LL FIFO per connection (NCCL_LL_BUFFSIZE)
	Read        bool // Simple slots in the sender's region, read by the receiver
}

const (
	tailOff  = 0
	headOff  = 128
	stateOff = 256
	llOff    = 384
)

// Stride is the bytes of one channel's part of a region, page aligned.
func (l Layout) Stride() int64 {
	s := int64(llOff + l.LLBytes + l.SimpleBytes)
	return (s + 4095) / 4096 * 4096
}

// Bytes is the size of a region.
func (l Layout) Bytes() int64 { return l.Stride() * int64(l.Channels) }

// Conns wires one rank's connections from the base addresses, as this
// rank's GPU sees them, of its own region and its predecessor's and
// successor's (all the same on a ring of one).
func (l Layout) Conns(self, prev, next uint64) []kernels.Conn {
	stride := uint64(l.Stride())
	simple := uint64(llOff + l.LLBytes)
	at := func(base uint64, c int, off uint64) uint64 { return base + uint64(c)*stride + off }
	conns := make([]kernels.Conn, l.Channels)
	for c := range conns {
		in, out := at(self, c, simple), at(next, c, simple) // write: slots at the receiver
		if l.Read {
			in, out = at(prev, c, simple), at(self, c, simple) // read: slots at the sender
		}
		conns[c] = kernels.Conn{
			RecvBuf: in, RecvTail: at(self, c, tailOff), RecvHead: at(prev, c, headOff),
			SendBuf: out, SendTail: at(next, c, tailOff), SendHead: at(self, c, headOff),
			State: at(self, c, stateOff), RecvLL: at(self, c, llOff), SendLL: at(next, c, llOff),
		}
	}
	return conns
}

// Options shape the connections of an in-process ring.
type Options struct {
	Layout
	Disabled bool // NCCL_P2P_DISABLE: no access between different GPUs
}

// Upload copies a connection table to device memory of dev.
func Upload(dev *cuda.Device, conns []kernels.Conn) (cuda.Ptr, error) {
	buf := kernels.EncodeConns(nil, conns)
	t, err := dev.Alloc(int64(len(buf)))
	if err != nil {
		return 0, err
	}
	if err := dev.CopyHtoD(t, buf); err != nil {
		dev.Free(t)
		return 0, err
	}
	return t, nil
}

// EnablePeers checks, and enables, access in both directions between GPUs
// a and b (nothing when they are the same GPU).
func EnablePeers(a, b *cuda.Device) error {
	if a.Ordinal == b.Ordinal {
		return nil
	}
	for _, pair := range [][2]*cuda.Device{{a, b}, {b, a}} {
		if err := Probe(pair[0].Ordinal, pair[1].Ordinal); err != nil {
			return err
		}
		if err := pair[0].EnablePeerAccess(pair[1]); err != nil {
			return err
		}
	}
	return nil
}

// Connect lays out and wires the connections of a ring whose rank r runs on
// devs[r], in the given order (a permutation of the ranks), and enables the
// peer access it needs. Peer access that the driver refuses, or that
// opts.Disabled forbids, between ring neighbours on different GPUs is an
// error naming both.
func Connect(devs []*cuda.Device, order []int, opts Options) (*Ring, error) {
	n := len(devs)
	if n < 1 || len(order) != n || opts.Channels < 1 || opts.Channels > kernels.MaxChannels {
		return nil, fmt.Errorf("p2p: %d GPUs, ring of %d, %d channels", n, len(order), opts.Channels)
	}
	pos := make([]int, n)
	for i, r := range order {
		pos[r] = i
	}
	next := func(r int) int { return order[(pos[r]+1)%n] }
	prev := func(r int) int { return order[(pos[r]+n-1)%n] }
	for r := range n {
		a, b := devs[r], devs[next(r)]
		if a.Ordinal == b.Ordinal {
			continue
		}
		if opts.Disabled {
			return nil, fmt.Errorf("%w: NCCL_P2P_DISABLE=1 between rank %d (GPU %d) and rank %d (GPU %d), and ringo has no other GPU transport in one process",
				ErrNoPeerAccess, r, a.Ordinal, next(r), b.Ordinal)
		}
		if err := EnablePeers(a, b); err != nil {
			return nil, fmt.Errorf("p2p: ranks %d and %d: %w", r, next(r), err)
		}
	}
	g := &Ring{devs: devs}
	fail := func(err error) (*Ring, error) {
		g.Close()
		return nil, err
	}
	size := opts.Bytes()
	for r := range n {
		p, err := devs[r].Alloc(size)
		if err != nil {
			return fail(err)
		}
		g.regions = append(g.regions, p)
		if err := devs[r].Memset(p, 0, size); err != nil {
			return fail(err)
		}
	}
	for r := range n {
		base := func(q int) uint64 { return uint64(g.regions[q]) }
		t, err := Upload(devs[r], opts.Conns(base(r), base(prev(r)), base(next(r))))
		if err != nil {
			return fail(err)
		}
		g.tables = append(g.tables, t)
	}
	return g, nil
}

// Table returns the device address of rank r's connection table.
func (g *Ring) Table(r int) cuda.Ptr { return g.tables[r] }

// Close frees the connections' memory. No kernel may be using them.
func (g *Ring) Close() error {
	var errs []error
	for r, p := range g.regions {
		errs = append(errs, g.devs[r].Free(p))
	}
	for r, p := range g.tables {
		errs = append(errs, g.devs[r].Free(p))
	}
	g.regions, g.tables = nil, nil
	return errors.Join(errs...)
}
