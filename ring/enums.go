package ring

//go:generate go run golang.org/x/tools/cmd/stringer@v0.52.0 -type=Collective,Protocol,Prim -linecomment -output=enums_string.go

// Collective names a ring collective.
type Collective uint8

const (
	AllReduce     Collective = iota // allreduce
	ReduceScatter                   // reducescatter
	AllGather                       // allgather
	Broadcast                       // broadcast
	Reduce                          // reduce
	// SendRecvs is a point-to-point plan (NewP2P): each rank's sends and
	// receives, to and from any ranks. New refuses it.
	SendRecvs // sendrecv
	numCollectives
)

// numRingColls counts the collectives New plans (SendRecvs excluded).
const numRingColls = SendRecvs

// Valid reports whether c names a collective.
func (c Collective) Valid() bool { return c < numCollectives }

// Reduces reports whether the collective combines data with a reduction op.
func (c Collective) Reduces() bool {
	return c == AllReduce || c == ReduceScatter || c == Reduce
}

// P2P reports whether c is point-to-point (SendRecvs): its plans come from
// NewP2P, its buffers' extents from the plan's P2PSpec.
func (c Collective) P2P() bool { return c == SendRecvs }

// Rooted reports whether the collective has a root rank.
func (c Collective) Rooted() bool { return c == Broadcast || c == Reduce }

// Protocol is a FIFO protocol. The values are NCCL's NCCL_PROTO_* numbers.
type Protocol uint8

const (
	LL     Protocol = iota // LL
	LL128                  // LL128
	Simple                 // Simple
	numProtocols
)

// Valid reports whether p names a protocol.
func (p Protocol) Valid() bool { return p < numProtocols }

// Prim is one primitive call of a ring program: what the step reads (its
// input buffer, the receive FIFO) and where it writes (its output buffer, the
// send FIFO). Reductions apply the op's pre-operation to the local input and
// its post-operation to a chunk's final result (package reduce):
//
//	Send                pre(input) → send FIFO
//	Recv                recv FIFO → output
//	RecvReduceSend      recv ⊕ pre(input) → send FIFO
//	RecvReduceCopy      post(recv ⊕ pre(input)) → output
//	RecvReduceCopySend  post(recv ⊕ pre(input)) → output and send FIFO
//	RecvCopySend        recv FIFO → output and send FIFO
//	CopySend            input → output and send FIFO
//	Copy                input → output (one rank, no reduction)
//	ReduceCopy          post(pre(input)) → output (one rank, reduction)
//	SendRecv            input → send FIFO, and independently recv FIFO → output
//
// SendRecv is point-to-point's primitive (NewP2P): two halves on two
// connections that need not be a ring's — Count elements from the input
// at InOff to SendPeer, and RecvCount elements from RecvPeer into the
// output at OutOff. Both halves are cut into slices of SliceLen (either
// may have fewer, or no, elements: its remaining slices are posted
// empty) and run in lockstep: iteration k moves slice k of each. The send
// half of slice k must never wait for the receive half (an executor sends
// slice k, then receives slice k): otherwise two ranks exchanging with a
// SendRecv each would both wait for data neither has sent.
type Prim uint8

const (
	Send               Prim = iota // send
	Recv                           // recv
	RecvReduceSend                 // recvReduceSend
	RecvReduceCopy                 // recvReduceCopy
	RecvReduceCopySend             // recvReduceCopySend
	RecvCopySend                   // recvCopySend
	CopySend                       // copySend
	Copy                           // copy
	ReduceCopy                     // reduceCopy
	SendRecv                       // sendRecv
	numPrims
)

// Valid reports whether p names a primitive.
func (p Prim) Valid() bool { return p < numPrims }

// Recvs reports whether the primitive consumes from the receive FIFO.
func (p Prim) Recvs() bool {
	switch p {
	case Recv, RecvReduceSend, RecvReduceCopy, RecvReduceCopySend, RecvCopySend, SendRecv:
		return true
	}
	return false
}

// Sends reports whether the primitive produces into the send FIFO.
func (p Prim) Sends() bool {
	switch p {
	case Send, RecvReduceSend, RecvReduceCopySend, RecvCopySend, CopySend, SendRecv:
		return true
	}
	return false
}

// ReadsInput reports whether the primitive reads the rank's input buffer.
func (p Prim) ReadsInput() bool {
	switch p {
	case Send, RecvReduceSend, RecvReduceCopy, RecvReduceCopySend, CopySend, Copy, ReduceCopy, SendRecv:
		return true
	}
	return false
}

// WritesOutput reports whether the primitive writes the rank's output buffer.
func (p Prim) WritesOutput() bool {
	switch p {
	case Recv, RecvReduceCopy, RecvReduceCopySend, RecvCopySend, CopySend, Copy, ReduceCopy, SendRecv:
		return true
	}
	return false
}

// Reduces reports whether the primitive combines data with the op.
func (p Prim) Reduces() bool {
	switch p {
	case Send, RecvReduceSend, RecvReduceCopy, RecvReduceCopySend, ReduceCopy:
		return true
	}
	return false
}

// ParseCollective reads a collective's name as String writes it
// (case-insensitive).
func ParseCollective(s string) (Collective, error) { return parseName(s, numCollectives) }

// ParseProtocol reads a protocol's name as String writes it
// (case-insensitive).
func ParseProtocol(s string) (Protocol, error) { return parseName(s, numProtocols) }
