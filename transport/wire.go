package transport

import (
	"fmt"

	"github.com/ringo-ccl/ringo/ring"
)

// A net connection joins two ranks that share no memory. Each end keeps a
// Conn in its own memory — the sender's mirrors the receiver's FIFO — and a
// proxy (proxy.go) moves what the local executor posts across a wire:
//
//	sender's executor → sender's Conn → send proxy ══ wire ══ receive proxy → receiver's Conn → receiver's executor
//	                                    credit  ◄══ wire ══ credit
//
// The sender's Conn and the receiver's have the same Sizes, so a slot sits
// at the same offset in both: a wire may place data by offset (RDMA) or
// carry it in a stream (sockets).

// Post is one transfer of a net connection: the FIFO steps [Step,
// Step+Slots), whose data starts Skip slots in (the sender aligned its step
// counter, see host.Executor) and is Bytes long. A Simple post's data is its
// slots' bytes; an LL post's is its slot's raw words, flags included
// (LLWords(payload)×8 bytes), so the receiver's words carry the same flags.
type Post struct {
	Step  uint64
	Skip  uint32
	Slots uint32
	Bytes uint32
	Proto uint8 // ring.Simple or ring.LL
}

// ShapeOK reports whether p's slots are what a wire carries: at least one,
// fewer skipped than taken, at most 2×ring.NSteps (the headers keep each in
// a byte).
func (p Post) ShapeOK() bool {
	return p.Slots != 0 && p.Skip < p.Slots && p.Slots <= 2*ring.NSteps
}

func (p Post) String() string {
	return fmt.Sprintf("post{step %d, skip %d, slots %d, %d bytes, proto %d}", p.Step, p.Skip, p.Slots, p.Bytes, p.Proto)
}

// SendWire is the sender's end of a net connection's wire. Its methods are
// called by the send proxy: Send by one goroutine, Credit by another.
type SendWire interface {
	// Send moves post p and its data to the receiver. data lies in the
	// memory the wire was made over (the sender's Conn), at the offset its
	// copy has in the receiver's. The sender does not touch data again
	// until the receiver has returned credit for p's steps, so Send may
	// return before the data has left.
	Send(p Post, data []byte) error
	// Credit waits for the receiver's next credit report and returns its
	// head: every step below it has been consumed.
	Credit() (uint64, error)
	// Close releases the wire; blocked calls return an error.
	Close() error
}

// RecvWire is the receiver's end. Recv is called by one goroutine,
// SendCredit by another.
type RecvWire interface {
	// Recv waits for the next post, calls place with its header to learn
	// where its data goes (len == p.Bytes; in the memory the wire was made
	// over, or a staging buffer) and returns once the data is there. It
	// fails — never returning data — on a header that does not decode or
	// does not follow the previous post.
	Recv(place func(p Post) ([]byte, error)) (Post, error)
	// SendCredit reports head to the sender.
	SendCredit(head uint64) error
	// Close releases the wire; blocked calls return an error.
	Close() error
}
