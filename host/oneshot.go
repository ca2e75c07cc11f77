package host

import (
	"github.com/ringo-ccl/ringo/internal/errs"
	"github.com/ringo-ccl/ringo/reduce"
	"github.com/ringo-ccl/ringo/ring"
	"github.com/ringo-ccl/ringo/shm"
	"github.com/ringo-ccl/ringo/transport"
)

// OneShot is a small collective of a communicator whose ranks share a
// host, run in one exchange over its shm.Board instead of a ring plan:
// each rank writes its input into its slot of the call, publishes the
// call, and, once every rank it reads from has published, builds its
// output from their slots. A reduction's writers apply their own
// pre-operation (PreMulSum's scalar is each rank's) and its readers
// combine the slots in rank order, so every rank's output is the same
// bits.
type OneShot struct {
	Coll    ring.Collective
	In, Out []byte // as Comm.Do's Call.Send and Call.Recv
	Bytes   int    // count × element size (Comm.Do's Call.Count, in bytes)
	Root    int
	Func    *reduce.Func // for the collectives that reduce
}

// OneShotBytes returns the bytes a rank of size reads from the board in
// coll of the given size (count × element size) — what the one-shot path
// costs, against OneShotMax — and whether each rank's slot, of slot bytes,
// holds what it writes.
func OneShotBytes(coll ring.Collective, bytes, size, slot int) (read int, fits bool) {
	switch coll {
	case ring.AllReduce, ring.Reduce, ring.AllGather:
		return size * bytes, bytes <= slot
	case ring.ReduceScatter:
		return size * bytes, size*bytes <= slot
	case ring.Broadcast:
		return bytes, bytes <= slot
	}
	return 0, false
}

// OneShotMax is the most bytes a rank reads from the board in a call that
// takes the one-shot path, and each slot's size, where the host's ranks do
// not outnumber its cores: on the 2-core development VM one exchange beat
// the ring for 2-rank all-reduces up to 32 KiB (reading 64 KiB: 9.2
// against 11.1 µs) and lost from 64 KiB (BENCHMARKS.md, issue 25).
const OneShotMax = 64 << 10

// OneShotCrowdedMax is OneShotMax where they do (OneShotLimit): 4 ranks on
// the 2 cores took 24–95 µs in one exchange from 8 to 64 KiB against the
// ring's 108–180 µs, every hand-off of the ring waiting for a process to
// be scheduled, and lost from 128 KiB.
const OneShotCrowdedMax = 256 << 10

// OneShotBroadcastMax is OneShotMax for a broadcast: in one exchange the
// root's copy into its slot and the others' copies out of it run one after
// the other, where the ring pipelines them. On the 2-core development VM,
// 2 ranks broadcast 32–64 KiB in 6–15 µs in one exchange against the
// ring's 4–8, and 4–16 KiB faster in one exchange (BENCHMARKS.md, issue 25).
const OneShotBroadcastMax = 16 << 10

// OneShotLimit returns the most bytes a rank reads from the board in a
// call of coll that takes the one-shot path: OneShotCrowdedMax where the
// host's ranks outnumber its cores (every hand-off of the ring waits for a
// process to be scheduled), else OneShotMax, or OneShotBroadcastMax for a
// broadcast. Every rank must pass the same crowded.
func OneShotLimit(coll ring.Collective, crowded bool) int {
	switch {
	case crowded:
		return OneShotCrowdedMax
	case coll == ring.Broadcast:
		return OneShotBroadcastMax
	}
	return OneShotMax
}

// BoardSlot returns the size of each slot of the board: TwoShotSlot where
// the host's ranks outnumber its cores (crowded, alike on every rank),
// else OneShotMax.
func BoardSlot(crowded bool) int {
	if crowded {
		return TwoShotSlot
	}
	return OneShotMax
}

// RunOneShot runs x as call b.Next() of rank rank of size on b, its waits
// bounded by w. It does not allocate.
func RunOneShot(b *shm.Board, w *transport.Waiter, rank, size int, x *OneShot) error {
	seq := b.Next()
	// This call's slot was last read in call seq−2: a rank is done with
	// it once it has published seq−1. (Ranks that read every slot in
	// seq−1 know that already; a broadcast's root and a reduce's others
	// read nothing.)
	failed := func(q int, what string, err error) error {
		return &errs.Error{Op: x.Coll.String(), Rank: rank, Peer: q, Channel: -1, Step: -1, Detail: "one-shot: " + what, Err: err}
	}
	if q, err := b.AwaitAll(w, seq-1); err != nil {
		return failed(q, "waiting for the previous call to be read", err)
	}
	mine := b.Slot(rank, seq)
	n := x.Bytes
	switch x.Coll {
	case ring.ReduceScatter:
		x.Func.Load(mine[:size*n], x.In[:size*n]) // pre(in): every rank's own pre-operation (PreMulSum's scalar)
	case ring.Broadcast:
		if rank == x.Root {
			copy(mine, x.In[:n])
		}
	case ring.AllGather:
		copy(mine, x.In[:n])
	default:
		x.Func.Load(mine[:n], x.In[:n])
	}
	b.Publish(seq)
	read := n // the bytes of each slot the rank reads from its start
	if x.Coll == ring.ReduceScatter {
		read = 0 // its part, at rank·n: not the lines AwaitSlot warms
	}
	from := func(q int) ([]byte, error) {
		if q != rank {
			if err := b.AwaitSlot(w, q, seq, read); err != nil {
				return nil, failed(q, "waiting for data", err)
			}
		}
		return b.Slot(q, seq), nil
	}
	switch x.Coll {
	case ring.AllReduce, ring.ReduceScatter, ring.Reduce:
		if x.Coll == ring.Reduce && rank != x.Root {
			return nil // the root reads this rank's slot; the call after next waits until it has
		}
		off := 0
		if x.Coll == ring.ReduceScatter {
			off = rank * n
		}
		out := x.Out[:n]
		for q := range size {
			s, err := from(q)
			if err != nil {
				return err
			}
			if s = s[off : off+n]; q == 0 {
				copy(out, s)
			} else {
				x.Func.Combine(out, out, s)
			}
		}
		x.Func.Post(out)
	case ring.AllGather:
		for q := range size {
			s, err := from(q)
			if err != nil {
				return err
			}
			copy(x.Out[q*n:(q+1)*n], s[:n])
		}
	case ring.Broadcast:
		s, err := from(x.Root)
		if err != nil {
			return err
		}
		copy(x.Out[:n], s[:n])
	}
	return nil
}
