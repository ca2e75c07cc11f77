package host

import (
	"encoding/binary"
	"fmt"

	"github.com/ringo-ccl/ringo/internal/errs"
	"github.com/ringo-ccl/ringo/internal/mem"
	"github.com/ringo-ccl/ringo/internal/sys"
	"github.com/ringo-ccl/ringo/reduce"
	"github.com/ringo-ccl/ringo/shm"
	"github.com/ringo-ccl/ringo/transport"
)

// Direct runs large all-reduces of ranks in processes of one host that
// may read each other's memory (cross-memory attach, which the kernel
// must allow: DirectOK), with one copy of each byte instead of the ring's
// two through a FIFO. The ranks exchange their buffers' addresses on the
// board; each reduces its own part of the output from its input and the
// same part of every peer's input, read straight from the peer's memory;
// then each reads every other part of the output from the rank that
// reduced it. Every element is reduced by one rank, so every rank has the
// same bits.
type Direct struct {
	Pids []int // by rank, from the bootstrap: the processes it reads
	tmp  []byte
	rd   sys.ProcessReader
}

// DirectMin is the smallest all-reduce, in bytes, that runs direct:
// measured on the 2-core development VM (BENCHMARKS.md, issue 25). Buffers
// this large are never on a goroutine's stack, which moves as it grows,
// so their addresses hold for the call.
const DirectMin = 256 << 10

// directChunk is how much of a peer's input is read before it is reduced:
// small enough to stay in cache.
const directChunk = 1 << 20

// DirectFits reports whether an all-reduce of f runs direct: ops without a
// pre-operation (each rank's PreMulSum scalar is its own, and a peer's
// input is read raw).
func DirectFits(f *reduce.Func, bytes int) bool { return bytes >= DirectMin && !f.HasPre() }

// AllReduce runs the all-reduce of in into out (bytes each, elements of
// elt bytes) as rank of size, as calls b.Next() to b.Next()+2 of the board.
// It returns once no peer will read this rank's buffers any more.
func (d *Direct) AllReduce(b *shm.Board, w *transport.Waiter, rank, size int, in, out []byte, elt int, f *reduce.Func) error {
	if d.tmp == nil {
		d.tmp = make([]byte, directChunk)
	}
	seq := b.Next()
	await := func(q int, s uint64, what string) error {
		if err := b.Await(w, q, s); err != nil {
			return &errs.Error{Op: "allreduce", Rank: rank, Peer: q, Channel: -1, Step: -1, Detail: "direct: " + what, Err: err}
		}
		return nil
	}
	all := func(s uint64, what string) error {
		for q := range size {
			if q != rank {
				if err := await(q, s, what); err != nil {
					return err
				}
			}
		}
		return nil
	}
	if err := all(seq-1, "waiting for the previous call to be read"); err != nil {
		return err
	}
	n := len(out)
	desc := b.Slot(rank, seq)
	binary.LittleEndian.PutUint64(desc[0:], uint64(mem.Addr(in)))
	binary.LittleEndian.PutUint64(desc[8:], uint64(mem.Addr(out)))
	binary.LittleEndian.PutUint64(desc[16:], uint64(n))
	b.Publish(seq)
	if err := all(seq, "waiting for the buffers' addresses"); err != nil {
		return err
	}
	for q := range size {
		if got := binary.LittleEndian.Uint64(b.Slot(q, seq)[16:]); q != rank && got != uint64(n) {
			return errs.Invalid("allreduce", rank, "rank %d all-reduces %d bytes, this rank %d", q, got, n)
		}
	}
	addr := func(q, off int) uintptr { return uintptr(binary.LittleEndian.Uint64(b.Slot(q, seq)[off:])) }
	per := (n/elt + size - 1) / size * elt
	part := func(q int) (int, int) { return min(q*per, n), min((q+1)*per, n) }

	// This rank's part: its own input, then every peer's in rank order.
	lo, hi := part(rank)
	if !mem.Same(in[lo:hi], out[lo:hi]) {
		copy(out[lo:hi], in[lo:hi])
	}
	for off := lo; off < hi; off += directChunk {
		c := min(directChunk, hi-off)
		for q := range size {
			if q == rank {
				continue
			}
			if err := d.rd.Read(d.Pids[q], addr(q, 0)+uintptr(off), d.tmp[:c]); err != nil {
				return d.failed(rank, q, err)
			}
			f.Combine(out[off:off+c], out[off:off+c], d.tmp[:c])
		}
		f.Post(out[off : off+c])
	}
	b.Publish(seq + 1)
	if err := all(seq+1, "waiting for the other parts to be reduced"); err != nil {
		return err
	}
	// The other parts, from the ranks that reduced them.
	for q := range size {
		if lo, hi := part(q); q != rank && lo < hi {
			if err := d.rd.Read(d.Pids[q], addr(q, 8)+uintptr(lo), out[lo:hi]); err != nil {
				return d.failed(rank, q, err)
			}
		}
	}
	b.Publish(seq + 2)
	return all(seq+2, "waiting for the peers to be done with this rank's buffers")
}

// failed locates a read of rank q's memory that failed.
func (d *Direct) failed(rank, q int, err error) error {
	return &errs.Error{Op: "allreduce", Rank: rank, Peer: q, Channel: -1, Step: -1,
		Detail: fmt.Sprintf("direct: reading rank %d's buffer", q), Err: err}
}
