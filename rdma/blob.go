package rdma

import (
	"encoding/binary"
	"fmt"

	"github.com/ringo-ccl/ringo/internal/errs"
)

// An endpoint blob tells the peer how to reach this end of a connection;
// the caller ships it through the bootstrap. 72 bytes, little endian:
//
//	 0  magic     "RGIB"
//	 4  version   u8  blobVersion
//	 5  role      u8  roleSend or roleRecv
//	 6  mtu       u8  active MTU code of the port
//	 7  global    u8  1: address by GID (RoCE)
//	 8  lid       u16
//	10  zero      u16
//	12  qpn       u32
//	16  psn       u32
//	20  gid       [16]
//	36  connAddr  u64  the connection memory as registered
//	44  connLen   u64
//	52  connRKey  u32
//	56  ctrlAddr  u64  the control memory: header ring, credit word
//	64  ctrlRKey  u32
//	68  ctrlLen   u32
const (
	blobBytes   = 72
	blobVersion = 1
	roleSend    = 1
	roleRecv    = 2
)

var blobMagic = [4]byte{'R', 'G', 'I', 'B'}

type blob struct {
	role     uint8
	qpn, psn uint32
	addr     PortAddr
	connAddr uint64
	connLen  uint64
	connRKey uint32
	ctrlAddr uint64
	ctrlRKey uint32
	ctrlLen  uint32
}

func (b blob) encode() []byte {
	out := make([]byte, blobBytes)
	copy(out, blobMagic[:])
	out[4], out[5], out[6] = blobVersion, b.role, uint8(b.addr.MTU)
	if b.addr.Global {
		out[7] = 1
	}
	binary.LittleEndian.PutUint16(out[8:], b.addr.LID)
	binary.LittleEndian.PutUint32(out[12:], b.qpn)
	binary.LittleEndian.PutUint32(out[16:], b.psn)
	copy(out[20:36], b.addr.GID[:])
	binary.LittleEndian.PutUint64(out[36:], b.connAddr)
	binary.LittleEndian.PutUint64(out[44:], b.connLen)
	binary.LittleEndian.PutUint32(out[52:], b.connRKey)
	binary.LittleEndian.PutUint64(out[56:], b.ctrlAddr)
	binary.LittleEndian.PutUint32(out[64:], b.ctrlRKey)
	binary.LittleEndian.PutUint32(out[68:], b.ctrlLen)
	return out
}

func decodeBlob(p []byte) (blob, error) {
	var b blob
	bad := func(format string, a ...any) (blob, error) {
		return blob{}, fmt.Errorf("%w: rdma endpoint blob: %s", errs.ErrInvalidArgument, fmt.Sprintf(format, a...))
	}
	if len(p) != blobBytes {
		return bad("%d bytes, want %d", len(p), blobBytes)
	}
	if [4]byte(p[0:4]) != blobMagic || p[4] != blobVersion {
		return bad("magic % x version %d, want %q version %d", p[0:4], p[4], blobMagic[:], blobVersion)
	}
	if p[5] != roleSend && p[5] != roleRecv || p[7] > 1 || p[10] != 0 || p[11] != 0 {
		return bad("role %d, global %d or reserved bytes % x out of range", p[5], p[7], p[10:12])
	}
	b.role = p[5]
	b.addr.MTU = MTU(p[6])
	if b.addr.MTU.Bytes() == 0 {
		return bad("MTU code %d", p[6])
	}
	b.addr.Global = p[7] == 1
	b.addr.LID = binary.LittleEndian.Uint16(p[8:])
	b.qpn = binary.LittleEndian.Uint32(p[12:])
	b.psn = binary.LittleEndian.Uint32(p[16:])
	copy(b.addr.GID[:], p[20:36])
	b.connAddr = binary.LittleEndian.Uint64(p[36:])
	b.connLen = binary.LittleEndian.Uint64(p[44:])
	b.connRKey = binary.LittleEndian.Uint32(p[52:])
	b.ctrlAddr = binary.LittleEndian.Uint64(p[56:])
	b.ctrlRKey = binary.LittleEndian.Uint32(p[64:])
	b.ctrlLen = binary.LittleEndian.Uint32(p[68:])
	return b, nil
}
