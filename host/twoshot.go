package host

import (
	"time"

	"github.com/ringo-ccl/ringo/internal/errs"
	"github.com/ringo-ccl/ringo/reduce"
	"github.com/ringo-ccl/ringo/shm"
	"github.com/ringo-ccl/ringo/transport"
)

// TwoShot is an all-reduce of a communicator whose ranks share a host, too
// large for one exchange, run through its shm.Board in rounds instead of a
// ring plan. Each round takes a chunk of the input, as much as a slot
// holds, split into one part per rank:
//
//  1. every rank loads its chunk into its slot (applying its own
//     pre-operation) and publishes;
//  2. rank r combines part r of every rank's slot — its own term first,
//     then the peers' in rank order — into its output, copies the result
//     back into its slot, and publishes again;
//  3. every rank copies each peer's reduced part from the peer's slot.
//
// Every part is reduced by one rank, so every rank's output is the same
// bits. A round costs a rank two publications and two waits for all its
// peers, where a ring of n ranks hands each slice on 2(n−1) times: on a
// host whose ranks outnumber its cores every hand-off waits for a process
// to be scheduled, and there this beat the ring from 128 KiB to 1 MiB
// (BENCHMARKS.md, issue 25). Where they do not, the ring's pipeline moved
// fewer bytes faster.
//
// Round k keeps its data in the slot of number seq+k (seq the call's first
// publication, Board.Slot), so consecutive rounds alternate slots, and
// publishes seq+2k and seq+2k+1. A rank writes a slot again two rounds
// later, by when every peer has published the round between — after it
// finished reading the slot — as the board's rule wants; the call ends
// with one more publication, that the rank is done reading, so the next
// call's writes wait for it.
//
// The copies into the slot write with cached or non-temporal stores, each
// rank timing both per size class and keeping the faster (stores).
type TwoShot struct {
	In, Out []byte // as Comm.Do's Call.Send and Call.Recv
	Bytes   int    // count × element size (Comm.Do's Call.Count, in bytes)
	Func    *reduce.Func
	stores  stores // kept from call to call (set the fields above, not the struct)
}

// TwoShotCrowdedMax is the largest all-reduce that takes the two-shot path
// where the host's ranks outnumber its cores; the board's slots there are
// TwoShotSlot. 4 ranks on the 2-core development VM, medians of 7 runs:
// 97–449 µs against the ring's 153–456 from 128 KiB to 1 MiB (1.02–1.59×);
// from 2 MiB rounds did not beat the ring (BENCHMARKS.md, issue 25).
const TwoShotCrowdedMax = 1 << 20

// TwoShotSlot is the board's slot where the host's ranks outnumber its
// cores (BoardSlot): a 1-MiB all-reduce in one round. Slots of 256 KiB took
// 2–4 times as long from 1 MiB, each round's two waits for every peer
// costing a crowded host tens of microseconds.
const TwoShotSlot = 1 << 20

// twoShotBlock is the bytes of a rank's part that it combines through
// every peer before the next: small enough to stay in the core's L1 cache.
const twoShotBlock = 16 << 10

// TwoShotChunk returns the bytes of input a round of a two-shot all-reduce
// of size ranks takes, on a board of slot-byte slots: the most a slot
// holds that splits into 64-byte parts, one per rank.
func TwoShotChunk(slot, size int) int { return slot / (64 * size) * 64 * size }

// RunTwoShot runs x as rank rank of size on b, its waits bounded by w. It
// does not allocate.
func RunTwoShot(b *shm.Board, w *transport.Waiter, rank, size int, x *TwoShot) error {
	failed := func(q int, what string, err error) error {
		return &errs.Error{Op: "allreduce", Rank: rank, Peer: q, Channel: -1, Step: -1, Detail: "two-shot: " + what, Err: err}
	}
	awaitAll := func(seq uint64, what string) error {
		if q, err := b.AwaitAll(w, seq); err != nil {
			return failed(q, what, err)
		}
		return nil
	}
	class, stream := x.stores.pick(int64(x.Bytes))
	start := time.Now()
	seq := b.Next()
	if err := awaitAll(seq-1, "waiting for the previous call to be read"); err != nil {
		return err
	}
	n, chunk := x.Bytes, TwoShotChunk(b.SlotBytes(), size)
	k := uint64(0)
	for off := 0; off < n; off, k = off+chunk, k+1 {
		c := min(chunk, n-off)
		in, out := x.In[off:off+c], x.Out[off:off+c]
		a := seq + 2*k
		mine := b.Slot(rank, seq+k)[:c]
		load(x.Func, stream, mine, in)
		b.Publish(a)
		if err := awaitAll(a, "waiting for data"); err != nil {
			return err
		}
		// A block at a time through every peer, so the partial result
		// stays in this core's cache.
		po, pm := directPart(c, size, rank)
		for bo := po; bo < po+pm; bo += twoShotBlock {
			be := min(bo+twoShotBlock, po+pm)
			dst, acc := out[bo:be], mine[bo:be]
			for q := range size {
				if q != rank {
					x.Func.Combine(dst, acc, b.Slot(q, seq+k)[bo:be])
					acc = dst
				}
			}
			x.Func.Post(dst)
			fill(stream, mine[bo:be], dst)
		}
		b.Publish(a + 1)
		for q := range size {
			if q == rank {
				continue
			}
			if err := b.Await(w, q, a+1); err != nil {
				return failed(q, "waiting for the reduced part", err)
			}
			qo, qm := directPart(c, size, q)
			copy(out[qo:qo+qm], b.Slot(q, seq+k)[qo:qo+qm])
		}
	}
	b.Publish(seq + 2*k) // done reading the peers' slots
	x.stores.done(class, stream, time.Since(start))
	return nil
}
