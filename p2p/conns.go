//go:build cuda

package p2p

import (
	"errors"
	"fmt"

	"github.com/ringo-ccl/ringo/internal/cuda"
	"github.com/ringo-ccl/ringo/kernels"
)

// Options shape the connections of a ring.
type Options struct {
	Channels    int
	SimpleBytes int  // Simple FIFO per connection (NCCL_BUFFSIZE)
	LLBytes     int  // LL FIFO per connection (NCCL_LL_BUFFSIZE)
	Read        bool // Simple slots in the sender's memory, read by the receiver
	Disabled    bool // NCCL_P2P_DISABLE: no access between different GPUs
}

// Ring is the connections of every rank of an in-process ring.
type Ring struct {
	devs    []*cuda.Device
	regions []cuda.Ptr // per rank, on its GPU
	tables  []cuda.Ptr // per rank: its RingoConn table, one per channel
}

// region layout, per rank, per channel c at c*stride:
//
//	tail  (128 B)  steps produced into this rank's incoming connection
//	head  (128 B)  steps consumed from this rank's outgoing connection
//	state (128 B)  this rank's send and receive step (kept across launches)
//	LL in          LL FIFO of the incoming connection
//	Simple         Simple FIFO of the incoming connection (write) or of the
//	               outgoing one (read)
const (
	tailOff  = 0
	headOff  = 128
	stateOff = 256
	llOff    = 384
)

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
		if a.Ordinal == b.Ordinal || n == 1 {
			continue
		}
		if opts.Disabled {
			return nil, fmt.Errorf("%w: NCCL_P2P_DISABLE=1 between rank %d (GPU %d) and rank %d (GPU %d), and ringo has no other GPU transport yet",
				ErrNoPeerAccess, r, a.Ordinal, next(r), b.Ordinal)
		}
		for _, pair := range [][2]*cuda.Device{{a, b}, {b, a}} {
			if err := Probe(pair[0].Ordinal, pair[1].Ordinal); err != nil {
				return nil, fmt.Errorf("p2p: ranks %d and %d: %w", r, next(r), err)
			}
			if err := pair[0].EnablePeerAccess(pair[1]); err != nil {
				return nil, err
			}
		}
	}
	stride := int64(llOff + opts.LLBytes + opts.SimpleBytes)
	stride = (stride + 4095) / 4096 * 4096
	g := &Ring{devs: devs}
	fail := func(err error) (*Ring, error) {
		g.Close()
		return nil, err
	}
	for r := range n {
		p, err := devs[r].Alloc(stride * int64(opts.Channels))
		if err != nil {
			return fail(err)
		}
		g.regions = append(g.regions, p)
		if err := devs[r].Memset(p, 0, stride*int64(opts.Channels)); err != nil {
			return fail(err)
		}
	}
	at := func(r, c int, off int64) uint64 { return uint64(g.regions[r]) + uint64(int64(c)*stride+off) }
	simple := int64(llOff + opts.LLBytes)
	for r := range n {
		conns := make([]kernels.Conn, opts.Channels)
		if n > 1 {
			p, x := prev(r), next(r)
			for c := range conns {
				in, out := at(r, c, simple), at(x, c, simple) // write: slots at the receiver
				if opts.Read {
					in, out = at(p, c, simple), at(r, c, simple) // read: slots at the sender
				}
				conns[c] = kernels.Conn{
					RecvBuf: in, RecvTail: at(r, c, tailOff), RecvHead: at(p, c, headOff),
					SendBuf: out, SendTail: at(x, c, tailOff), SendHead: at(r, c, headOff),
					State: at(r, c, stateOff), RecvLL: at(r, c, llOff), SendLL: at(x, c, llOff),
				}
			}
		} else {
			for c := range conns {
				conns[c].State = at(r, c, stateOff)
			}
		}
		buf := kernels.EncodeConns(nil, conns)
		t, err := devs[r].Alloc(int64(len(buf)))
		if err != nil {
			return fail(err)
		}
		g.tables = append(g.tables, t)
		if err := devs[r].CopyHtoD(t, buf); err != nil {
			return fail(err)
		}
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
