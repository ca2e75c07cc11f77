package rdma

import "fmt"

// A Provider opens RDMA device ports. Two implement it: the verbs provider
// (build tag ibverbs, over internal/verbs) and rdmatest.Fabric, an
// in-process fake that every test runs against.
type Provider interface {
	// Open opens port (1-based) of the device called name, with its
	// protection domain. The port must be usable (ACTIVE).
	Open(name string, port int) (Device, error)
}

// Device is an open device port and its protection domain: the factory of
// the memory regions, completion queues and queue pairs of the connections
// that use it. Its methods are safe for concurrent use; Close must come
// after every object made from it is closed.
type Device interface {
	Name() string
	Port() int
	// Addr is how a peer reaches this port.
	Addr() PortAddr
	// RegHost registers host memory b, which the caller keeps alive (and,
	// being Go or mmap'd memory, unmoved) until the region is closed.
	RegHost(b []byte, access Access) (MR, error)
	// RegAddr registers n bytes at a device address (GPU memory through
	// nvidia-peermem).
	RegAddr(addr uint64, n int, access Access) (MR, error)
	// RegDmabuf registers n bytes at offset in the dma-buf fd, addressed as
	// iova.
	RegDmabuf(fd int, offset uint64, n int, iova uint64, access Access) (MR, error)
	// CreateCQ creates a completion queue of at least depth entries.
	CreateCQ(depth int) (CQ, error)
	// CreateQP creates a reliable-connected queue pair whose send
	// completions go to send and receive completions to recv, already in
	// INIT so that receives can be posted before it connects.
	CreateQP(send, recv CQ, maxSend, maxRecv int) (QP, error)
	Close() error
}

// PortAddr locates a port: by LID on InfiniBand, by GID (Global) on RoCE.
type PortAddr struct {
	LID      uint16
	GID      [16]byte
	GIDIndex int
	Global   bool
	MTU      MTU
}

// MR is a registered memory region.
type MR interface {
	// Addr is the address work requests use for the region's first byte,
	// locally and from the peer: its virtual address, or the iova of a
	// dma-buf region.
	Addr() uint64
	Len() int
	LKey() uint32
	RKey() uint32
	Close() error
}

// CQ is a completion queue. One goroutine polls it at a time.
type CQ interface {
	// Poll fills out with completions without waiting and returns how
	// many. It does not allocate for successful completions.
	Poll(out []Completion) (int, error)
	Close() error
}

// QP is a reliable-connected queue pair. Posting to the send queue and to
// the receive queue may happen from two goroutines.
type QP interface {
	Num() uint32
	// PSN is the queue pair's initial send packet sequence number.
	PSN() uint32
	// Connect moves the queue pair to RTR then RTS, joined to remote.
	Connect(remote Remote) error
	// PostWrite posts w; it does not allocate.
	PostWrite(w *Write) error
	// PostRecv posts a zero-length receive for one WRITE WITH IMM.
	PostRecv(id uint64) error
	// Fail moves the queue pair to the error state: outstanding and later
	// work completes with flush errors.
	Fail() error
	Close() error
}

// Remote is the peer queue pair a QP connects to.
type Remote struct {
	QPN  uint32
	PSN  uint32
	Addr PortAddr
}

// Write is one RDMA WRITE work request: Len bytes at Offset in Local to
// RemoteAddr under RKey; with Imm set, a WRITE WITH IMM that also consumes
// one receive at the peer and completes there with ImmData.
type Write struct {
	ID         uint64
	Local      MR
	Offset     int
	Len        int
	RemoteAddr uint64
	RKey       uint32
	Imm        bool
	ImmData    uint32
	Signaled   bool
}

// Access flags (IBV_ACCESS_*).
type Access int

const (
	LocalWrite  Access = 1
	RemoteWrite Access = 2
	RemoteRead  Access = 4
)

// MTU is a path MTU code (enum ibv_mtu): 1 = 256 bytes … 5 = 4096.
type MTU uint8

// Bytes returns the MTU in bytes, 0 for an unknown code.
func (m MTU) Bytes() int {
	if m < 1 || m > 5 {
		return 0
	}
	return 128 << m
}

// Opcode is a completion's opcode (enum ibv_wc_opcode).
type Opcode int

const (
	OpRDMAWrite       Opcode = 1
	OpRecvRDMAWithImm Opcode = 129
)

// Status is a completion status (enum ibv_wc_status); 0 is success.
type Status int

// The statuses the protocol and the fake name.
const (
	StatusSuccess        Status = 0
	StatusLocLenErr      Status = 1
	StatusLocProtErr     Status = 4
	StatusWRFlushErr     Status = 5
	StatusRemAccessErr   Status = 10
	StatusRetryExcErr    Status = 12
	StatusRNRRetryExcErr Status = 13
)

// statusText is ibv_wc_status_str's table, for Status.String (the fake's
// completions carry it as the verbs provider's do).
var statusText = [...]string{
	"success", "local length error", "local QP operation error", "local EE context operation error",
	"local protection error", "Work Request Flushed Error", "memory management operation error",
	"bad response error", "local access error", "remote invalid request error", "remote access error",
	"remote operation error", "transport retry counter exceeded", "RNR retry counter exceeded",
	"local RDD violation error", "remote invalid RD request", "aborted error", "invalid EE context number",
	"invalid EE context state", "fatal error", "response timeout error", "general error",
}

func (s Status) String() string {
	if s >= 0 && int(s) < len(statusText) {
		return statusText[s]
	}
	return fmt.Sprintf("completion status %d", int(s))
}

// Completion is one work completion. Text (the provider's status string) is
// set only when Status is not success; Opcode, Imm and Bytes only when it is.
type Completion struct {
	ID     uint64
	Status Status
	Text   string
	Opcode Opcode
	Imm    uint32
	Bytes  uint32
	QPN    uint32
}
