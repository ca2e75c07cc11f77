package main

import (
	"cmp"
	"math"
	"slices"
	"unsafe"

	"github.com/ringo-ccl/ringo"
	"github.com/ringo-ccl/ringo/reduce"
)

// Point-to-point: ncclSend and ncclRecv, and ncclAlltoAll, ncclGather and
// ncclScatter, which are made of sends and receives as NCCL makes them.
// Every call is checked at once and becomes p2pOps. Inside a group they
// are recorded and run at the outermost ncclGroupEnd (group.go), all
// together: two ranks exchanging large messages would otherwise each wait
// in its send for the other's receive. Outside a group one call's ops run
// at once, together (p2p_run.go).

// The point-to-point APIs, in the order of nccl_abi.c's RINGO_P2P_* codes.
const (
	p2pSend = iota
	p2pRecv
	p2pAllToAll
	p2pGather
	p2pScatter
)

var p2pAPIs = [...]string{"ncclSend", "ncclRecv", "ncclAlltoAll", "ncclGather", "ncclScatter"}

// p2pOp is one send or receive of a C call, checked, waiting for its
// group's end or run at once.
type p2pOp struct {
	fn     string     // the C call, for messages
	entry  *commEntry // the communicator's handle
	comm   rankComm   // and its rank
	stream uintptr    // the CUstream (0: the legacy default stream)
	msg    p2pMsg
}

// p2pMsg is what ringo moves: count elements of dt to (send) or from rank
// peer, at device address addr of the rank's GPU.
type p2pMsg struct {
	send  bool
	peer  int
	count int64
	dt    ringo.DataType
	addr  uintptr
}

// bytes returns the bytes m moves.
func (m *p2pMsg) bytes() int64 { return m.count * int64(m.dt.Size()) }

// p2p is point-to-point API api, called on thread tid. peer is ncclSend's
// and ncclRecv's peer, or ncclGather's and ncclScatter's root; send and
// recv are the call's buffers (ncclSend's in send, ncclRecv's in recv).
// Inside a group its ops are deferred to the group's end, and an argument
// error, or a communicator of the other mode (blocking or not) than the
// group's, also fails the group's end, as in NCCL.
func (l *library) p2p(tid uint64, api int32, send, recv unsafe.Pointer, count uint64, dt, peer int32, h, stream unsafe.Pointer) error {
	var one [1]p2pOp // ncclSend's or ncclRecv's
	ops, err := l.p2pOps(one[:0], api, send, recv, count, dt, peer, h, stream)
	if err != nil {
		l.reg.failP2P(tid, err)
		return err
	}
	if len(ops) == 0 {
		return nil
	}
	if deferred, err := l.reg.deferP2P(tid, ops...); deferred || err != nil {
		return err
	}
	return l.runP2P(ops[0].fn, ops)
}

// p2pOps checks a call of point-to-point API api and returns its ops: a
// send or a receive, or what NCCL makes the others of — ncclAlltoAll a send
// to and a receive from every rank, in rank order; ncclGather a send to the
// root and, at the root, a receive from every rank; ncclScatter, at the
// root, a send to every rank, then a receive from the root. The three
// collective ones with count 0 have none. They are appended to dst.
func (l *library) p2pOps(dst []p2pOp, api int32, send, recv unsafe.Pointer, count uint64, dt, peer int32, h, stream unsafe.Pointer) ([]p2pOp, error) {
	if api < 0 || int(api) >= len(p2pAPIs) {
		return nil, apiErrorf(ncclInternalError, "point-to-point: unknown API %d", api)
	}
	fn := p2pAPIs[api]
	e, err := l.handles.lookup(fn, h)
	if err != nil {
		return nil, err
	}
	st, err := e.get(fn)
	if err != nil {
		return nil, err
	}
	c := st.comm
	n, rank := c.Size(), c.Rank()
	if dt < 0 || dt >= int32(reduce.NumTypes) {
		return nil, invalidArg("%s: datatype %d is not an ncclDataType_t (0 to %d)", fn, dt, reduce.NumTypes-1)
	}
	t := ringo.DataType(dt)
	blocks := uint64(1) // of count elements, in the largest buffer
	if api >= p2pAllToAll {
		blocks = uint64(n)
	}
	if count > math.MaxInt64/blocks/uint64(t.Size()) {
		return nil, invalidArg("%s: count %d of %v is too large", fn, count, t)
	}
	if peer < 0 || int(peer) >= n {
		what := "peer"
		if api >= p2pGather {
			what = "root"
		}
		return nil, invalidArg("%s: %s %d is outside [0, %d) (comm %p has %d ranks)", fn, what, peer, n, h, n)
	}
	root := int(peer) == rank
	need := func(p unsafe.Pointer, name string) error {
		if p == nil && count > 0 {
			return invalidArg("%s: %s is NULL (count %d)", fn, name, count)
		}
		return nil
	}
	var bufErr error
	switch api {
	case p2pSend:
		bufErr = need(send, "sendbuff")
	case p2pRecv:
		bufErr = need(recv, "recvbuff")
	case p2pAllToAll:
		bufErr = cmp.Or(need(send, "sendbuff"), need(recv, "recvbuff"))
	case p2pGather:
		bufErr = need(send, "sendbuff")
		if root {
			bufErr = cmp.Or(bufErr, need(recv, "recvbuff (at the root)"))
		}
	case p2pScatter:
		bufErr = need(recv, "recvbuff")
		if root {
			bufErr = cmp.Or(need(send, "sendbuff (at the root)"), bufErr)
		}
	}
	if bufErr != nil {
		return nil, bufErr
	}
	if api >= p2pAllToAll && count == 0 {
		return nil, nil
	}
	cnt := int64(count)
	block := uintptr(cnt) * uintptr(t.Size())
	op := func(isSend bool, to int, base unsafe.Pointer, i int) p2pOp {
		return p2pOp{fn: fn, entry: e, comm: c, stream: uintptr(stream),
			msg: p2pMsg{send: isSend, peer: to, count: cnt, dt: t, addr: uintptr(base) + uintptr(i)*block}}
	}
	switch api {
	case p2pSend:
		return append(dst, op(true, int(peer), send, 0)), nil
	case p2pRecv:
		return append(dst, op(false, int(peer), recv, 0)), nil
	}
	ops := slices.Grow(dst, 2*n)
	switch api {
	case p2pAllToAll:
		for r := range n {
			ops = append(ops, op(true, r, send, r), op(false, r, recv, r))
		}
	case p2pGather:
		ops = append(ops, op(true, int(peer), send, 0))
		if root {
			for r := range n {
				ops = append(ops, op(false, r, recv, r))
			}
		}
	case p2pScatter:
		if root {
			for r := range n {
				ops = append(ops, op(true, r, send, r))
			}
		}
		ops = append(ops, op(false, int(peer), recv, 0))
	}
	return ops, nil
}
