package host

import (
	"encoding/binary"
	"fmt"
	"time"

	"github.com/ringo-ccl/ringo/internal/errs"
	"github.com/ringo-ccl/ringo/internal/mem"
	"github.com/ringo-ccl/ringo/reduce"
	"github.com/ringo-ccl/ringo/ring"
	"github.com/ringo-ccl/ringo/shm"
	"github.com/ringo-ccl/ringo/transport"
)

// Windowed is a collective of a communicator whose ranks are processes of
// one host, run on buffers that every rank placed in windows — memory
// every other rank has mapped (ringo.RegisterHostWindow) — by reading and
// writing the peers' buffers where they are: no FIFO, no staging, one
// copy or reduction per byte. The ranks meet twice on their shm.Board:
//
//  1. each publishes where its buffers lie (the window and the offset of
//     its input and of its output) and waits for every peer's;
//  2. it does its share — an all-reduce's rank r combines part r of every
//     rank's input, its own term first, then the peers' in rank order, a
//     block at a time, into its output and writes the block into every
//     peer's output; a reduce-scatter's combines part r of every input
//     into its output; a reduce's combines part r into the root's output;
//     an all-gather's and a broadcast's copy what they need from the peers'
//     inputs;
//  3. it publishes that it is done and waits for every peer's, so that it
//     returns only once nobody reads or writes its buffers any more.
//
// Every part is reduced by one rank, so every rank's output is the same
// bits. The first publication is also the ranks' agreement: where any
// rank's buffers are not in windows, every rank sees it there and RunWindowed
// returns false for all, and the call runs another way (the exchange is
// what the attempt cost). Operations with a pre-operation (Avg, PreMulSum:
// each rank's scalar is its own) do not run here (DirectRuns).
//
// An all-reduce's writes into the peers' outputs use cached or non-temporal stores,
// each rank timing both per size class and keeping the faster (stores).
type Windowed struct {
	Coll    ring.Collective
	In, Out []byte // as Comm.Do's Call.Send and Call.Recv
	Bytes   int    // count × element size (Comm.Do's Call.Count, in bytes)
	Root    int
	Func    *reduce.Func // for the collectives that reduce; without a pre-operation
	Windows Windows

	ins, outs [][]byte // every rank's input and output as this rank reaches them (call-long)
	stores    stores   // kept from call to call
}

// Windows is a rank's view of its communicator's windows.
type Windows interface {
	// Find returns the window holding this rank's n bytes at p and
	// their offset in it, or ok false if no window holds them.
	Find(p uintptr, n int) (slot, off int, ok bool)
	// Reach returns rank q's window slot as this rank reaches it, or nil
	// if this rank holds no such window.
	Reach(q, slot int) []byte
}

// WindowsMin is the smallest call (its larger buffer's bytes) that tries
// the windows before the board's one exchange, where the host's ranks do
// not outnumber its cores: on the 2-core development VM, 2 ranks took
// 1.2–3.1 µs in windows from 8 KiB to 32 KiB against 1.6–11.9 in one
// exchange, all five collectives, and about the same below (BENCHMARKS.md,
// issue 25). Where they do, one exchange's single wait keeps its sizes.
const WindowsMin = 8 << 10

// WindowsFirst reports whether a call of coll of bytes (count × element
// size) among size ranks, small enough for one exchange, tries the
// windows first. Every rank must pass the same crowded.
func WindowsFirst(coll ring.Collective, bytes, size int, crowded bool) bool {
	in, out := windowedBytes(coll, bytes, size, 0, 0)
	return !crowded && max(in, out) >= WindowsMin
}

// windowedBlock is the bytes of an all-reduce's part that a rank combines
// through every peer and hands out before the next: small enough to stay
// in the core's L1 cache.
const windowedBlock = 16 << 10

// notWindowed is a post's slot for a buffer outside any window.
const notWindowed = 1<<32 - 1

// RunWindowed runs x as rank rank of size over b, its waits bounded by w,
// and reports whether it ran: false when some rank's buffers are not in
// windows, which every rank learns alike (nothing moved; the call must
// run another way). It does not allocate once x has run a call.
func RunWindowed(b *shm.Board, w *transport.Waiter, rank, size int, x *Windowed) (ran bool, err error) {
	failed := func(q int, what string, err error) error {
		return &errs.Error{Op: x.Coll.String(), Rank: rank, Peer: q, Channel: -1, Step: -1, Detail: "windows: " + what, Err: err}
	}
	awaitAll := func(seq uint64, what string) error {
		if q, err := b.AwaitAll(w, seq); err != nil {
			return failed(q, what, err)
		}
		return nil
	}
	inBytes, outBytes := windowedBytes(x.Coll, x.Bytes, size, rank, x.Root)
	// Phase A. This call's slot was last read in call seq−2; a peer is
	// done with it once it has published seq−1 (Board's rule).
	seq := b.Next()
	if err := awaitAll(seq-1, "waiting for the previous call to be read"); err != nil {
		return false, err
	}
	mine := b.Slot(rank, seq)
	put(x.Windows, mine, x.In, inBytes)
	put(x.Windows, mine[postBytes:], x.Out, outBytes)
	putCall(mine[2*postBytes:], x)
	b.Publish(seq)
	if err := awaitAll(seq, "waiting for the peers' windows"); err != nil {
		return false, err
	}
	// Every rank reads the same posts, so all see a mismatch, and all fall
	// back, alike.
	for q := range size {
		if err := matches(b.Slot(q, seq)[2*postBytes:], mine[2*postBytes:], q, rank); err != nil {
			return false, failed(q, "its call", err)
		}
	}
	for q := range size {
		qIn, qOut := windowedBytes(x.Coll, x.Bytes, size, q, x.Root)
		s := b.Slot(q, seq)
		if qIn > 0 && binary.LittleEndian.Uint32(s) == notWindowed || qOut > 0 && binary.LittleEndian.Uint32(s[postBytes:]) == notWindowed {
			return false, nil
		}
	}
	if len(x.ins) != size {
		x.ins, x.outs = make([][]byte, size), make([][]byte, size)
	}
	for q := range size {
		qIn, qOut := windowedBytes(x.Coll, x.Bytes, size, q, x.Root)
		s := b.Slot(q, seq)
		var err error
		if x.ins[q], err = x.reach(s, q, rank, qIn, x.In, "input"); err == nil {
			x.outs[q], err = x.reach(s[postBytes:], q, rank, qOut, x.Out, "output")
		}
		if err != nil {
			return false, failed(q, "its buffers", err)
		}
	}
	n := x.Bytes
	switch x.Coll {
	case ring.AllReduce:
		class, stream := x.stores.pick(int64(n))
		start := time.Now()
		po, pm := directPart(n, size, rank)
		for bo := po; bo < po+pm; bo += windowedBlock {
			be := min(bo+windowedBlock, po+pm)
			dst := x.Out[bo:be]
			x.combine(dst, rank, size, bo, be)
			for q := range size {
				if q != rank {
					fill(stream, x.outs[q][bo:be], dst)
				}
			}
		}
		x.stores.done(class, stream, time.Since(start))
	case ring.ReduceScatter:
		x.combine(x.Out[:n], rank, size, rank*n, (rank+1)*n)
	case ring.Reduce:
		po, pm := directPart(n, size, rank)
		// The root's term first: where the root's input is its output,
		// this part of it is read before it is written.
		x.combine(x.outs[x.Root][po:po+pm], x.Root, size, po, po+pm)
	case ring.AllGather:
		for q := range size {
			copyUnlessSame(x.Out[q*n:(q+1)*n], x.ins[q])
		}
	case ring.Broadcast:
		copyUnlessSame(x.Out[:n], x.ins[x.Root])
	}
	// Phase B: done with the peers' buffers; return once every peer is
	// done with this rank's.
	b.Publish(seq + 1)
	return true, awaitAll(seq+1, "waiting for the peers to finish")
}

// combine sets dst = ⊕ every rank's input at [lo, hi), rank first's term
// first, then the others' in rank order.
func (x *Windowed) combine(dst []byte, first, size, lo, hi int) {
	acc := x.ins[first][lo:hi]
	for q := range size {
		if q != first {
			x.Func.Combine(dst, acc, x.ins[q][lo:hi])
			acc = dst
		}
	}
	x.Func.Post(dst)
}

// postBytes is what a rank's post says of one buffer: its window's slot
// (notWindowed: none) and its offset there.
const postBytes = 12

// callBytes is what a rank's post says of its call after its buffers:
// the bytes, the collective and the root. The whole post (2×postBytes +
// callBytes) fits the 56 bytes that share the line of its call number.
const callBytes = 8 + 1 + 4

// putCall writes x's call into post (the root 0 for a collective that has
// none).
func putCall(post []byte, x *Windowed) {
	root := 0
	if x.Coll == ring.Broadcast || x.Coll == ring.Reduce {
		root = x.Root
	}
	binary.LittleEndian.PutUint64(post, uint64(x.Bytes))
	post[8] = byte(x.Coll)
	binary.LittleEndian.PutUint32(post[9:], uint32(root))
}

// matches returns an error naming the difference when rank q's call (its
// post's) is not this rank's (mine).
func matches(theirs, mine []byte, q, rank int) error {
	if string(theirs[:callBytes]) == string(mine[:callBytes]) {
		return nil
	}
	say := func(post []byte) string {
		return fmt.Sprintf("%v of %d bytes, root %d", ring.Collective(post[8]), binary.LittleEndian.Uint64(post), int32(binary.LittleEndian.Uint32(post[9:])))
	}
	return fmt.Errorf("%w: rank %d called %s, rank %d %s: every rank's call must be the same", errs.ErrInvalidArgument, q, say(theirs), rank, say(mine))
}

// put writes into post where n bytes at p's start lie in ws (nothing to
// find when n is 0).
func put(ws Windows, post, p []byte, n int) {
	slot, off := uint32(notWindowed), 0
	if n > 0 {
		if s, o, ok := ws.Find(mem.Addr(p), n); ok {
			slot, off = uint32(s), o
		}
	}
	binary.LittleEndian.PutUint32(post, slot)
	binary.LittleEndian.PutUint64(post[4:], uint64(off))
}

// reach returns n bytes of rank q's buffer (what, as its post says where
// it is; own, this rank's) as this rank reaches them, or an error naming
// a buffer outside the windows this rank holds.
func (x *Windowed) reach(post []byte, q, rank, n int, own []byte, what string) ([]byte, error) {
	if n == 0 {
		return nil, nil
	}
	if q == rank {
		return own[:n:n], nil
	}
	slot, off := binary.LittleEndian.Uint32(post), binary.LittleEndian.Uint64(post[4:])
	win := x.Windows.Reach(q, int(slot))
	if win == nil || off > uint64(len(win)) || uint64(n) > uint64(len(win))-off {
		return nil, fmt.Errorf("%w: rank %d's %s of %d bytes at offset %d of window %d lies outside the windows rank %d holds",
			errs.ErrInvalidArgument, q, what, n, off, slot, rank)
	}
	return win[off : off+uint64(n) : off+uint64(n)], nil
}

// windowedBytes returns the bytes of rank q's input and output that a
// windowed coll of bytes (count × element size) among size ranks touches:
// 0 for a buffer it leaves alone (a broadcast's input off the root, a
// reduce's output off it).
func windowedBytes(coll ring.Collective, bytes, size, q, root int) (in, out int) {
	switch coll {
	case ring.ReduceScatter:
		return size * bytes, bytes
	case ring.AllGather:
		return bytes, size * bytes
	case ring.Broadcast:
		if q != root {
			return 0, bytes
		}
	case ring.Reduce:
		if q != root {
			return bytes, 0
		}
	}
	return bytes, bytes
}
