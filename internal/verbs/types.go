package verbs

import "fmt"

// Access flags of a memory region or queue pair (IBV_ACCESS_*).
type Access int

const (
	AccessLocalWrite  Access = 1
	AccessRemoteWrite Access = 2
	AccessRemoteRead  Access = 4
)

// PortState is a port's logical state (enum ibv_port_state).
type PortState int

const (
	PortNop         PortState = 0
	PortDown        PortState = 1
	PortInit        PortState = 2
	PortArmed       PortState = 3
	PortActive      PortState = 4
	PortActiveDefer PortState = 5
)

func (s PortState) String() string {
	switch s {
	case PortNop:
		return "NOP"
	case PortDown:
		return "DOWN"
	case PortInit:
		return "INIT"
	case PortArmed:
		return "ARMED"
	case PortActive:
		return "ACTIVE"
	case PortActiveDefer:
		return "ACTIVE_DEFER"
	}
	return fmt.Sprintf("port state %d", int(s))
}

// LinkLayer is a port's link layer (IBV_LINK_LAYER_*).
type LinkLayer int

const (
	LinkUnspecified LinkLayer = 0
	LinkInfiniBand  LinkLayer = 1
	LinkEthernet    LinkLayer = 2
)

func (l LinkLayer) String() string {
	switch l {
	case LinkUnspecified:
		return "unspecified"
	case LinkInfiniBand:
		return "InfiniBand"
	case LinkEthernet:
		return "Ethernet"
	}
	return fmt.Sprintf("link layer %d", int(l))
}

// MTU is a path MTU code (enum ibv_mtu): 1 = 256 bytes … 5 = 4096 bytes.
type MTU int

const (
	MTU256  MTU = 1
	MTU512  MTU = 2
	MTU1024 MTU = 3
	MTU2048 MTU = 4
	MTU4096 MTU = 5
)

// Bytes returns the MTU in bytes, or 0 for an unknown code.
func (m MTU) Bytes() int {
	if m < MTU256 || m > MTU4096 {
		return 0
	}
	return 128 << m
}

func (m MTU) String() string {
	if b := m.Bytes(); b != 0 {
		return fmt.Sprint(b)
	}
	return fmt.Sprintf("mtu code %d", int(m))
}

// PortAttr is what ringo needs of ibv_port_attr.
type PortAttr struct {
	State     PortState
	LID       uint16
	LinkLayer LinkLayer
	ActiveMTU MTU
	GIDTblLen int
}

// GIDType is a GID table entry's type (enum ibv_gid_type).
type GIDType int

const (
	GIDTypeIB     GIDType = 0
	GIDTypeRoCEv1 GIDType = 1
	GIDTypeRoCEv2 GIDType = 2
)

func (t GIDType) String() string {
	switch t {
	case GIDTypeIB:
		return "IB"
	case GIDTypeRoCEv1:
		return "RoCEv1"
	case GIDTypeRoCEv2:
		return "RoCEv2"
	}
	return fmt.Sprintf("gid type %d", int(t))
}

// GIDEntry is one populated entry of a port's GID table.
type GIDEntry struct {
	Index int
	GID   [16]byte
	Type  GIDType
}

// Opcode is a completion's opcode (enum ibv_wc_opcode).
type Opcode int

const (
	OpSend            Opcode = 0
	OpRDMAWrite       Opcode = 1
	OpRDMARead        Opcode = 2
	OpRecv            Opcode = 128
	OpRecvRDMAWithImm Opcode = 129
)

// Completion is one polled work completion. Status 0 is success; StatusText
// is filled (from ibv_wc_status_str) only for a failed completion, so a
// successful poll does not allocate. Opcode and Imm are meaningful only on
// success.
type Completion struct {
	WRID       uint64
	Status     int
	StatusText string
	Opcode     Opcode
	Imm        uint32 // host order
	ByteLen    uint32
	QPNum      uint32
	VendorErr  uint32
}

// QPParams are the attributes of the RTR and RTS transitions.
type QPParams struct {
	Port       uint8
	RemoteQPN  uint32
	RemotePSN  uint32 // the peer's send PSN: our receive PSN
	LocalPSN   uint32 // our send PSN
	RemoteLID  uint16
	RemoteGID  [16]byte
	Global     bool  // address by GID (RoCE, or IB across subnets)
	SGIDIndex  uint8 // our GID index when Global
	MTU        MTU
	SL         uint8
	TC         uint8
	Timeout    uint8 // local ACK timeout, 4.096µs·2^Timeout (NCCL_IB_TIMEOUT)
	RetryCnt   uint8 // NCCL_IB_RETRY_CNT
	RNRRetry   uint8 // 7 = retry forever
	MinRNRTime uint8
}
