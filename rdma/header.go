package rdma

import (
	"encoding/binary"
	"errors"
	"fmt"
	"hash/crc32"

	"github.com/ringo-ccl/ringo/ring"
	"github.com/ringo-ccl/ringo/transport"
)

// A post header, as the sender writes it into the receiver's header ring
// (entry Step mod ring.NSteps), 32 bytes, little endian:
//
//	 0  step    u64
//	 8  skip    u32
//	12  slots   u32
//	16  bytes   u32
//	20  offset  u32  where the data starts in the connection memory (same at both ends)
//	24  proto   u8
//	25  version u8   headerVersion
//	26  zero    u16
//	28  crc32c  u32  of bytes 0..27
const (
	headerBytes   = 32
	headerVersion = 1
)

var castagnoli = crc32.MakeTable(crc32.Castagnoli)

// errHeader marks a post header that does not decode.
var errHeader = errors.New("corrupt post header")

// putHeader encodes p, whose data sits at off, into b.
func putHeader(b []byte, p transport.Post, off int) {
	b = b[:headerBytes]
	binary.LittleEndian.PutUint64(b[0:], p.Step)
	binary.LittleEndian.PutUint32(b[8:], p.Skip)
	binary.LittleEndian.PutUint32(b[12:], p.Slots)
	binary.LittleEndian.PutUint32(b[16:], p.Bytes)
	binary.LittleEndian.PutUint32(b[20:], uint32(off))
	b[24], b[25], b[26], b[27] = p.Proto, headerVersion, 0, 0
	binary.LittleEndian.PutUint32(b[28:], crc32.Checksum(b[:28], castagnoli))
}

// decodeHeader decodes and checks the shape of a header; continuity and
// bounds are the caller's. It allocates only when it fails.
func decodeHeader(b []byte) (transport.Post, int, error) {
	b = b[:headerBytes]
	if got, want := binary.LittleEndian.Uint32(b[28:]), crc32.Checksum(b[:28], castagnoli); got != want {
		return transport.Post{}, 0, fmt.Errorf("%w: checksum %#08x, expected %#08x (% x)", errHeader, got, want, b)
	}
	if b[25] != headerVersion || b[26] != 0 || b[27] != 0 {
		return transport.Post{}, 0, fmt.Errorf("%w: version %d (want %d) or reserved bytes set (% x)", errHeader, b[25], headerVersion, b)
	}
	p := transport.Post{
		Step:  binary.LittleEndian.Uint64(b[0:]),
		Skip:  binary.LittleEndian.Uint32(b[8:]),
		Slots: binary.LittleEndian.Uint32(b[12:]),
		Bytes: binary.LittleEndian.Uint32(b[16:]),
		Proto: b[24],
	}
	if p.Slots == 0 || p.Skip >= p.Slots || p.Slots > 2*ring.NSteps {
		return p, 0, fmt.Errorf("%w: %v: %d slots, %d skipped", errHeader, p, p.Slots, p.Skip)
	}
	return p, int(binary.LittleEndian.Uint32(b[20:])), nil
}
