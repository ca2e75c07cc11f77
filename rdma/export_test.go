package rdma

import (
	"encoding/binary"
	"hash/crc32"

	"github.com/ringo-ccl/ringo/ring"
	"github.com/ringo-ccl/ringo/transport"
)

// What the external tests (package rdma_test, which run on
// rdmatest.Fabric, a package that imports this one) need of the wire's
// insides. Compiled into tests only.

// HeaderBytes is the size of a post header.
const HeaderBytes = headerBytes

// The sentinels a header or its data that do not check out wrap.
var ErrHeader, ErrData = errHeader, errData

// PutHeader encodes into b the header of post p whose data starts at off in
// the connection memory, with the data's checksum sum when summed.
func PutHeader(b []byte, p transport.Post, off int, sum uint32, summed bool) {
	header{post: p, off: off, sum: sum, summed: summed}.put(b)
}

// ResumHeader recomputes header h's checksum after a test edited it.
func ResumHeader(h []byte) {
	binary.LittleEndian.PutUint32(h[28:], crc32.Checksum(h[:28], castagnoli))
}

// SendRawHeader posts hdr as the header of FIFO step ringStep with
// immediate imm, bypassing Send's encoding.
func (s *Sender) SendRawHeader(hdr []byte, ringStep uint64, imm uint32) error {
	src := hdrSrcOff + int(s.posted%sendDepth)*headerBytes
	copy(s.ctrl[src:src+headerBytes], hdr)
	s.wr[1] = Write{ID: s.posted<<1 | 1, Local: s.ctrlMR, Offset: src, Len: headerBytes,
		RemoteAddr: s.remote.ctrlAddr + hdrRingOff + (ringStep%ring.NSteps)*headerBytes, RKey: s.remote.ctrlRKey,
		Imm: true, ImmData: imm, Signaled: true}
	if err := s.qp.PostWrite(&s.wr[1]); err != nil {
		return err
	}
	s.posted++
	return nil
}

// Posted returns the posts s has made.
func (s *Sender) Posted() uint64 { return s.posted }

// Sums reports whether s checksums every post's data; SetSums changes it,
// as NewSender does under RINGO_CHECK=1.
func (s *Sender) Sums() bool      { return s.sum }
func (s *Sender) SetSums(on bool) { s.sum = on }

// QPNum returns the number of e's queue pair.
func (e *endpoint) QPNum() uint32 { return e.qp.Num() }

// SetAbort makes a ends r's waits, as Config.Abort does.
func (r *Receiver) SetAbort(a *transport.Abort) { r.cfg.Abort = a }

// HeaderAt decodes entry i of r's header ring, as the sender wrote it.
func (r *Receiver) HeaderAt(i int) (p transport.Post, sum uint32, summed bool, err error) {
	h, err := decodeHeader(r.ctrl[hdrRingOff+i*headerBytes:])
	return h.post, h.sum, h.summed, err
}

// InCall reports whether a call of e (Send, Recv, Credit, SendCredit) is in
// progress: every call holds e.mu shared for its duration.
func (e *endpoint) InCall() bool {
	if e.mu.TryLock() {
		e.mu.Unlock()
		return false
	}
	return true
}
