package p2p

import (
	"fmt"
	"sync/atomic"

	"github.com/ringo-ccl/ringo/internal/mem"
	"github.com/ringo-ccl/ringo/kernels"
	"github.com/ringo-ccl/ringo/ring"
	"github.com/ringo-ccl/ringo/transport"
)

// Layout is where a rank keeps its connections: for each round of
// connections (Tables.Add) a region, in which the rank's entry i of the
// round occupies [i·Stride, (i+1)·Stride):
//
//	tail  (128 B)  steps produced into the entry's incoming connection;
//	               on a net connection, the post entries follow it (postsOff)
//	head  (128 B)  steps consumed from the entry's outgoing connection;
//	               the mailbox of its direct halves follows it (ptrsOff:
//	               slots posted, then NSteps addresses)
//	state (128 B)  the entry's send and receive step (kept across launches)
//	LL in          LL FIFO of the incoming connection
//	LL128 in       LL128 FIFO of the incoming connection (none where LL128
//	               is off: host memory, or links it is not safe on)
//	Simple         Simple FIFO of the incoming connection (write) or of the
//	               outgoing one (read)
//
// The same layout serves ranks of one process (regions in GPU memory, seen
// directly), of several (GPU memory through CUDA IPC) and GPUs without peer
// access (host shared memory registered with CUDA).
type Layout struct {
	SimpleBytes int  // Simple FIFO per connection (NCCL_BUFFSIZE)
	LLBytes     int  // LL FIFO per connection (NCCL_LL_BUFFSIZE)
	LL128Bytes  int  // LL128 FIFO per connection (NCCL_LL128_BUFFSIZE); 0: none
	Read        bool // Simple slots in the sender's region, read by the receiver
}

const (
	tailOff  = 0
	postsOff = 8 // NSteps u64, inside the tail's line
	headOff  = 128
	ptrsOff  = headOff + 8 // 1 + NSteps u64, inside the head's line
	stateOff = 256
	llOff    = 384
)

// Stride is the bytes of one entry's part of a region, page aligned.
func (l Layout) Stride() int64 {
	s := l.simpleOff() + int64(l.SimpleBytes)
	return (s + 4095) / 4096 * 4096
}

func (l Layout) ll128Off() int64  { return int64(llOff + l.LLBytes) }
func (l Layout) simpleOff() int64 { return l.ll128Off() + int64(l.LL128Bytes) }

// Bytes is the size of a region of n entries.
func (l Layout) Bytes(n int) int64 { return l.Stride() * int64(n) }

// Place is where rank q's region of a round starts, as the wiring rank's
// GPU sees it.
type Place func(q int) uint64

// Conns wires rank's entries of round r from the rounds' regions (at).
func (l Layout) Conns(r *Round, rank int, at Place) []kernels.Conn {
	stride := uint64(l.Stride())
	slot := func(q, i int) uint64 { return at(q) + uint64(i)*stride }
	conns := make([]kernels.Conn, len(r.Entries[rank]))
	for i, e := range r.Entries[rank] {
		var from, to uint64
		if e.Recv >= 0 {
			from = slot(e.Recv, r.sender(transport.Edge{From: e.Recv, To: rank, Ch: e.Ch}))
		}
		if e.Send >= 0 {
			to = slot(e.Send, r.receiver(transport.Edge{From: rank, To: e.Send, Ch: e.Ch}))
		}
		conns[i] = l.conn(e, slot(rank, i), from, to)
	}
	return conns
}

// conn wires entry e whose own part of a region is at own, the sender's
// entry of its incoming connection at from, the receiver's entry of its
// outgoing one at to.
func (l Layout) conn(e kernels.Entry, own, from, to uint64) kernels.Conn {
	simple, ll128 := uint64(l.simpleOff()), uint64(l.ll128Off())
	k := kernels.Conn{State: own + stateOff}
	if e.Recv >= 0 {
		k.RecvBuf, k.RecvTail, k.RecvHead, k.RecvLL, k.RecvPtrs = own+simple, own+tailOff, from+headOff, own+llOff, from+ptrsOff
		if l.Read {
			k.RecvBuf = from + simple
		}
		if l.LL128Bytes > 0 {
			k.RecvLL128 = own + ll128
		}
	}
	if e.Send >= 0 {
		k.SendBuf, k.SendTail, k.SendHead, k.SendLL, k.SendPtrs = to+simple, to+tailOff, own+headOff, to+llOff, own+ptrsOff
		if l.Read {
			k.SendBuf = own + simple
		}
		if l.LL128Bytes > 0 {
			k.SendLL128 = to + ll128
		}
	}
	return k
}

// EntryRegion returns entry i's part of a region laid out by l.
func (l Layout) EntryRegion(region []byte, i int) []byte {
	stride := int(l.Stride())
	return region[i*stride : (i+1)*stride : (i+1)*stride]
}

// NetConns wires the entries of a rank whose peers are reached through a
// net transport's proxies: its own region of the round (self, as its GPU
// sees it) receives, and a mirror region of as many entries (mirror)
// stands in for the peers' — entry i "sends" into the mirror's entry i,
// where the send proxy picks the posts up (SendPosts says what each
// carries), and stores its credits for the sender there. Slots are
// written by the sender (no P2P read), and no proxy forwards LL128.
func (l Layout) NetConns(entries []kernels.Entry, self, mirror uint64) []kernels.Conn {
	w := l
	w.Read = false
	stride := uint64(l.Stride())
	conns := make([]kernels.Conn, len(entries))
	for i, e := range entries {
		m := mirror + uint64(i)*stride
		conns[i] = w.conn(e, self+uint64(i)*stride, m, m)
		conns[i].RecvLL128, conns[i].SendLL128 = 0, 0
		conns[i].RecvPtrs, conns[i].SendPtrs = 0, 0 // no direct halves through a proxy
		if e.Send >= 0 {
			conns[i].SendPosts = m + postsOff
		}
	}
	return conns
}

// NetViews returns the host's view, for the proxies, of the entries
// NetConns wires, given the same regions as host memory (each
// l.Bytes(len(entries)) long, 128-byte aligned): per entry, its send
// connection (mirror's tail, posts and slots; head in own) and its receive
// connection (own's tail and slots; head in mirror), nil where the entry
// has no such end.
func (l Layout) NetViews(entries []kernels.Entry, own, mirror []byte) (send, recv []*transport.Conn, err error) {
	size := l.Bytes(len(entries))
	if int64(len(own)) != size || int64(len(mirror)) != size || !mem.Aligned(own, 128) || !mem.Aligned(mirror, 128) {
		return nil, nil, fmt.Errorf("p2p: net regions of %d and %d bytes, want %d, 128-byte aligned", len(own), len(mirror), size)
	}
	sizes := transport.Sizes{Simple: l.SimpleBytes, LL: l.LLBytes}
	view := func(slots, head, tail []byte) transport.ConnView {
		return transport.ConnView{
			Head:   mem.Word(head, headOff),
			Tail:   mem.Word(tail, tailOff),
			Posts:  mem.Slice[atomic.Uint64](tail[postsOff : postsOff+8*ring.NSteps]),
			Simple: slots[l.simpleOff() : l.simpleOff()+int64(l.SimpleBytes)],
			LL:     mem.Slice[atomic.Uint64](slots[llOff : llOff+l.LLBytes]),
		}
	}
	send, recv = make([]*transport.Conn, len(entries)), make([]*transport.Conn, len(entries))
	for i, e := range entries {
		o, m := l.EntryRegion(own, i), l.EntryRegion(mirror, i)
		if e.Send >= 0 {
			if send[i], err = transport.NewConnView(view(m, o, m), sizes); err != nil {
				return nil, nil, fmt.Errorf("p2p: %w", err)
			}
		}
		if e.Recv >= 0 {
			if recv[i], err = transport.NewConnView(view(o, m, o), sizes); err != nil {
				return nil, nil, fmt.Errorf("p2p: %w", err)
			}
		}
	}
	return send, recv, nil
}
