package rdma

import (
	"encoding/binary"
	"errors"
	"fmt"
	"hash/crc32"

	"github.com/ringo-ccl/ringo/transport"
)

// A post header, as the sender writes it into the receiver's header ring
// (entry Step mod ring.NSteps), 32 bytes, little endian:
//
//	 0  step     u64
//	 8  bytes    u32
//	12  offset   u32  where the data starts in the connection memory (same at both ends)
//	16  skip     u8
//	17  slots    u8   at most 2×ring.NSteps
//	18  proto    u8
//	19  version  u8   headerVersion
//	20  flags    u8   flagDataSum, or 0
//	21  zero     [3]u8
//	24  data sum u32  the data's CRC-32C (transport.DataSum) with flagDataSum, else 0
//	28  crc32c   u32  of bytes 0..27
const (
	headerBytes   = 32
	headerVersion = 2

	flagDataSum = 1 << 0 // bytes 24..27 hold the data's checksum (RINGO_CHECK=1 at the sender)
)

var castagnoli = crc32.MakeTable(crc32.Castagnoli)

var (
	// errHeader marks a post header that does not decode.
	errHeader = errors.New("corrupt post header")
	// errData marks a post whose data does not match its header's data
	// checksum: it changed between the two ends.
	errData = errors.New("corrupt post data")
)

// header is what a post header says.
type header struct {
	post   transport.Post
	off    int    // where the data starts in the connection memory
	sum    uint32 // the data's checksum, when summed
	summed bool   // the sender checksummed the data
}

// put encodes h into b. A post whose shape is not ShapeOK has its skip and
// slots truncated to a byte each; Send refuses those.
func (h header) put(b []byte) {
	b = b[:headerBytes]
	binary.LittleEndian.PutUint64(b[0:], h.post.Step)
	binary.LittleEndian.PutUint32(b[8:], h.post.Bytes)
	binary.LittleEndian.PutUint32(b[12:], uint32(h.off))
	b[16], b[17], b[18], b[19] = uint8(h.post.Skip), uint8(h.post.Slots), h.post.Proto, headerVersion
	b[20], b[21], b[22], b[23] = 0, 0, 0, 0
	binary.LittleEndian.PutUint32(b[24:], 0)
	if h.summed {
		b[20] = flagDataSum
		binary.LittleEndian.PutUint32(b[24:], h.sum)
	}
	binary.LittleEndian.PutUint32(b[28:], crc32.Checksum(b[:28], castagnoli))
}

// decodeHeader decodes and checks the shape of a header; continuity, bounds
// and the data checksum are the caller's. It allocates only when it fails.
func decodeHeader(b []byte) (header, error) {
	b = b[:headerBytes]
	if got, want := binary.LittleEndian.Uint32(b[28:]), crc32.Checksum(b[:28], castagnoli); got != want {
		return header{}, fmt.Errorf("%w: checksum %#08x, expected %#08x (% x)", errHeader, got, want, b)
	}
	if b[19] != headerVersion {
		return header{}, fmt.Errorf("%w: version %d, expected %d (% x)", errHeader, b[19], headerVersion, b)
	}
	h := header{summed: b[20] == flagDataSum, sum: binary.LittleEndian.Uint32(b[24:])}
	if b[20]&^flagDataSum != 0 {
		return header{}, fmt.Errorf("%w: unknown flags %#02x (% x)", errHeader, b[20], b)
	}
	if b[21] != 0 || b[22] != 0 || b[23] != 0 || !h.summed && h.sum != 0 {
		return header{}, fmt.Errorf("%w: reserved bytes set (% x)", errHeader, b)
	}
	h.post = transport.Post{
		Step:  binary.LittleEndian.Uint64(b[0:]),
		Bytes: binary.LittleEndian.Uint32(b[8:]),
		Skip:  uint32(b[16]),
		Slots: uint32(b[17]),
		Proto: b[18],
	}
	h.off = int(binary.LittleEndian.Uint32(b[12:]))
	if !h.post.ShapeOK() {
		return h, fmt.Errorf("%w: %v: %d slots, %d skipped", errHeader, h.post, h.post.Slots, h.post.Skip)
	}
	return h, nil
}
