package main

import (
	"encoding/binary"
	"math"
	"sync"
	"unsafe"

	"github.com/ringo-ccl/ringo"
	"github.com/ringo-ccl/ringo/reduce"
)

// ncclNumOps is the first dynamic ncclRedOp_t value.
const ncclNumOps = 5

// builtinOps are ncclSum, ncclProd, ncclMax, ncclMin and ncclAvg.
var builtinOps = [ncclNumOps]ringo.Op{ringo.OpSum, ringo.OpProd, ringo.OpMax, ringo.OpMin, ringo.OpAvg}

// opTable holds the operators ncclRedOpCreatePreMulSum makes: op value
// ncclNumOps+i is slot i. As in NCCL an operator belongs to the
// communicator it was made for. Freed slots are reused, lowest first. Safe
// for concurrent use.
type opTable struct {
	mu    sync.Mutex
	slots []opSlot
}

type opSlot struct {
	used  bool
	op    ringo.Op
	owner *commEntry
}

// create stores op for owner and returns its ncclRedOp_t value.
func (t *opTable) create(fn string, op ringo.Op, owner *commEntry) (int32, error) {
	t.mu.Lock()
	defer t.mu.Unlock()
	for i := range t.slots {
		if !t.slots[i].used {
			t.slots[i] = opSlot{used: true, op: op, owner: owner}
			return int32(ncclNumOps + i), nil
		}
	}
	if len(t.slots) >= math.MaxInt32-ncclNumOps {
		return 0, apiErrorf(ncclInternalError, "%s: too many operators", fn)
	}
	t.slots = append(t.slots, opSlot{used: true, op: op, owner: owner})
	return int32(ncclNumOps + len(t.slots) - 1), nil
}

// slot returns the slot of dynamic op v of owner. Called with t.mu held.
func (t *opTable) slot(fn string, v int32, owner *commEntry) (*opSlot, error) {
	i := int64(v) - ncclNumOps
	if i < 0 || i >= int64(len(t.slots)) || !t.slots[i].used {
		return nil, invalidArg("%s: op %d is not an ncclRedOp_t (not built in, and not made by ncclRedOpCreatePreMulSum or already destroyed)", fn, v)
	}
	s := &t.slots[i]
	if s.owner != owner {
		return nil, invalidArg("%s: op %d was created for another communicator", fn, v)
	}
	return s, nil
}

// get returns dynamic op v, which owner must own.
func (t *opTable) get(fn string, v int32, owner *commEntry) (ringo.Op, error) {
	t.mu.Lock()
	defer t.mu.Unlock()
	s, err := t.slot(fn, v, owner)
	if err != nil {
		return ringo.Op{}, err
	}
	return s.op, nil
}

// destroy frees dynamic op v, which owner must own.
func (t *opTable) destroy(fn string, v int32, owner *commEntry) error {
	t.mu.Lock()
	defer t.mu.Unlock()
	s, err := t.slot(fn, v, owner)
	if err != nil {
		return err
	}
	*s = opSlot{}
	return nil
}

// drop frees every op of owner (when it is destroyed).
func (t *opTable) drop(owner *commEntry) {
	t.mu.Lock()
	defer t.mu.Unlock()
	for i := range t.slots {
		if t.slots[i].owner == owner {
			t.slots[i] = opSlot{}
		}
	}
}

// used returns the number of live dynamic ops, for tests.
func (t *opTable) used() int {
	t.mu.Lock()
	defer t.mu.Unlock()
	n := 0
	for _, s := range t.slots {
		if s.used {
			n++
		}
	}
	return n
}

// resolveOp returns the operator of ncclRedOp_t v on owner.
func (t *opTable) resolveOp(fn string, v int32, owner *commEntry) (ringo.Op, error) {
	switch {
	case v < 0:
		return ringo.Op{}, invalidArg("%s: op %d is not an ncclRedOp_t", fn, v)
	case v < ncclNumOps:
		return builtinOps[v], nil
	}
	return t.get(fn, v, owner)
}

// Where ncclRedOpCreatePreMulSum finds its scalar (ncclScalarResidence_t).
const (
	ncclScalarDevice        = 0
	ncclScalarHostImmediate = 1
)

func (l *library) redOpCreatePreMulSum(out, scalar unsafe.Pointer, dt, residence int32, h unsafe.Pointer) error {
	const fn = "ncclRedOpCreatePreMulSum"
	e, err := l.handles.lookup(fn, h)
	if err != nil {
		return err
	}
	switch {
	case out == nil:
		return invalidArg("%s: op is NULL", fn)
	case dt < 0 || dt >= int32(reduce.NumTypes):
		return invalidArg("%s: datatype %d is not an ncclDataType_t (0 to %d)", fn, dt, reduce.NumTypes-1)
	case residence == ncclScalarDevice:
		return invalidUsage("%s: ncclScalarDevice is not supported by ringo (its kernels take the scalar by value): pass the scalar with ncclScalarHostImmediate", fn)
	case residence != ncclScalarHostImmediate:
		return invalidArg("%s: residence %d is not an ncclScalarResidence_t", fn, residence)
	case scalar == nil:
		return invalidArg("%s: scalar is NULL", fn)
	}
	t := reduce.DataType(dt)
	var raw [8]byte
	copy(raw[:], unsafe.Slice((*byte)(scalar), t.Size()))
	op, err := reduce.PreMulBits(t, binary.LittleEndian.Uint64(raw[:]))
	if err != nil {
		return invalidArg("%s: %v", fn, err)
	}
	v, err := l.ops.create(fn, op, e)
	if err != nil {
		return err
	}
	putInt32(out, v)
	return nil
}

func (l *library) redOpDestroy(op int32, h unsafe.Pointer) error {
	const fn = "ncclRedOpDestroy"
	e, err := l.handles.lookup(fn, h)
	if err != nil {
		return err
	}
	if op >= 0 && op < ncclNumOps {
		return invalidArg("%s: op %d is built in, not made by ncclRedOpCreatePreMulSum", fn, op)
	}
	return l.ops.destroy(fn, op, e)
}
