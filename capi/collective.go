package main

import (
	"fmt"
	"math"
	"unsafe"

	"github.com/ringo-ccl/ringo"
	"github.com/ringo-ccl/ringo/reduce"
)

// The collective APIs, in the order of nccl_abi.c's RINGO_COLL_* codes.
var collAPIs = [...]struct {
	fn   string
	coll ringo.Collective
}{
	{"ncclAllReduce", ringo.CollAllReduce},
	{"ncclReduceScatter", ringo.CollReduceScatter},
	{"ncclAllGather", ringo.CollAllGather},
	{"ncclBroadcast", ringo.CollBroadcast},
	{"ncclReduce", ringo.CollReduce},
	{"ncclBcast", ringo.CollBroadcast},
}

// collective enqueues collective API api on stream, which the caller may
// have made in any context: the launch runs in the communicator's.
func (l *library) collective(api int32, send, recv unsafe.Pointer, count uint64, dt, op, root int32, h, stream unsafe.Pointer) error {
	if api < 0 || int(api) >= len(collAPIs) {
		return apiErrorf(ncclInternalError, "collective: unknown API %d", api)
	}
	a := &collAPIs[api]
	e, err := l.handles.lookup(a.fn, h)
	if err != nil {
		return err
	}
	st, err := e.get(a.fn)
	if err != nil {
		return err
	}
	if dt < 0 || dt >= int32(reduce.NumTypes) {
		return invalidArg("%s: datatype %d is not an ncclDataType_t (0 to %d)", a.fn, dt, reduce.NumTypes-1)
	}
	if count > math.MaxInt64 {
		return invalidArg("%s: count %d is too large", a.fn, count)
	}
	call := ringo.DeviceCall{Coll: a.coll, Send: uintptr(send), Recv: uintptr(recv), Count: int64(count), Type: ringo.DataType(dt), Root: int(root)}
	if a.coll.Reduces() {
		if call.Op, err = l.ops.resolveOp(a.fn, op, e); err != nil {
			return err
		}
	}
	if err := e.launch(st.comm, &call, uintptr(stream)); err != nil {
		return fmt.Errorf("%s: %w", a.fn, err)
	}
	return nil
}

// The functions ringo does not implement, in the order of nccl_abi.c's
// RINGO_UNSUPPORTED_* codes.
var unsupportedAPIs = [...]struct{ fn, why string }{
	{"ncclGroupSimulateEnd", "simulating a group is not supported by ringo"},
	// Not in NCCL 2.27's nccl.h; PyTorch 2.11 links against them.
	{"ncclDevCommCreate", "device communicators (NCCL's device API) are not supported by ringo"},
	{"ncclDevCommDestroy", "device communicators (NCCL's device API) are not supported by ringo"},
}

func (l *library) unsupported(api int32) error {
	if api < 0 || int(api) >= len(unsupportedAPIs) {
		return apiErrorf(ncclInternalError, "unsupported: unknown API %d", api)
	}
	a := unsupportedAPIs[api]
	return invalidUsage("%s: %s", a.fn, a.why)
}
