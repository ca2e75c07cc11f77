package main

import (
	"context"

	"github.com/ringo-ccl/ringo"
	"github.com/ringo-ccl/ringo/reduce"
)

// gpuSendRecv runs parts on ringo's GPU communicators: one ringo.SendRecv
// of every part's messages, each typed as its datatype says.
func gpuSendRecv(ctx context.Context, parts []p2pPart) error {
	buf := opsSpares.get()
	defer func() {
		clear(*buf)
		*buf = (*buf)[:0]
		opsSpares.put(buf)
	}()
	for _, p := range parts {
		gc, ok := p.comm.(gpuComm)
		if !ok {
			return apiErrorf(ncclInternalError, "point-to-point: rank %d is not one of ringo's GPU communicators (%T)", p.comm.Rank(), p.comm)
		}
		s := ringo.StreamHandle(gc.GPU(), p.stream)
		for _, m := range p.msgs {
			*buf = append(*buf, p2pOpOf[m.dt](gc.Comm, m, s))
		}
	}
	return ringo.SendRecv(ctx, *buf...)
}

// opsSpares holds gpuSendRecv's slices of ops, reused from group to group.
var opsSpares spares[[]ringo.P2POp]

// p2pOpOf makes the ringo op of a message, by datatype.
var p2pOpOf [reduce.NumTypes]func(c *ringo.Comm, m p2pMsg, s ringo.Stream) ringo.P2POp

func init() {
	typedP2POp[int8]()
	typedP2POp[uint8]()
	typedP2POp[int32]()
	typedP2POp[uint32]()
	typedP2POp[int64]()
	typedP2POp[uint64]()
	typedP2POp[ringo.Float16]()
	typedP2POp[float32]()
	typedP2POp[float64]()
	typedP2POp[ringo.BFloat16]()
	typedP2POp[ringo.Float8E4M3]()
	typedP2POp[ringo.Float8E5M2]()
}

// typedP2POp fills T's entry of p2pOpOf.
func typedP2POp[T ringo.Elem]() {
	p2pOpOf[ringo.TypeOf[T]()] = func(c *ringo.Comm, m p2pMsg, s ringo.Stream) ringo.P2POp {
		buf := ringo.DevicePointer[T](c.GPU(), m.addr, int(m.count))
		if m.send {
			return ringo.SendOpDevice(c, buf, m.peer, s)
		}
		return ringo.RecvOpDevice(c, buf, m.peer, s)
	}
}
