package p2p

import (
	"fmt"
	"sync/atomic"

	"github.com/ringo-ccl/ringo/internal/mem"
	"github.com/ringo-ccl/ringo/kernels"
	"github.com/ringo-ccl/ringo/ring"
	"github.com/ringo-ccl/ringo/transport"
)

// Layout is where a rank keeps its connections: one region per rank, in
// which channel c occupies [c·Stride, (c+1)·Stride):
//
//	tail  (128 B)  steps produced into this rank's incoming connection;
//	               on a net connection, the post entries follow it (postsOff)
//	head  (128 B)  steps consumed from this rank's outgoing connection
//	state (128 B)  this rank's send and receive step (kept across launches)
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
	Channels    int
	SimpleBytes int // Simple FIFO per connection (NCCL_BUFFSIZE)
	LLBytes     int // LL FIFO per connection (NCCL_LL_BUFFSIZE)
	LL128Bytes  int // LL128 FIFO per connection (NCCL_LL128_BUFFSIZE); 0: none
	// Variant is the plans' generator: its backward channels receive from
	// the successor and send to the predecessor.
	Variant ring.Variant
	Read    bool // Simple slots in the sender's region, read by the receiver
}

const (
	tailOff  = 0
	postsOff = 8 // NSteps u64, inside the tail's line
	headOff  = 128
	stateOff = 256
	llOff    = 384
)

// Stride is the bytes of one channel's part of a region, page aligned.
func (l Layout) Stride() int64 {
	s := l.simpleOff() + int64(l.SimpleBytes)
	return (s + 4095) / 4096 * 4096
}

func (l Layout) ll128Off() int64  { return int64(llOff + l.LLBytes) }
func (l Layout) simpleOff() int64 { return l.ll128Off() + int64(l.LL128Bytes) }

// Bytes is the size of a region.
func (l Layout) Bytes() int64 { return l.Stride() * int64(l.Channels) }

// Conns wires one rank's connections from the base addresses, as this
// rank's GPU sees them, of its own region and its predecessor's and
// successor's (all the same on a ring of one).
func (l Layout) Conns(self, prev, next uint64) []kernels.Conn {
	stride := uint64(l.Stride())
	simple, ll128 := uint64(l.simpleOff()), uint64(l.ll128Off())
	at := func(base uint64, c int, off uint64) uint64 { return base + uint64(c)*stride + off }
	conns := make([]kernels.Conn, l.Channels)
	for c := range conns {
		prev, next := prev, next
		if l.Variant.Backwards(c) {
			prev, next = next, prev
		}
		in, out := at(self, c, simple), at(next, c, simple) // write: slots at the receiver
		if l.Read {
			in, out = at(prev, c, simple), at(self, c, simple) // read: slots at the sender
		}
		conns[c] = kernels.Conn{
			RecvBuf: in, RecvTail: at(self, c, tailOff), RecvHead: at(prev, c, headOff),
			SendBuf: out, SendTail: at(next, c, tailOff), SendHead: at(self, c, headOff),
			State: at(self, c, stateOff), RecvLL: at(self, c, llOff), SendLL: at(next, c, llOff),
		}
		if l.LL128Bytes > 0 {
			conns[c].RecvLL128, conns[c].SendLL128 = at(self, c, ll128), at(next, c, ll128)
		}
	}
	return conns
}

// ChannelRegion returns channel c's part of a region laid out by l.
func (l Layout) ChannelRegion(region []byte, c int) []byte {
	stride := int(l.Stride())
	return region[c*stride : (c+1)*stride : (c+1)*stride]
}

// NetConns wires the connections of a rank whose neighbours are reached
// through a net transport's proxies: its own region (self, as its GPU sees
// it) receives, and a mirror region (mirror) stands in for both neighbours'
// — the kernel "sends" into the mirror, where the send proxy picks the posts
// up (SendPosts says what each carries), and stores its credits for the
// predecessor there. Slots are written by the sender (no P2P read).
func (l Layout) NetConns(self, mirror uint64) []kernels.Conn {
	w := l
	w.Read = false
	conns := w.Conns(self, mirror, mirror)
	for c := range conns {
		conns[c].SendPosts = mirror + uint64(c)*uint64(l.Stride()) + postsOff
		conns[c].RecvLL128, conns[c].SendLL128 = 0, 0 // no proxy forwards LL128
	}
	return conns
}

// NetViews returns the host's view, for the proxies, of the connections
// NetConns wires, given the same regions as host memory (each l.Bytes()
// long, 128-byte aligned): per channel, the send connection (mirror's tail,
// posts and slots; head in own) and the receive connection (own's tail and
// slots; head in mirror).
func (l Layout) NetViews(own, mirror []byte) (send, recv []*transport.Conn, err error) {
	if int64(len(own)) != l.Bytes() || int64(len(mirror)) != l.Bytes() || !mem.Aligned(own, 128) || !mem.Aligned(mirror, 128) {
		return nil, nil, fmt.Errorf("p2p: net regions of %d and %d bytes, want %d, 128-byte aligned", len(own), len(mirror), l.Bytes())
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
	for c := range l.Channels {
		o, m := l.ChannelRegion(own, c), l.ChannelRegion(mirror, c)
		s, err1 := transport.NewConnView(view(m, o, m), sizes)
		r, err2 := transport.NewConnView(view(o, m, o), sizes)
		if err1 != nil || err2 != nil {
			return nil, nil, fmt.Errorf("p2p: %v %v", err1, err2)
		}
		send, recv = append(send, s), append(recv, r)
	}
	return send, recv, nil
}
