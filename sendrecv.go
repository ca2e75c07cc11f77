package ringo

import (
	"context"
	"errors"
	"math"
	"slices"
	"sync"

	"github.com/ringo-ccl/ringo/host"
	"github.com/ringo-ccl/ringo/internal/calls"
	"github.com/ringo-ccl/ringo/internal/errs"
	"github.com/ringo-ccl/ringo/internal/mem"
	"github.com/ringo-ccl/ringo/ring"
	"github.com/ringo-ccl/ringo/transport"
)

// Point-to-point: Send, Recv and SendRecv (a group of them) between any
// two ranks, and the collectives made of them — AllToAll, AllToAllV,
// Gather, Scatter. Matching is NCCL's: the k-th send from rank a to rank b
// meets the k-th receive at b from a, and they must move the same bytes
// (their datatypes may differ). Each call's messages on one communicator
// run as one plan (ring.NewP2P), kept by its spec for the calls that
// repeat it (p2pplans.go); on a GPU communicator it
// is one launch on the call's stream (gpu_sendrecv.go: the *Device calls
// and SendOpDevice/RecvOpDevice). Ranks in separate processes connect with
// each peer they talk to on first use, the two alone (the bootstrap's
// Pair; transport.Mesh.ConnectPair, p2p.Conns.AddPair), so a Send needs no
// other rank.

// P2POp is one send or receive of a group run by SendRecv, made by SendOp
// or RecvOp (PyTorch's P2POp, for batch_isend_irecv).
type P2POp struct {
	c   *Comm
	msg calls.Msg
	s   Stream // a GPU communicator's op's (SendOpDevice, RecvOpDevice)
}

// SendOp is the send of buf to rank peer on c.
func SendOp[T Elem](c *Comm, buf []T, peer int) P2POp {
	return P2POp{c: c, msg: calls.Msg{Send: true, Peer: peer, Count: int64(len(buf)), Type: TypeOf[T](), Buf: mem.Bytes(buf)}}
}

// RecvOp is the receive into buf from rank peer on c.
func RecvOp[T Elem](c *Comm, buf []T, peer int) P2POp {
	return P2POp{c: c, msg: calls.Msg{Peer: peer, Count: int64(len(buf)), Type: TypeOf[T](), Buf: mem.Bytes(buf)}}
}

// Send sends buf to rank peer, where a Recv (or a receive of a group)
// takes it. It returns once buf may be reused. A send to this rank itself
// needs its receive in the same call: use SendRecv.
func Send[T Elem](ctx context.Context, c *Comm, buf []T, peer int) error {
	op := SendOp(c, buf, peer)
	return c.runP2P(ctx, &p2pCall{name: "send", msgs: []calls.Msg{op.msg}})
}

// Recv receives into buf what rank peer sends (Send, or a send of a
// group); buf's bytes must be the send's.
func Recv[T Elem](ctx context.Context, c *Comm, buf []T, peer int) error {
	op := RecvOp(c, buf, peer)
	return c.runP2P(ctx, &p2pCall{name: "recv", msgs: []calls.Msg{op.msg}})
}

// SendRecv runs a group of sends and receives together (NCCL's
// ncclGroupStart … ncclGroupEnd around ncclSend and ncclRecv): each
// communicator's ops, in order, as one plan, so that no op waits for a
// later one — a rank may send to and receive from every other rank in one
// group, as all-to-all does. The ops may be on several communicators, for
// one goroutine driving several ranks: GPU communicators whose plans for
// their parts are kept enqueue them in turn, the others' parts each run on
// a goroutine of their own, and SendRecv returns when all are done, with
// every failure (errors.Join). A send to the rank itself needs a
// receive from itself, of the same bytes, in the same group. A
// communicator's calls must not run concurrently, so one Comm's ops go in
// one group at a time.
func SendRecv(ctx context.Context, ops ...P2POp) error {
	// The communicators, in the order they first appear, each with the
	// stream of its first op: a group of a few needs no allocation.
	var commsArr [8]*Comm
	var streamsArr [8]Stream
	comms, streams := commsArr[:0], streamsArr[:0]
	for i, op := range ops {
		if op.c == nil {
			return errs.Invalid("sendrecv", -1, "op %d has no communicator", i)
		}
		if k := slices.Index(comms, op.c); k < 0 {
			comms, streams = append(comms, op.c), append(streams, op.s)
		} else if streams[k] != op.s {
			return errs.Invalid("sendrecv", op.c.rank, "op %d is on another stream than the communicator's earlier ops in the group", i)
		}
	}
	// Each communicator's part is its ops of the group, in order
	// (p2pCall.ops; runP2P picks them out).
	if len(comms) == 1 {
		return comms[0].runP2P(ctx, &p2pCall{name: "sendrecv", ops: ops, stream: streams[0]})
	}
	// A GPU communicator's part only enqueues its launch: those whose
	// plans are kept (p2pPlans) go one after another, here; the others,
	// whose connections two ranks may have to make at once, and host
	// communicators' parts, which run to the end, each on a goroutine.
	var seqErrs []error
	var restArr [8]int
	rest := restArr[:0] // indexes in comms
	host := slices.ContainsFunc(comms, func(c *Comm) bool { return c.gpu == nil })
	for k, c := range comms {
		if host {
			rest = append(rest, k)
			continue
		}
		if err := c.runP2P(ctx, &p2pCall{name: "sendrecv", ops: ops, stream: streams[k], keptOnly: true}); errors.Is(err, errNotKept) {
			rest = append(rest, k)
		} else if err != nil {
			seqErrs = append(seqErrs, err)
		}
	}
	if len(rest) > 0 {
		seqErrs = append(seqErrs, concurrentParts(ctx, ops, comms, streams, rest)...)
	}
	return errors.Join(seqErrs...)
}

// concurrentParts runs the parts of SendRecv's group ops of comms[k] (on
// streams[k]) for each k in which, each on a goroutine, and returns their
// errors.
func concurrentParts(ctx context.Context, ops []P2POp, comms []*Comm, streams []Stream, which []int) []error {
	out := make([]error, len(which))
	var wg sync.WaitGroup
	for i, k := range which {
		c, s := comms[k], streams[k]
		wg.Go(func() { out[i] = c.runP2P(ctx, &p2pCall{name: "sendrecv", ops: ops, stream: s}) })
	}
	wg.Wait()
	return out
}

// errNotKept is runP2P's answer to a call made with keptOnly whose plan is
// not kept: nothing was done.
var errNotKept = errors.New("ringo: no point-to-point plan kept for this call")

// AllToAll sends block p of send to rank p and receives rank p's block for
// this rank into block p of recv (NCCL's ncclAlltoAll): send and recv have
// the same length, Size() blocks of equal length, and do not overlap.
// Every rank calls it.
func AllToAll[T Elem](ctx context.Context, c *Comm, send, recv []T) error {
	return allToAll(ctx, c, hostBuf[T](send), hostBuf[T](recv), Stream{})
}

// AllToAllV sends sendCounts[p] elements at sendDispls[p] of send to rank
// p and receives recvCounts[p] elements from rank p at recvDispls[p] of
// recv (MPI_Alltoallv's semantics, in elements): rank p's sendCounts[q]
// must equal rank q's recvCounts[p]. The four slices have one entry per
// rank; counts may be zero; what is received must not overlap anything
// sent or received. Every rank calls it.
func AllToAllV[T Elem](ctx context.Context, c *Comm, send []T, sendCounts, sendDispls []int, recv []T, recvCounts, recvDispls []int) error {
	return allToAllV(ctx, c, hostBuf[T](send), sendCounts, sendDispls, hostBuf[T](recv), recvCounts, recvDispls, Stream{})
}

// Gather sends every rank's send to root, which receives rank p's at block
// p of its recv (NCCL's ncclGather): at the root len(recv) = Size() ×
// len(send); other ranks' recv is unused (nil will do). Every rank calls
// it, with sends of one length. It runs in place when the root's send is
// block root of its recv (NCCL's in-place gather): that block stays.
func Gather[T Elem](ctx context.Context, c *Comm, send, recv []T, root int) error {
	return rooted(ctx, c, "gather", hostBuf[T](send), hostBuf[T](recv), root, true, Stream{})
}

// Scatter sends block p of root's send to rank p, into its recv (NCCL's
// ncclScatter): at the root len(send) = Size() × len(recv); other ranks'
// send is unused (nil will do). Every rank calls it, with recvs of one
// length. It runs in place when the root's recv is block root of its send
// (NCCL's in-place scatter): that block stays.
func Scatter[T Elem](ctx context.Context, c *Comm, send, recv []T, root int) error {
	return rooted(ctx, c, "scatter", hostBuf[T](recv), hostBuf[T](send), root, false, Stream{})
}

// p2pBuf is a point-to-point call's buffer of elements of one type: a host
// slice (hostBuf) or GPU memory (devBuf).
type p2pBuf interface {
	len() int
	null() bool
	// msg is the message of elements [off, off+n) to (send) or from peer.
	msg(send bool, peer, off, n int) calls.Msg
	typ() DataType
}

type hostBuf[T Elem] []T

func (b hostBuf[T]) len() int      { return len(b) }
func (b hostBuf[T]) null() bool    { return b == nil }
func (b hostBuf[T]) typ() DataType { return TypeOf[T]() }
func (b hostBuf[T]) msg(send bool, peer, off, n int) calls.Msg {
	var part []T
	if n > 0 {
		part = b[off : off+n]
	}
	return calls.Msg{Send: send, Peer: peer, Count: int64(n), Type: TypeOf[T](), Buf: mem.Bytes(part)}
}

// allToAll is AllToAll and AllToAllDevice.
func allToAll(ctx context.Context, c *Comm, send, recv p2pBuf, s Stream) error {
	const name = "alltoall"
	n := c.size
	if send.len() != recv.len() || send.len()%n != 0 {
		return errs.Invalid(name, c.rank, "send has %d elements, recv %d: need the same length, %d blocks of equal length", send.len(), recv.len(), n)
	}
	count := send.len() / n
	msgs := make([]calls.Msg, 0, 2*n)
	for p := range n {
		msgs = append(msgs, send.msg(true, p, p*count, count), recv.msg(false, p, p*count, count))
	}
	return c.runP2P(ctx, &p2pCall{name: name, msgs: msgs, all: true, count: int64(count), typ: send.typ(), stream: s})
}

// allToAllV is AllToAllV and AllToAllVDevice.
func allToAllV(ctx context.Context, c *Comm, send p2pBuf, sendCounts, sendDispls []int, recv p2pBuf, recvCounts, recvDispls []int, s Stream) error {
	const name = "alltoallv"
	msgs := make([]calls.Msg, 0, 2*c.size)
	for _, side := range []struct {
		buf            p2pBuf
		counts, displs []int
		what           string
	}{{send, sendCounts, sendDispls, "send"}, {recv, recvCounts, recvDispls, "recv"}} {
		for _, a := range []struct {
			s    []int
			name string
		}{{side.counts, side.what + "Counts"}, {side.displs, side.what + "Displs"}} {
			if len(a.s) != c.size {
				return errs.Invalid(name, c.rank, "%s has %d entries, need one per rank (%d)", a.name, len(a.s), c.size)
			}
		}
		for p := range c.size {
			cnt, off := side.counts[p], side.displs[p]
			switch {
			case cnt < 0:
				return errs.Invalid(name, c.rank, "%sCounts[%d] = %d is negative", side.what, p, cnt)
			case off < 0:
				return errs.Invalid(name, c.rank, "%sDispls[%d] = %d is negative", side.what, p, off)
			case cnt > 0 && side.buf.null():
				return errs.Invalid(name, c.rank, "%s is nil, but %sCounts[%d] = %d", side.what, side.what, p, cnt)
			case cnt > 0 && off > side.buf.len()-cnt:
				return errs.Invalid(name, c.rank, "%sDispls[%d] = %d + %sCounts[%d] = %d reaches past %s's %d elements",
					side.what, p, off, side.what, p, cnt, side.what, side.buf.len())
			}
			msgs = append(msgs, side.buf.msg(side.what == "send", p, off, cnt))
		}
	}
	return c.runP2P(ctx, &p2pCall{name: name, msgs: msgs, all: true, typ: send.typ(), stream: s})
}

// rooted runs a gather (toRoot) or a scatter: every rank's one block goes
// to root, or comes from it; the root's all holds Size() such blocks. At a
// root whose one is its own block of all (in place), that block moves
// nothing.
func rooted(ctx context.Context, c *Comm, name string, one, all p2pBuf, root int, toRoot bool, s Stream) error {
	if root < 0 || root >= c.size {
		return errs.Invalid(name, c.rank, "root %d outside [0, %d)", root, c.size)
	}
	oneName, allName := "recv", "send"
	if toRoot {
		oneName, allName = allName, oneName
	}
	count := one.len()
	own := one.msg(toRoot, root, 0, count)
	msgs := []calls.Msg{own}
	if c.rank == root {
		if all.len() != c.size*count {
			return errs.Invalid(name, c.rank, "root's %s has %d elements, need %d ranks × %s's %d", allName, all.len(), c.size, oneName, count)
		}
		inPlace := sameStart(own, all.msg(!toRoot, root, root*count, count))
		if inPlace {
			msgs = msgs[:0]
		}
		for p := range c.size {
			if p != root || !inPlace {
				msgs = append(msgs, all.msg(!toRoot, p, p*count, count))
			}
		}
	}
	return c.runP2P(ctx, &p2pCall{name: name, msgs: msgs, all: true, count: int64(count), typ: one.typ(), stream: s})
}

// sameStart reports whether two messages of one call, of one kind of
// memory, start at the same address and move bytes.
func sameStart(a, b calls.Msg) bool {
	if a.Dev != 0 || b.Dev != 0 {
		return a.Dev == b.Dev && a.Bytes() > 0
	}
	return mem.Same(a.Buf, b.Buf)
}

// p2pCall is one communicator's part of a point-to-point call.
type p2pCall struct {
	name string
	msgs []calls.Msg
	// Or, instead of msgs, a group's ops, whose messages of this
	// communicator runP2P copies into its own slice once it holds the
	// rank (no allocation per call).
	ops []P2POp
	// For calls every rank makes: what the ranks compare.
	all   bool
	count int64
	typ   DataType
	// A GPU communicator's: the stream the call is enqueued on.
	stream Stream
	// keptOnly: run only with a kept plan, else return errNotKept having
	// done nothing (SendRecv's sequential launches).
	keptOnly bool
}

// runP2P checks and runs this rank's part of a point-to-point call: entered
// as collectives are when every rank makes it, else only checked (its
// rank held meanwhile).
func (c *Comm) runP2P(ctx context.Context, pc *p2pCall) error {
	if err := c.hold(pc.name, c.gpu != nil); err != nil {
		return err
	}
	defer c.release()
	if pc.ops != nil {
		pc.msgs = c.p2ps.messages(c, pc.ops)
	}
	a := calls.Args{Coll: ring.SendRecvs, Name: pc.name, Count: pc.count, Type: pc.typ, Msgs: pc.msgs, AllRanks: pc.all,
		Device: c.gpu != nil, StreamGPU: pc.stream.dev, Stream: pc.stream.h}
	if err := c.admit(ctx, &a); err != nil {
		return err
	}
	err := c.p2p(ctx, pc)
	if errors.Is(err, errNotKept) {
		return err
	}
	if err != nil {
		if e := (*errs.Error)(nil); errors.As(err, &e) && e.Op == ring.SendRecvs.String() {
			e.Op = pc.name // the executor names the plan's collective
		}
	}
	if pc.all {
		return c.leave(err)
	}
	if err != nil {
		c.group.Fail(err)
	}
	return err
}

// p2p runs a checked point-to-point call: its messages, in bytes, as one
// plan (built per call), each message's buffer a segment of the plan's
// input or output. A communicator of one rank copies.
func (c *Comm) p2p(ctx context.Context, pc *p2pCall) error {
	if c.gpu != nil {
		return c.p2pDevice(ctx, pc)
	}
	if c.size == 1 {
		return selfPairs(pc.msgs, func(send, recv *calls.Msg) error {
			copy(recv.Buf[:recv.Bytes()], send.Buf[:recv.Bytes()])
			return nil
		})
	}
	proto := c.cfg.Protocol(math.MaxInt64) // one protocol whatever the size: both ends must plan alike
	spec := c.p2ps.start(ring.P2PSpec{Rank: c.rank, Size: c.size, EltSize: 1, Channels: c.cfg.Channels, Proto: proto, BuffSize: c.cfg.BuffSize(proto)})
	job := host.Job{InSegs: c.p2ps.segs[0][:0], OutSegs: c.p2ps.segs[1][:0]}
	defer func() { c.p2ps.segs = [2][]host.Seg{job.InSegs, job.OutSegs} }() // their arrays kept for the next call
	var in, out int64
	for _, m := range pc.msgs {
		n := m.Bytes()
		if m.Send {
			spec.Sends = append(spec.Sends, ring.Xfer{Peer: m.Peer, Off: in, Count: n})
			if n > 0 {
				job.InSegs = append(job.InSegs, host.Seg{Off: in, Buf: m.Buf[:n]})
			}
			in += n
		} else {
			spec.Recvs = append(spec.Recvs, ring.Xfer{Peer: m.Peer, Off: out, Count: n})
			if n > 0 {
				job.OutSegs = append(job.OutSegs, host.Seg{Off: out, Buf: m.Buf[:n]})
			}
			out += n
		}
	}
	p, err := c.p2pPlan(ctx, pc)
	if err != nil {
		return err
	}
	job.Plan, job.Trace, job.Seq = p, c.trace, c.seq
	return c.runJob(ctx, job)
}

// peerEdges returns the connections to and from each peer rank's msgs
// talk to, on channels 0 … nch−1: every pair's whole set, whichever way
// its messages go, so that both ranks of a pair ask for the same
// connections whatever their calls (they are made by the two alone, each
// rank's part of a call knowing nothing of the other's).
func peerEdges(rank int, msgs []calls.Msg, nch int) []transport.Edge {
	var edges []transport.Edge
	seen := map[int]bool{rank: true}
	for _, m := range msgs {
		if seen[m.Peer] {
			continue
		}
		seen[m.Peer] = true
		for ch := range nch {
			edges = append(edges, transport.Edge{From: rank, To: m.Peer, Ch: ch}, transport.Edge{From: m.Peer, To: rank, Ch: ch})
		}
	}
	return edges
}

// selfPairs calls copy with each receive of msgs, a communicator of one
// rank's, and its send (the k-th receive takes the k-th send; checked:
// the same bytes), in order; it stops at the first error.
func selfPairs(msgs []calls.Msg, copy func(send, recv *calls.Msg) error) error {
	k := 0
	for i := range msgs {
		if msgs[i].Send {
			continue
		}
		for !msgs[k].Send {
			k++
		}
		if err := copy(&msgs[k], &msgs[i]); err != nil {
			return err
		}
		k++
	}
	return nil
}
