package calls

import (
	"fmt"
	"math"

	"github.com/ringo-ccl/ringo/internal/errs"
	"github.com/ringo-ccl/ringo/internal/mem"
	"github.com/ringo-ccl/ringo/reduce"
	"github.com/ringo-ccl/ringo/ring"
)

// The buffers of a call, as indexes of args' arrays.
const (
	sendBuf = iota
	recvBuf
)

var bufNames = [2]string{sendBuf: "send", recvBuf: "recv"}

// Args is a call as its entry sees it, whatever its buffers' kind: the
// fields of the root's Call or DeviceCall.
type Args struct {
	Coll  ring.Collective
	Name  string // the operation's name in errors, when not Coll's (a point-to-point call's: "send", "alltoall" …)
	Count int64
	Type  reduce.DataType
	Op    reduce.Op
	Root  int

	Host      [2][]byte  // a host call's buffers (Do)
	Device    bool       // a device call (DoDevice): the fields below apply
	Dev       [2]uintptr // its buffers' device addresses
	StreamGPU int        // the GPU of the stream it is enqueued on
	Stream    uintptr    // that stream's handle

	// A point-to-point call (Coll SendRecvs): its messages, and whether
	// every rank calls it (AllToAll, Gather …: numbered and compared as
	// collectives are) or only some (Send, Recv, a group of them).
	Msgs     []Msg
	AllRanks bool
}

// OpName returns the call's name in errors.
func (a *Args) OpName() string { return OpName(a.Coll, a.Name) }

// OpName returns the name in errors of a call of coll named name: name,
// or coll's where name is "".
func OpName(coll ring.Collective, name string) string {
	if name != "" {
		return name
	}
	return coll.String()
}

// DeviceCheck checks a device call's buffers and stream against the
// rank's GPU (device.Checker).
type DeviceCheck interface {
	// Ptr checks n bytes at p, a buffer of a call on stream h.
	Ptr(p uintptr, n int64, h uintptr) error
	Stream(gpu int, h uintptr) error
}

// Check validates a call's arguments against rank of a communicator of
// size ranks — a point-to-point call's messages as checkP2P says; for
// collectives: the collective, datatype, op (made by funcs), root and
// count; a device call's stream (dev); the bytes each buffer must hold,
// without overflow; each buffer the rank uses (checkBuf); and, where send
// and recv overlap, that they are NCCL's in-place layout. Its errors wrap
// errs.ErrInvalidArgument.
func (a *Args) Check(rank, size int, funcs *reduce.Cache, dev DeviceCheck) error {
	bad := func(format string, x ...any) error { return errs.Invalid(a.OpName(), rank, format, x...) }
	if !a.Coll.Valid() {
		return bad("unknown collective %d", a.Coll)
	}
	if a.Coll.P2P() {
		if a.Device {
			if err := dev.Stream(a.StreamGPU, a.Stream); err != nil {
				return bad("%v", err)
			}
		}
		if err := a.checkP2P(rank, size, dev); err != nil {
			return bad("%v", err)
		}
		return nil
	} else if len(a.Msgs) > 0 {
		return bad("messages in a call of %v (point-to-point's only)", a.Coll)
	}
	if !a.Type.Valid() {
		return bad("invalid datatype %d", a.Type)
	}
	if a.Coll.Reduces() {
		if _, err := funcs.Get(a.Type, a.Op, size); err != nil {
			return errs.InvalidErr(a.OpName(), rank, err)
		}
	}
	if a.Coll.Rooted() && (a.Root < 0 || a.Root >= size) {
		return bad("root %d outside [0, %d)", a.Root, size)
	}
	if a.Count < 0 {
		return bad("count %d is negative", a.Count)
	}
	if a.Device {
		if err := dev.Stream(a.StreamGPU, a.Stream); err != nil {
			return bad("%v", err)
		}
	}
	elt := int64(a.Type.Size())
	in, out := a.Count, a.Count
	switch a.Coll {
	case ring.ReduceScatter:
		if a.Count > math.MaxInt64/int64(size) {
			return bad("count %d × %d ranks overflows", a.Count, size)
		}
		in *= int64(size)
	case ring.AllGather:
		if a.Count > math.MaxInt64/int64(size) {
			return bad("count %d × %d ranks overflows", a.Count, size)
		}
		out *= int64(size)
	}
	if max(in, out) > math.MaxInt64/elt {
		return bad("count %d of %v overflows", max(in, out), a.Type)
	}
	usesSend := a.Coll != ring.Broadcast || a.Root == rank
	usesRecv := a.Coll != ring.Reduce || a.Root == rank
	if usesSend {
		if err := a.checkBuf(sendBuf, in*elt, dev); err != nil {
			return bad("%v", err)
		}
	}
	if usesRecv {
		if err := a.checkBuf(recvBuf, out*elt, dev); err != nil {
			return bad("%v", err)
		}
	}
	if usesSend && usesRecv && a.Count > 0 {
		s, r := a.addrs()
		overlap := s < r+uintptr(out*elt) && r < s+uintptr(in*elt)
		seg := uintptr(int64(rank) * a.Count * elt)
		if overlap && !inPlace(a.Coll, s, r, seg) {
			return bad("send and recv overlap without being in place")
		}
	}
	return nil
}

// checkBuf checks buffer i of a call, of which the rank uses need bytes
// (none when need is 0): a host slice's presence, length and alignment to
// the element size, or that a device buffer lies in one allocation of the
// rank's GPU (dev).
func (a *Args) checkBuf(i int, need int64, dev DeviceCheck) error {
	name := bufNames[i]
	switch {
	case need == 0:
		return nil
	case a.Device:
		if err := dev.Ptr(a.Dev[i], need, a.Stream); err != nil {
			return fmt.Errorf("%s buffer: %v", name, err)
		}
		return nil
	}
	if err := checkHost(a.Host[i], need, a.Type); err != nil {
		return fmt.Errorf("%s %v", name, err)
	}
	return nil
}

// checkHost checks a host buffer b of which need bytes are used (none when
// need is 0): its presence, length and alignment to elements of t.
func checkHost(b []byte, need int64, t reduce.DataType) error {
	switch {
	case need == 0:
		return nil
	case b == nil:
		return fmt.Errorf("buffer is nil")
	case int64(len(b)) < need:
		return fmt.Errorf("buffer has %d bytes, need %d", len(b), need)
	case !mem.Aligned(b, t.Size()):
		return fmt.Errorf("buffer is not aligned to %d-byte %v elements", t.Size(), t)
	}
	return nil
}

// addrs returns the addresses of a call's send and recv buffers.
func (a *Args) addrs() (send, recv uintptr) {
	if a.Device {
		return a.Dev[sendBuf], a.Dev[recvBuf]
	}
	return mem.Addr(a.Host[sendBuf]), mem.Addr(a.Host[recvBuf])
}

// inPlace reports whether overlapping buffers at send and recv form NCCL's
// in-place layout: one buffer, except that reduce-scatter's recv is the
// rank's segment of send and all-gather's send the rank's segment of recv,
// seg bytes from the start.
func inPlace(coll ring.Collective, send, recv, seg uintptr) bool {
	switch coll {
	case ring.ReduceScatter:
		return recv == send+seg
	case ring.AllGather:
		return send == recv+seg
	}
	return send == recv
}

// CheckSchedule checks a schedule's plans (every rank's, ring.Schedule's)
// against the call a describes on rank of a communicator of size ranks,
// whose connections have channels channels and FIFOs of buffSize(proto)
// bytes: the plans are the call's, this rank's, and fit the connections.
func (a *Args) CheckSchedule(plans []*ring.Plan, rank, size, channels int, buffSize func(ring.Protocol) int) error {
	op := a.Coll.String()
	if len(plans) != size || plans[rank] == nil {
		return errs.Invalid(op, rank, "a schedule of %d plans for a communicator of %d ranks", len(plans), size)
	}
	sp := &plans[rank].Spec
	switch {
	case sp.Coll.P2P():
		return errs.Invalid(op, rank, "a point-to-point schedule runs through SendRecv (its messages), not as a collective's")
	case sp.Coll != a.Coll || sp.Count != a.Count || (sp.Coll.Rooted() && sp.Root != a.Root):
		return errs.Invalid(op, rank, "the call (%v of %d, root %d) is not the schedule's (%v of %d, root %d)", a.Coll, a.Count, a.Root, sp.Coll, sp.Count, sp.Root)
	case sp.Rank != rank || sp.Ring.Size() != size:
		return errs.Invalid(op, rank, "plans[%d] is rank %d's plan of %d ranks", rank, sp.Rank, sp.Ring.Size())
	case sp.EltSize != a.Type.Size() || sp.Variant.Precision():
		return errs.Invalid(op, rank, "the schedule moves %d-byte elements (variant %v), the call %v", sp.EltSize, sp.Variant, a.Type)
	case sp.Channels > channels || (sp.Proto != ring.Simple && sp.Proto != ring.LL) || sp.BuffSize > buffSize(sp.Proto):
		return errs.Invalid(op, rank, "the schedule's %d channels of %v with %d-byte FIFOs do not fit this communicator's connections (%d channels, FIFOs of %d bytes)",
			sp.Channels, sp.Proto, sp.BuffSize, channels, buffSize(sp.Proto))
	}
	return nil
}
