package ringo

import (
	"context"
	"math"
	"math/bits"

	"github.com/ringo-ccl/ringo/internal/calls"
	"github.com/ringo-ccl/ringo/ring"
)

// Point-to-point on GPU communicators: the same calls as on host ones
// (sendrecv.go), on GPU buffers, enqueued on a stream — each
// communicator's messages of a call as one plan, one launch. Ranks in
// separate processes connect with each peer alone when they first talk
// (over the bootstrap's pair exchanges), so Send and Recv need no other
// rank.

// p2pChannels is how many channels a GPU communicator of n ranks, with
// channels of its own, uses with each peer for point-to-point: as NCCL's
// per-peer channels, a budget (Settings.P2PChannels: NCCL_MAX_P2P_NCHANNELS,
// else 32, or 64 for ranks of one process on one or two GPUs) shared among the
// n−1 peers, a power of two, at least 2. Two ranks that talk get
// connections of their own on each, both ways (for two ranks, the ring's). A message is cut over them
// as large as it is (a block moves ~20 GB/s through a FIFO: two channels
// carried 42 GB/s at 32 MiB on one H200); a small one takes one.
func p2pChannels(n, channels, budget int) int {
	per := max(2, budget/max(n-1, 1))
	return min(1<<(bits.Len(uint(per))-1), channels)
}

// SendOpDevice is the send of GPU buffer buf to rank peer on c, enqueued
// on stream s when its group runs (SendRecv).
func SendOpDevice[T Elem](c *Comm, buf DevPtr[T], peer int, s Stream) P2POp {
	return P2POp{c: c, msg: devBuf[T](buf).msg(true, peer, 0, buf.n), s: s}
}

// RecvOpDevice is the receive into GPU buffer buf from rank peer on c,
// enqueued on stream s when its group runs (SendRecv).
func RecvOpDevice[T Elem](c *Comm, buf DevPtr[T], peer int, s Stream) P2POp {
	return P2POp{c: c, msg: devBuf[T](buf).msg(false, peer, 0, buf.n), s: s}
}

// SendDevice enqueues the send of buf to rank peer on stream s.
func SendDevice[T Elem](ctx context.Context, c *Comm, buf DevPtr[T], peer int, s Stream) error {
	return c.runP2P(ctx, &p2pCall{name: "send", msgs: []calls.Msg{SendOpDevice(c, buf, peer, s).msg}, stream: s})
}

// RecvDevice enqueues the receive into buf from rank peer on stream s.
func RecvDevice[T Elem](ctx context.Context, c *Comm, buf DevPtr[T], peer int, s Stream) error {
	return c.runP2P(ctx, &p2pCall{name: "recv", msgs: []calls.Msg{RecvOpDevice(c, buf, peer, s).msg}, stream: s})
}

// AllToAllDevice is AllToAll on GPU buffers, enqueued on stream s.
func AllToAllDevice[T Elem](ctx context.Context, c *Comm, send, recv DevPtr[T], s Stream) error {
	return allToAll(ctx, c, devBuf[T](send), devBuf[T](recv), s)
}

// AllToAllVDevice is AllToAllV on GPU buffers, enqueued on stream s.
func AllToAllVDevice[T Elem](ctx context.Context, c *Comm, send DevPtr[T], sendCounts, sendDispls []int, recv DevPtr[T], recvCounts, recvDispls []int, s Stream) error {
	return allToAllV(ctx, c, devBuf[T](send), sendCounts, sendDispls, devBuf[T](recv), recvCounts, recvDispls, s)
}

// GatherDevice is Gather on GPU buffers, enqueued on stream s.
func GatherDevice[T Elem](ctx context.Context, c *Comm, send, recv DevPtr[T], root int, s Stream) error {
	return rooted(ctx, c, "gather", devBuf[T](send), devBuf[T](recv), root, true, s)
}

// ScatterDevice is Scatter on GPU buffers, enqueued on stream s.
func ScatterDevice[T Elem](ctx context.Context, c *Comm, send, recv DevPtr[T], root int, s Stream) error {
	return rooted(ctx, c, "scatter", devBuf[T](recv), devBuf[T](send), root, false, s)
}

type devBuf[T Elem] DevPtr[T]

func (b devBuf[T]) len() int      { return b.n }
func (b devBuf[T]) null() bool    { return b.addr == 0 }
func (b devBuf[T]) typ() DataType { return TypeOf[T]() }
func (b devBuf[T]) msg(send bool, peer, off, n int) calls.Msg {
	return calls.Msg{Send: send, Peer: peer, Count: int64(n), Type: TypeOf[T](), Dev: b.addr + uintptr(off*TypeOf[T]().Size())}
}

// p2pDevice enqueues a checked point-to-point call of a GPU communicator:
// its messages, in bytes, as one plan over the lowest send and receive
// addresses, on the connections to its peers on p2pChannels channels,
// made first where they are not yet.
func (c *Comm) p2pDevice(ctx context.Context, pc *p2pCall) error {
	s := pc.stream
	if c.size == 1 { // copies, each send into its receive
		return selfPairs(pc.msgs, func(send, recv *calls.Msg) error {
			if err := c.gpu.exec.Local(send.Dev, recv.Dev, recv.Bytes(), nil, s.h); err != nil {
				return c.launchErr(pc.name, err)
			}
			return nil
		})
	}
	// The plan's protocol for the large messages, LL for those of at most
	// NCCL_P2P_LL_THRESHOLD bytes: both ends of a message choose alike.
	// Ranks of one process send Simple messages straight into their
	// receivers' buffers.
	// On one GPU shared by every rank, a large message goes in tiles.
	proto := c.cfg.Protocol(math.MaxInt64)
	llMax, llBuff := c.cfg.P2PLL(proto)
	direct, stripe := c.gpu.direct && proto == ring.Simple, int64(0)
	if direct {
		stripe = c.gpu.stripe
	}
	spec := c.p2ps.start(ring.P2PSpec{Rank: c.rank, Size: c.size, EltSize: 1, Channels: p2pChannels(c.size, c.cfg.Channels, c.cfg.P2PChannels),
		Proto: proto, BuffSize: c.cfg.BuffSize(proto), LLMax: llMax, LLBuffSize: llBuff, Direct: direct, Stripe: stripe})
	base := [2]uintptr{math.MaxUint, math.MaxUint} // sends', receives'
	side := func(m *calls.Msg) int {
		if m.Send {
			return 0
		}
		return 1
	}
	for i := range pc.msgs {
		if m := &pc.msgs[i]; m.Bytes() > 0 {
			base[side(m)] = min(base[side(m)], m.Dev)
		}
	}
	for i := range pc.msgs {
		m := &pc.msgs[i]
		x := ring.Xfer{Peer: m.Peer, Count: m.Bytes()}
		if x.Count > 0 {
			x.Off = int64(m.Dev - base[side(m)])
		}
		if m.Send {
			spec.Sends = append(spec.Sends, x)
		} else {
			spec.Recvs = append(spec.Recvs, x)
		}
	}
	p, err := c.p2pPlan(ctx, pc)
	if err != nil {
		return err
	}
	for i := range base {
		if base[i] == math.MaxUint {
			base[i] = 0
		}
	}
	if err := c.gpu.exec.LaunchSchedule(p, c.seq, base[0], base[1], nil, s.h); err != nil {
		return c.launchErr(pc.name, err)
	}
	return nil
}
