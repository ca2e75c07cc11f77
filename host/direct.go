package host

import (
	"encoding/binary"
	"errors"
	"time"

	"github.com/ringo-ccl/ringo/internal/errs"
	"github.com/ringo-ccl/ringo/internal/mem"
	"github.com/ringo-ccl/ringo/reduce"
	"github.com/ringo-ccl/ringo/ring"
	"github.com/ringo-ccl/ringo/shm"
	"github.com/ringo-ccl/ringo/transport"
)

// Direct is a collective of a communicator whose ranks are processes of
// one host, run by reading the peers' buffers (shm.Attach) instead of a
// ring plan: one copy from a peer's buffer where the ring's FIFOs take two.
// The ranks meet on their shm.Board: each publishes its buffers' addresses
// (phase A), reads what it needs from its peers', and publishes that it is
// done (phase C), returning once every peer is, so no buffer is read after
// its call returned. An all-reduce is a reduce-scatter then an all-gather,
// with a phase B between: rank r reduces part r of every rank's input into
// its output, publishes, and copies every other part from the rank that
// reduced it.
//
// A reduction combines its own term first, then the peers' in rank order,
// each through Scratch, and every part is reduced by one rank, so every
// rank's output is the same bits. Operations with a pre-operation
// (PreMulSum: each rank's scalar is its own) do not run here.
type Direct struct {
	Coll    ring.Collective
	In, Out []byte // as Comm.Do's Call.Send and Call.Recv
	Bytes   int    // count × element size (Comm.Do's Call.Count, in bytes)
	Root    int
	Func    *reduce.Func // for the collectives that reduce; without a pre-operation
	Scratch []byte       // DirectChunk bytes: a peer's data on its way into a reduction
	Addrs   []uintptr    // 2 × ranks: every rank's In and Out, as published
}

// DirectChunk is the bytes a reduction reads from a peer at a time: small
// enough to stay in this core's cache until combined, large enough that
// the syscall's cost (about a microsecond) is a few percent of the copy.
const DirectChunk = 128 << 10

// lostGrace is how long a rank that found a peer gone waits for the
// group's verdict on who was lost (transport.Waiter.Settle): the watcher's
// takes milliseconds.
const lostGrace = time.Second

// directAddrBytes is what a rank writes into its board slot: the
// addresses of its input and output.
const directAddrBytes = 16

// RunDirect runs x as rank rank of size over b and a, its waits bounded by
// w. It does not allocate.
func RunDirect(b *shm.Board, a *shm.Attach, w *transport.Waiter, rank, size int, x *Direct) error {
	fail := func(q int, what string, err error) error {
		if errors.Is(err, errs.ErrPeerLost) {
			// q is gone; it may have left because another rank was
			// lost first, which the group's verdict names.
			if verdict := w.Settle(lostGrace); verdict != nil {
				err = verdict
			}
		}
		return &errs.Error{Op: x.Coll.String(), Rank: rank, Peer: q, Channel: -1, Step: -1, Detail: "cross-memory attach: " + what, Err: err}
	}
	awaitAll := func(seq uint64, what string) error {
		if q, err := b.AwaitAll(w, seq); err != nil {
			return fail(q, what, err)
		}
		return nil
	}
	// Phase A. This call's slot was last read in call seq−2; a peer is
	// done with it once it has published seq−1 (Board's rule).
	seq := b.Next()
	if err := awaitAll(seq-1, "waiting for the previous call to be read"); err != nil {
		return err
	}
	mine := b.Slot(rank, seq)
	binary.LittleEndian.PutUint64(mine, uint64(mem.Addr(x.In)))
	binary.LittleEndian.PutUint64(mine[8:], uint64(mem.Addr(x.Out)))
	b.Publish(seq)
	if err := awaitAll(seq, "waiting for the peers' buffers"); err != nil {
		return err
	}
	for q := range size {
		s := b.Slot(q, seq)
		x.Addrs[2*q], x.Addrs[2*q+1] = uintptr(binary.LittleEndian.Uint64(s)), uintptr(binary.LittleEndian.Uint64(s[8:]))
	}
	// read copies len(dst) bytes at off of rank q's input (out: output).
	read := func(q int, out bool, dst []byte, off int) error {
		at := x.Addrs[2*q]
		if out {
			at = x.Addrs[2*q+1]
		}
		if err := a.Read(q, dst, at+uintptr(off)); err != nil {
			return fail(q, "reading", err)
		}
		return nil
	}
	// reduce sets dst = ⊕ every rank's input at off.
	reduce := func(dst []byte, off int) error {
		for c := 0; c < len(dst); c += len(x.Scratch) {
			d := dst[c:min(c+len(x.Scratch), len(dst))]
			acc := x.In[off+c : off+c+len(d)] // the own term, combined on the way in
			for q := range size {
				if q == rank {
					continue
				}
				s := x.Scratch[:len(d)]
				if err := read(q, false, s, off+c); err != nil {
					return err
				}
				x.Func.Combine(d, acc, s)
				acc = d
			}
			x.Func.Post(d)
		}
		return nil
	}
	// checked confirms that what was read from the peers (from root only,
	// if root ≥ 0) was theirs.
	checked := func(root int) error {
		for q := range size {
			if q != rank && (root < 0 || q == root) {
				if err := a.Check(q); err != nil {
					return fail(q, "after reading", err)
				}
			}
		}
		return nil
	}

	n := x.Bytes
	var err error
	switch x.Coll {
	case ring.AllReduce:
		off, m := directPart(n, size, rank)
		if err = reduce(x.Out[off:off+m], off); err == nil {
			err = checked(-1)
		}
		if err != nil {
			return err
		}
		seq++
		b.Publish(seq) // phase B: part rank of the output is reduced
		for q := range size {
			if q == rank {
				continue
			}
			if err := b.Await(w, q, seq); err != nil {
				return fail(q, "waiting for the reduced part", err)
			}
			off, m := directPart(n, size, q)
			if err := read(q, true, x.Out[off:off+m], off); err != nil {
				return err
			}
		}
		err = checked(-1)
	case ring.ReduceScatter:
		if err = reduce(x.Out[:n], rank*n); err == nil {
			err = checked(-1)
		}
	case ring.Reduce:
		if rank == x.Root {
			if err = reduce(x.Out[:n], 0); err == nil {
				err = checked(-1)
			}
		}
	case ring.AllGather:
		for q := range size {
			if q == rank {
				copyUnlessSame(x.Out[q*n:(q+1)*n], x.In[:n])
			} else if err = read(q, false, x.Out[q*n:(q+1)*n], 0); err != nil {
				break
			}
		}
		if err == nil {
			err = checked(-1)
		}
	case ring.Broadcast:
		if rank == x.Root {
			copyUnlessSame(x.Out[:n], x.In[:n])
		} else if err = read(x.Root, false, x.Out[:n], 0); err == nil {
			err = checked(x.Root)
		}
	}
	if err != nil {
		return err
	}
	// Phase C: done reading; return once every peer is, as it may be
	// reading this rank's buffers.
	seq++
	b.Publish(seq)
	return awaitAll(seq, "waiting for the peers to finish reading")
}

// directPart returns the byte range of part q of an n-byte all-reduce
// split over size ranks: 64-byte multiples (any element's), the last
// parts possibly short or empty.
func directPart(n, size, q int) (off, m int) {
	per := (n + size - 1) / size
	per = (per + 63) &^ 63
	off = min(q*per, n)
	return off, min(off+per, n) - off
}

// DirectRuns reports whether coll runs by RunDirect with f (nil for the
// collectives that do not reduce): every collective but point-to-point,
// and reductions without a pre-operation.
func DirectRuns(coll ring.Collective, f *reduce.Func) bool {
	switch coll {
	case ring.AllReduce, ring.ReduceScatter, ring.Reduce, ring.AllGather, ring.Broadcast:
		return !f.HasPre()
	}
	return false
}
