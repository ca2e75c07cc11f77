package transport

import (
	"fmt"
	"sync/atomic"
	"time"

	"github.com/ringo-ccl/ringo/internal/mem"
	"github.com/ringo-ccl/ringo/ring"
)

// Sizes are a connection's FIFO sizes in bytes, all NSteps slots included.
type Sizes struct {
	Simple int // NCCL_BUFFSIZE
	LL     int // NCCL_LL_BUFFSIZE
}

// Validate checks that every slot is a whole number of 16-byte lines.
func (s Sizes) Validate() error {
	if s.Simple <= 0 || s.Simple%(ring.NSteps*16) != 0 {
		return fmt.Errorf("Simple buffer size %d is not a positive multiple of %d", s.Simple, ring.NSteps*16)
	}
	if s.LL <= 0 || s.LL%(ring.NSteps*16) != 0 {
		return fmt.Errorf("LL buffer size %d is not a positive multiple of %d", s.LL, ring.NSteps*16)
	}
	return nil
}

// Layout of a connection's memory. The receiver's words (head, and the
// sequence of the bell it rings) and the sender's (tail, its bell) sit on
// separate 128-byte lines; a sleeper count sits beside the bell it sleeps on
// and is written only by a sleeper.
const (
	headOff           = 0   // u64, receiver → sender: steps consumed
	creditSeqOff      = 8   // u32, receiver rings
	creditSleepersOff = 12  // u32, sender sleeps
	tailOff           = 128 // u64, sender → receiver: steps produced
	dataSeqOff        = 136 // u32, sender rings
	dataSleepersOff   = 140 // u32, receiver sleeps
	postsOff          = 144 // NSteps × u64, sender → proxy: what each post covers
	headerLen         = 256
)

// Bytes returns the memory a connection with sizes s occupies.
func (s Sizes) Bytes() int { return headerLen + s.Simple + s.LL }

// Conn is one connection's view of its memory. Both ends of an in-process
// connection share one Conn; across processes each end builds its own view
// of the same bytes. Its methods are safe for one sender goroutine and one
// receiver goroutine at a time.
type Conn struct {
	head, tail *atomic.Uint64
	posts      []atomic.Uint64 // by step % NSteps: the post that starts there (packPost)
	simple     []byte          // NSteps Simple slots
	ll         []atomic.Uint64 // NSteps LL slots of {data32, flag32} words
	simpleSlot int             // bytes per Simple slot
	llSlot     int             // words per LL slot

	// data rings when the sender posts tail or an LL slot, credit when the
	// receiver posts head.
	data, credit Bell
}

// NewConn lays a connection out over b, which must hold s.Bytes() bytes,
// start 128-byte aligned and be zeroed by its owner before first use.
func NewConn(b []byte, s Sizes) (*Conn, error) {
	if err := s.Validate(); err != nil {
		return nil, err
	}
	if len(b) < s.Bytes() {
		return nil, fmt.Errorf("connection memory is %d bytes, need %d", len(b), s.Bytes())
	}
	if !mem.Aligned(b, 128) {
		return nil, fmt.Errorf("connection memory is not 128-byte aligned")
	}
	c := &Conn{
		head:       mem.Word(b, headOff),
		tail:       mem.Word(b, tailOff),
		posts:      mem.Slice[atomic.Uint64](b[postsOff : postsOff+8*ring.NSteps]),
		simple:     b[headerLen : headerLen+s.Simple : headerLen+s.Simple],
		ll:         mem.Slice[atomic.Uint64](b[headerLen+s.Simple : headerLen+s.Simple+s.LL]),
		simpleSlot: s.Simple / ring.NSteps,
		llSlot:     s.LL / ring.NSteps / 8,
		data:       Bell{seq: mem.Word32(b, dataSeqOff), sleepers: mem.Word32(b, dataSleepersOff)},
		credit:     Bell{seq: mem.Word32(b, creditSeqOff), sleepers: mem.Word32(b, creditSleepersOff)},
	}
	return c, nil
}

// ConnView places a connection's words and slots in memory laid out by
// someone else — a GPU's connection regions in host memory, which its
// kernels write and poll without ringing bells (the Conn's waits poll).
type ConnView struct {
	Head, Tail *atomic.Uint64
	Posts      []atomic.Uint64 // NSteps post entries
	Simple     []byte          // NSteps Simple slots
	LL         []atomic.Uint64 // NSteps LL slots
}

// NewConnView returns the connection of v, whose parts must have the sizes
// s gives.
func NewConnView(v ConnView, s Sizes) (*Conn, error) {
	if err := s.Validate(); err != nil {
		return nil, err
	}
	if v.Head == nil || v.Tail == nil || len(v.Posts) != ring.NSteps || len(v.Simple) != s.Simple || 8*len(v.LL) != s.LL {
		return nil, fmt.Errorf("connection view: %d post entries, %d Simple bytes, %d LL bytes; want %d, %d, %d",
			len(v.Posts), len(v.Simple), 8*len(v.LL), ring.NSteps, s.Simple, s.LL)
	}
	return &Conn{head: v.Head, tail: v.Tail, posts: v.Posts, simple: v.Simple, ll: v.LL,
		simpleSlot: s.Simple / ring.NSteps, llSlot: s.LL / ring.NSteps / 8}, nil
}

// parkingBells makes c's bells park their sleepers (both ends of c are
// goroutines of this process).
func (c *Conn) parkingBells() *Conn {
	for _, b := range []*Bell{&c.data, &c.credit} {
		b.local, b.tick = make(chan struct{}, 1), time.NewTimer(tick)
		b.tick.Stop()
	}
	return c
}

// Head is the receiver's consumed-step counter (credits for the sender).
func (c *Conn) Head() *atomic.Uint64 { return c.head }

// Tail is the sender's produced-step counter (Simple only).
func (c *Conn) Tail() *atomic.Uint64 { return c.tail }

// PostHead publishes that the receiver has consumed every step below step.
func (c *Conn) PostHead(step uint64) {
	c.head.Store(step)
	c.credit.Ring()
}

// PostSimple publishes that the sender has produced every step below end,
// nbytes of data in the Simple slots from step start on. Steps between the
// previous post and start carry nothing (the sender aligned its counter).
func (c *Conn) PostSimple(start, end uint64, nbytes int) {
	c.post(start, end, nbytes, ring.Simple)
	c.data.Ring()
}

// post records what the steps from the current tail to end carry — data
// from step start on, nbytes long, in proto's slots — in the entry of the
// first of them, then moves tail to end. Only a proxy reads the entries
// (proxy.go); the entry is free because the sender waited for credit for
// start, so the post NSteps before has been forwarded and consumed.
func (c *Conn) post(start, end uint64, nbytes int, proto ring.Protocol) {
	t := c.tail.Load() // only the sender writes tail
	c.posts[t%ring.NSteps].Store(packPost(start-t, end-t, nbytes, proto))
	c.tail.Store(end)
}

// packPost packs a post entry: bytes in the low 32 bits, then the slots
// covered, the slots skipped and the protocol, a byte each.
func packPost(skip, slots uint64, nbytes int, proto ring.Protocol) uint64 {
	return uint64(uint32(nbytes)) | uint64(uint8(slots))<<32 | uint64(uint8(skip))<<40 | uint64(uint8(proto))<<48
}

// unpackPost is packPost's inverse.
func unpackPost(e uint64) (skip, slots uint64, nbytes int, proto ring.Protocol) {
	return uint64(uint8(e >> 40)), uint64(uint8(e >> 32)), int(uint32(e)), ring.Protocol(uint8(e >> 48))
}

// SimpleSlots returns the bytes of n consecutive Simple slots starting at
// FIFO step step. step%NSteps + n must not exceed NSteps: callers keep
// multi-slot slices aligned so they never wrap.
func (c *Conn) SimpleSlots(step uint64, n int) []byte {
	i := int(step % ring.NSteps)
	return c.simple[i*c.simpleSlot : (i+n)*c.simpleSlot]
}

// SimpleSlotBytes returns the size of one Simple slot.
func (c *Conn) SimpleSlotBytes() int { return c.simpleSlot }

// LLSlot returns the words of the LL slot used at FIFO step step.
func (c *Conn) LLSlot(step uint64) []atomic.Uint64 {
	i := int(step % ring.NSteps)
	return c.ll[i*c.llSlot : (i+1)*c.llSlot]
}

// WriteLL stores data into the LL slot of FIFO step step, flagged for that
// step (refreshing the whole slot when LLCleanDue), moves tail past it (for
// a proxy: LL readers go by the flags) and rings the data bell.
func (c *Conn) WriteLL(step uint64, data []byte) {
	LLWrite(c.LLSlot(step), data, LLFlag(step), LLCleanDue(step))
	c.post(step, step+1, len(data), ring.LL)
	c.data.Ring()
}

// ReadLL waits for the LL slot of FIFO step step to carry len(dst) bytes and
// copies them into dst. An empty read waits for the step's tail instead (no
// word carries a flag): the step is consumed only once its post has
// arrived, so a receiver's credit never runs ahead of what a net wire has
// delivered.
func (c *Conn) ReadLL(step uint64, dst []byte, w *Waiter) error {
	if len(dst) == 0 {
		return w.WaitAtLeast(c.tail, step+1, c.data)
	}
	return LLRead(c.LLSlot(step), dst, LLFlag(step), w, c.data)
}

// WaitData waits until the sender has posted every step below step.
func (c *Conn) WaitData(step uint64, w *Waiter) error {
	return w.WaitAtLeast(c.tail, step, c.data)
}

// WaitCredit waits until the receiver has freed the slots for producing n
// steps starting at step: head + NSteps ≥ step + n.
func (c *Conn) WaitCredit(step uint64, n int, w *Waiter) error {
	want := step + uint64(n)
	if want <= ring.NSteps {
		return nil
	}
	return w.WaitAtLeast(c.head, want-ring.NSteps, c.credit)
}
