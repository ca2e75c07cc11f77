package shm

import (
	"context"
	"errors"
	"fmt"
	"slices"
	"sync/atomic"
	"time"

	"github.com/ringo-ccl/ringo/internal/mem"
	"github.com/ringo-ccl/ringo/internal/sys"
	"github.com/ringo-ccl/ringo/transport"
)

// Board is the one-shot exchange area of a communicator whose ranks are
// processes of one host: each rank owns a post — a bell and two slots,
// each slot after the number of the last call the rank published in it, on
// the slot's first cache line — in a segment of its own, and maps every
// other rank's. A small collective then takes one exchange:
// each rank writes its data into its slot of the call, publishes the
// call's number, waits for every peer's, and reads their slots; a peer's
// first 56 bytes come on the line that carried its number (on the 2-core
// VM that took a 2-rank all-reduce of 32 B from 0.98 to 0.57 µs), and a
// reader of up to four lines more loads them while it waits (AwaitSlot).
//
// The slots alternate between calls (call s uses slot s%2). A rank writes
// a slot again two calls later, once every peer has published the call in
// between — which a peer does only after it finished reading the slot —
// so nothing is overwritten while read. Every rank must take part in every
// call of the board, in the same order, publishing even when it has no
// data.
//
// The segments follow Connect's lifecycle: each rank creates its own, the
// ranks exchange the names, map them, meet at a barrier, and each unlinks
// its own, so nothing is left in /dev/shm once the board exists.
type Board struct {
	rank  int
	slot  int    // bytes in each slot
	seq   uint64 // the last call this rank published
	posts []post // by rank
	segs  []*sys.Segment
	wait  awaited             // the call this rank waits for, as its waits' transport.Cores
	share int                 // ranks a core should hold (SetShare); 0: no share
	cpus  []int               // the cores the ranks may run on (SetShare)
	moved time.Time           // the last rebalance that looked for a core
	move  func(cpu int) error // sys.MoveTo (tests record instead)
}

// awaited is the call a Board's rank waits for, as its waits'
// transport.Cores.
type awaited struct {
	b   *Board
	seq uint64
}

// Place makes this rank's core word me and says, by the peers' words: Away
// where every peer that has not published the call last ran on a core
// other than me, else Near. Where more than the board's share of ranks
// last ran on me, it may first move this rank's thread (rebalance).
func (a *awaited) Place(me uint32) transport.Place {
	b := a.b
	if own := b.posts[b.rank].core; own.Load() != me {
		own.Store(me)
	}
	mine, known, away := 1, true, true
	for q := range b.posts {
		if q == b.rank {
			continue
		}
		p := &b.posts[q]
		c := p.core.Load()
		known = known && c != 0
		if c == me {
			mine++
		}
		if (c == 0 || c == me) && p.seqs[a.seq%2].Load() < a.seq {
			away = false
		}
	}
	if known && b.share > 0 && mine > b.share {
		b.rebalance(me)
	}
	if away {
		return transport.Away
	}
	return transport.Near
}

// rebalance moves this rank's thread to the core with the fewest ranks,
// where that core has fewer than the board's share and this rank has the
// highest index of those on its core me (so one rank of a core moves, as
// every rank reads the same words), at most once a moveEvery; the kernel
// would move one too, but only after tens of milliseconds while every core
// is busy (BENCHMARKS.md, issue 25).
func (b *Board) rebalance(me uint32) {
	for q := b.rank + 1; q < len(b.posts); q++ {
		if b.posts[q].core.Load() == me {
			return
		}
	}
	now := time.Now()
	if now.Sub(b.moved) < moveEvery {
		return
	}
	b.moved = now
	to, least := -1, b.share
	for _, cpu := range b.cpus {
		n := 0
		for q := range b.posts {
			if b.posts[q].core.Load() == uint32(cpu)+1 {
				n++
			}
		}
		if n < least {
			to, least = cpu, n
		}
	}
	if to >= 0 && b.move(to) == nil {
		b.posts[b.rank].core.Store(uint32(to) + 1)
	}
}

// moveEvery is the least time between two moves of a rank (rebalance).
const moveEvery = 10 * time.Millisecond

// post is one rank's part of a board.
type post struct {
	// seqs[k] is the last call the rank published of those whose slot is
	// k: each sits on the cache line of its slot's first bytes, so a small
	// call's data travels to a peer with the number that publishes it.
	seqs  [2]*atomic.Uint64
	bell  transport.Bell // rung after each publication
	core  *atomic.Uint32 // the rank's core word (transport.Cores), after the bell
	slots [2][]byte
}

// boardHeader is the bytes before a post's slots: the bell and the core
// word, alone on their cache line; each slot's call number takes the 8
// bytes before it.
const (
	boardHeader = 64
	coreAt      = 8 // the core word's offset, after the bell's 8 bytes
)

// boardName is rank's board segment in the communicator tagged tag.
func boardName(tag string, rank int) string { return SegmentName(tag, rank) + ".board" }

// NewBoard makes rank ex.Rank()'s part of the board of the communicator
// tagged tag, slots of slot bytes (a multiple of 64). Every rank of ex
// calls it at once; all must be on this host.
func NewBoard(ctx context.Context, ex transport.Exchanger, tag string, slot int) (b *Board, err error) {
	if slot <= 0 || slot%64 != 0 {
		return nil, fmt.Errorf("shm: board slots of %d bytes (a positive multiple of 64)", slot)
	}
	n, rank := ex.Size(), ex.Rank()
	size := boardHeader + 2*(64+slot) // each slot 8 bytes after a 64-byte boundary, its call number before it
	b = &Board{rank: rank, slot: slot, posts: make([]post, n), move: sys.MoveTo}
	b.wait.b = b
	defer func() {
		if err != nil {
			for r := range n {
				sys.Unlink(boardName(tag, r))
			}
			b.Close()
			b = nil
		}
	}()
	own, err := sys.CreateSegment(boardName(tag, rank), size)
	if err != nil {
		return b, fmt.Errorf("shm: %w", err)
	}
	b.segs = append(b.segs, own)
	names, err := ex.AllGather(ctx, []byte(boardName(tag, rank)))
	if err != nil {
		return b, fmt.Errorf("shm: exchanging board segment names: %w", err)
	}
	segs := make([]*sys.Segment, n)
	segs[rank] = own
	for r := range n {
		if r == rank {
			continue
		}
		if want := boardName(tag, r); string(names[r]) != want {
			return b, fmt.Errorf("shm: rank %d announced board segment %q, expected %q", r, names[r], want)
		}
		if segs[r], err = sys.OpenSegment(boardName(tag, r), size); err != nil {
			return b, fmt.Errorf("shm: mapping rank %d's board segment: %w", r, err)
		}
		b.segs = append(b.segs, segs[r])
	}
	if err = ex.Barrier(ctx); err != nil {
		return b, fmt.Errorf("shm: waiting for every rank to map the board: %w", err)
	}
	if err = sys.Unlink(boardName(tag, rank)); err != nil {
		return b, err
	}
	for r, sg := range segs {
		m := sg.Mem
		p := post{bell: transport.BellAt(m, 0), core: mem.Word32(m, coreAt)}
		for k := range 2 {
			at := boardHeader + k*(slot+64)
			p.seqs[k] = mem.Word(m, at)
			p.slots[k] = m[at+8 : at+8+slot : at+8+slot]
		}
		b.posts[r] = p
	}
	return b, nil
}

// SlotBytes returns the size of each slot.
func (b *Board) SlotBytes() int { return b.slot }

// Next returns the number of this rank's next call on the board.
func (b *Board) Next() uint64 { return b.seq + 1 }

// SetShare gives the board the cores its ranks may run on, every rank
// the same (cpus), where the ranks outnumber them, and the ranks each core
// should hold (share): a rank that finds more on its core moves to one
// with fewer (rebalance). share 0: none.
func (b *Board) SetShare(share int, cpus []int) { b.share, b.cpus = share, slices.Clone(cpus) }

// Slot returns rank's slot of call seq.
func (b *Board) Slot(rank int, seq uint64) []byte { return b.posts[rank].slots[seq%2] }

// Publish makes call seq (Next) this rank's last published one: its slot
// of the call is written.
func (b *Board) Publish(seq uint64) {
	b.seq = seq
	p := &b.posts[b.rank]
	p.seqs[seq%2].Store(seq)
	p.bell.RingAll() // every peer may sleep on it
}

// Await waits, under w, until rank has published call seq.
func (b *Board) Await(w *transport.Waiter, rank int, seq uint64) error {
	p := &b.posts[rank]
	b.wait.seq = seq
	return w.WaitAtLeastWarm(p.seqs[seq%2], seq, p.bell, nil, &b.wait)
}

// AwaitSlot is Await for a caller that then reads the first n bytes of
// rank's slot of call seq: where n is at most warmMax, while it spins it
// loads the slot's lines after the first, so a small call's data comes
// alongside its number (WaitAtLeastWarm).
func (b *Board) AwaitSlot(w *transport.Waiter, rank int, seq uint64, n int) error {
	p := &b.posts[rank]
	var warm []byte
	if s := p.slots[seq%2]; n > firstLine && n <= min(warmMax, len(s)) {
		warm = s[firstLine:n]
	}
	b.wait.seq = seq
	return w.WaitAtLeastWarm(p.seqs[seq%2], seq, p.bell, warm, &b.wait)
}

const (
	// firstLine is the bytes of a slot on the line of its call number.
	firstLine = 56
	// warmMax is the most bytes of a slot AwaitSlot warms: the first line
	// and four more. On the 2-core development VM, in its slow state, a
	// 2-rank all-reduce of 64 B took 0.47–0.49 µs warmed in 5 rounds of 6
	// against 0.52–0.64 not, 256 B 0.51–0.54 against 0.58–0.89; 512 B and
	// 1 KiB, with four of their lines warmed, took 0.64–0.72 and
	// 0.96–0.97 µs against 0.62–0.65 and 0.89–0.90: the reader's loads
	// take lines from the writer while it still writes the rest
	// (BENCHMARKS.md, issue 25).
	warmMax = firstLine + 4*64
)

// AwaitAll waits, under w, until every other rank has published call seq.
// On failure it returns the rank it was waiting for.
func (b *Board) AwaitAll(w *transport.Waiter, seq uint64) (peer int, err error) {
	for q := range b.posts {
		if q != b.rank {
			if err := b.Await(w, q, seq); err != nil {
				return q, err
			}
		}
	}
	return -1, nil
}

// Close unmaps the board. It must not be used afterwards.
func (b *Board) Close() error {
	var errs []error
	for _, s := range b.segs {
		errs = append(errs, s.Close())
	}
	b.segs, b.posts = nil, nil
	return errors.Join(errs...)
}
