package bench

import (
	"context"

	"github.com/ringo-ccl/ringo"
	"github.com/ringo-ccl/ringo/internal/mem"
	"github.com/ringo-ccl/ringo/reduce"
)

// The point-to-point collectives' calls are the library's typed ones —
// SendOp and RecvOp in a SendRecv group, AllToAll, Gather, Scatter, or
// their *Device forms on a stream — on the target's buffers seen as the
// layout's datatype. A layout's call is made once (target.bind), its ops
// with it, and run as often as the sweep times it: nothing is allocated
// per call on the harness's side.

// p2pCall runs one point-to-point collective, made by bind.
type p2pCall func(context.Context) error

// p2pAPI is the library's point-to-point calls on buffers B of one element
// type: host slices, or GPU memory with a stream.
type p2pAPI[B any] struct {
	sendOp, recvOp  func(c *ringo.Comm, buf B, peer int) ringo.P2POp
	allToAll        func(ctx context.Context, c *ringo.Comm, send, recv B) error
	gather, scatter func(ctx context.Context, c *ringo.Comm, send, recv B, root int) error
}

// call returns the call of l's collective on c from send into recv; nil
// for a ring collective.
func (a *p2pAPI[B]) call(c *ringo.Comm, l *layout, send, recv B) p2pCall {
	root := l.root
	switch l.coll {
	case SendRecv:
		n, r := c.Size(), c.Rank()
		ops := []ringo.P2POp{a.sendOp(c, send, (r+1)%n), a.recvOp(c, recv, (r+n-1)%n)}
		return func(ctx context.Context) error { return ringo.SendRecv(ctx, ops...) }
	case AllToAll:
		return func(ctx context.Context) error { return a.allToAll(ctx, c, send, recv) }
	case Gather:
		return func(ctx context.Context) error { return a.gather(ctx, c, send, recv, root) }
	case Scatter:
		return func(ctx context.Context) error { return a.scatter(ctx, c, send, recv, root) }
	}
	return nil
}

// elemCalls makes the point-to-point calls of one datatype, on host
// buffers (send and recv, l's input and output) or on GPU memory at
// addresses send and recv.
type elemCalls interface {
	host(c *ringo.Comm, l *layout, send, recv []byte) p2pCall
	device(c *ringo.Comm, l *layout, send, recv uintptr, s ringo.Stream) p2pCall
}

// elemCallsOf are the datatypes' calls.
var elemCallsOf = [reduce.NumTypes]elemCalls{
	ringo.TypeInt8: elemOf[int8]{}, ringo.TypeUint8: elemOf[uint8]{}, ringo.TypeInt32: elemOf[int32]{},
	ringo.TypeUint32: elemOf[uint32]{}, ringo.TypeInt64: elemOf[int64]{}, ringo.TypeUint64: elemOf[uint64]{},
	ringo.TypeFloat16: elemOf[ringo.Float16]{}, ringo.TypeFloat32: elemOf[float32]{}, ringo.TypeFloat64: elemOf[float64]{},
	ringo.TypeBFloat16: elemOf[ringo.BFloat16]{}, ringo.TypeFloat8E4M3: elemOf[ringo.Float8E4M3]{},
	ringo.TypeFloat8E5M2: elemOf[ringo.Float8E5M2]{},
}

// elemOf is elemCalls for elements of T.
type elemOf[T ringo.Elem] struct{}

func (elemOf[T]) host(c *ringo.Comm, l *layout, send, recv []byte) p2pCall {
	a := p2pAPI[[]T]{sendOp: ringo.SendOp[T], recvOp: ringo.RecvOp[T], allToAll: ringo.AllToAll[T],
		gather: ringo.Gather[T], scatter: ringo.Scatter[T]}
	return a.call(c, l, mem.Slice[T](send), mem.Slice[T](recv))
}

func (elemOf[T]) device(c *ringo.Comm, l *layout, send, recv uintptr, s ringo.Stream) p2pCall {
	type buf = ringo.DevPtr[T]
	a := p2pAPI[buf]{
		sendOp: func(c *ringo.Comm, b buf, peer int) ringo.P2POp { return ringo.SendOpDevice(c, b, peer, s) },
		recvOp: func(c *ringo.Comm, b buf, peer int) ringo.P2POp { return ringo.RecvOpDevice(c, b, peer, s) },
		allToAll: func(ctx context.Context, c *ringo.Comm, send, recv buf) error {
			return ringo.AllToAllDevice(ctx, c, send, recv, s)
		},
		gather: func(ctx context.Context, c *ringo.Comm, send, recv buf, root int) error {
			return ringo.GatherDevice(ctx, c, send, recv, root, s)
		},
		scatter: func(ctx context.Context, c *ringo.Comm, send, recv buf, root int) error {
			return ringo.ScatterDevice(ctx, c, send, recv, root, s)
		},
	}
	elt := int64(ringo.TypeOf[T]().Size())
	return a.call(c, l, ringo.DevicePointer[T](c.GPU(), send, int(l.inLen/elt)), ringo.DevicePointer[T](c.GPU(), recv, int(l.outLen/elt)))
}
