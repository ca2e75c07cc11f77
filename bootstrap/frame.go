package bootstrap

import (
	"crypto/subtle"
	"encoding/binary"
	"errors"
	"fmt"
	"io"
	"net"
	"net/netip"
	"slices"
	"strings"

	"github.com/ringo-ccl/ringo/internal/tcp"
)

// The bootstrap's wire format. Every message on every bootstrap TCP
// connection (rank↔root, rank→successor, and a point-to-point connection
// between two ranks) is a frame:
//
//	type    1 byte   (frameType)
//	length  4 bytes  payload length, big endian, at most maxPayload(type)
//	payload length bytes
//
// Integers in payloads are big endian. An address is 18 bytes: the IP in its
// 16-byte form (IPv4 as ::ffff:a.b.c.d) and the port. Payloads by type:
//
//	hello, ringHello, p2pHello  secret [32] | rank u32 | nranks u32 | listener address [18]   (58 bytes)
//	status            missing u32 | up to maxListedMissing missing ranks, u32 each
//	table             nranks u32 | nranks addresses [18] (each rank's ring listener)
//	refuse            code u8 (refuseInvalid, refusePeerLost, refuseCrossed) | reason (UTF-8)
//	lost              rank u32 | reason (UTF-8)
//	bye, accept       empty
//	gather, barrier   call sequence u64 | origin rank u32 | blob (empty for barrier)
//	message           tag u32 | blob (at most maxMsgBytes, plus msgSlack for Pair's header)
//	hosts             count u32 | count ranks, u32 each, increasing
//
// Decoders accept exactly what the encoders produce: anything decoded
// re-encodes to the same bytes (the fuzz targets check it).
type frameType uint8

const (
	frameHello     frameType = 1 + iota // rank → root: join
	frameStatus                         // root → waiting rank: ranks still missing, every statusInterval
	frameTable                          // root → every rank, once all joined: ring listener addresses
	frameRefuse                         // root or ring acceptor → connector, before closing: why
	frameLost                           // root → remaining ranks: a rank died
	frameBye                            // rank → root: leaving gracefully
	frameRingHello                      // rank → its successor: ring connection
	frameAccept                         // successor → rank: ring connection accepted
	frameGather                         // ring: one AllGather blob
	frameBarrier                        // ring: one Barrier token
	frameQuery                          // rank → root: where is every rank? (a stalled collective)
	frameAsk                            // root → every rank: report your progress (query number)
	frameProgress                       // rank → root: its progress, answering an ask
	frameReport                         // root → querying rank: every rank's progress
	frameP2PHello                       // rank → any rank: point-to-point connection (p2p.go)
	frameMsg                            // point-to-point: one message of Send
	frameHosts                          // root → every rank, after the table: the ranks in the root's process
)

func (t frameType) String() string {
	switch t {
	case frameHello:
		return "hello"
	case frameStatus:
		return "status"
	case frameTable:
		return "table"
	case frameRefuse:
		return "refuse"
	case frameLost:
		return "lost"
	case frameBye:
		return "bye"
	case frameRingHello:
		return "ring hello"
	case frameAccept:
		return "accept"
	case frameGather:
		return "gather"
	case frameBarrier:
		return "barrier"
	case frameQuery:
		return "query"
	case frameAsk:
		return "ask"
	case frameProgress:
		return "progress"
	case frameReport:
		return "report"
	case frameP2PHello:
		return "p2p hello"
	case frameMsg:
		return "message"
	case frameHosts:
		return "hosts"
	}
	return fmt.Sprintf("frame type %#x", uint8(t))
}

const (
	// maxBlobBytes is the largest blob AllGather moves.
	maxBlobBytes = 1 << 20
	// maxRanks bounds nranks so that a table frame fits maxTableLen.
	maxRanks = 1 << 15
	// maxMsgBytes is the largest blob Send moves.
	maxMsgBytes = 1 << 20
	// msgSlack is room beyond maxMsgBytes in a message frame for the
	// header of a Pair's call (pair.go), whose blobs may be maxBlobBytes.
	msgSlack = 16

	frameHeaderLen    = 5
	helloLen          = 32 + 4 + 4 + tcp.AddrLen
	gatherHeaderLen   = 8 + 4
	maxReasonLen      = 1024
	maxListedMissing  = 64
	maxTableLen       = 4 + maxRanks*tcp.AddrLen
	maxGatherFrameLen = gatherHeaderLen + maxBlobBytes
	progressLen       = 4 + 1 + 8 // rank, state, seq
	answerLen         = 4 + progressLen
	maxReportLen      = 4 + maxRanks*progressLen
	msgHeaderLen      = 4 // tag
	maxMsgFrameLen    = msgHeaderLen + maxMsgBytes + msgSlack
)

// maxPayload returns the largest payload a frame of type t may carry, and
// false for an unknown type. The largest (message) is 1 MiB plus 20 bytes.
func maxPayload(t frameType) (int, bool) {
	switch t {
	case frameHello, frameRingHello, frameP2PHello:
		return helloLen, true
	case frameStatus:
		return 4 + 4*maxListedMissing, true
	case frameTable:
		return maxTableLen, true
	case frameRefuse:
		return 1 + maxReasonLen, true
	case frameLost:
		return 4 + maxReasonLen, true
	case frameBye, frameAccept, frameQuery:
		return 0, true
	case frameAsk:
		return 4, true
	case frameProgress:
		return answerLen, true
	case frameReport:
		return maxReportLen, true
	case frameGather, frameBarrier:
		return maxGatherFrameLen, true
	case frameMsg:
		return maxMsgFrameLen, true
	case frameHosts:
		return 4 + 4*maxRanks, true
	}
	return 0, false
}

// errFrame marks a frame that is malformed: unknown type, oversized,
// truncated, or a payload that does not decode.
var errFrame = errors.New("malformed bootstrap frame")

// readFrame reads one frame from r. It returns io.EOF, unwrapped, when r
// ends cleanly before the frame's first byte; an error wrapping errFrame for
// an unknown type, an oversized length or a truncated frame (checked before
// the payload is allocated); r's error otherwise.
func readFrame(r io.Reader) (frameType, []byte, error) {
	return readFrameOf(r)
}

// readFrameOf is readFrame accepting only frames of the given types (any
// known type when none are given): another type is an errFrame, returned
// before its payload is read.
func readFrameOf(r io.Reader, types ...frameType) (frameType, []byte, error) {
	t, n, err := readHeaderOf(r, types...)
	if err != nil {
		return 0, nil, err
	}
	p, err := readPayload(r, t, n)
	if err != nil {
		return 0, nil, err
	}
	return t, p, nil
}

// readHeaderOf reads a frame's header, checked as readFrameOf checks it, and
// returns its type and payload length, at most maxPayload(type): a reader
// that bounds what it holds (p2p.go) checks the length before it allocates
// the payload (readPayload).
func readHeaderOf(r io.Reader, types ...frameType) (frameType, int, error) {
	var h [frameHeaderLen]byte
	if n, err := io.ReadFull(r, h[:]); err != nil {
		if n > 0 && errors.Is(err, io.ErrUnexpectedEOF) {
			return 0, 0, fmt.Errorf("%w: truncated header (%d of %d bytes)", errFrame, n, frameHeaderLen)
		}
		return 0, 0, err
	}
	t := frameType(h[0])
	max, ok := maxPayload(t)
	if !ok {
		return 0, 0, fmt.Errorf("%w: unknown %v", errFrame, t)
	}
	if len(types) > 0 && !slices.Contains(types, t) {
		return 0, 0, fmt.Errorf("%w: unexpected %v frame", errFrame, t)
	}
	n := binary.BigEndian.Uint32(h[1:])
	if n > uint32(max) {
		return 0, 0, fmt.Errorf("%w: %v payload of %d bytes exceeds %d", errFrame, t, n, max)
	}
	return t, int(n), nil
}

// readPayload reads the n-byte payload of a frame of type t whose header
// readHeaderOf read.
func readPayload(r io.Reader, t frameType, n int) ([]byte, error) {
	p := make([]byte, n)
	if got, err := io.ReadFull(r, p); err != nil {
		if errors.Is(err, io.EOF) || errors.Is(err, io.ErrUnexpectedEOF) {
			return nil, fmt.Errorf("%w: truncated %v payload (%d of %d bytes)", errFrame, t, got, n)
		}
		return nil, err
	}
	return p, nil
}

// writeFrame writes one frame of type t whose payload is the concatenation
// of parts, with one writev where w is a TCP connection. Writes to one
// connection must be serialized by the caller.
func writeFrame(w io.Writer, t frameType, parts ...[]byte) error {
	_, err := writeFrameN(w, t, parts...)
	return err
}

// writeFrameN is writeFrame, also returning how many bytes it wrote: a
// write that fails after its first byte leaves the connection amid a frame.
func writeFrameN(w io.Writer, t frameType, parts ...[]byte) (int64, error) {
	n := 0
	for _, p := range parts {
		n += len(p)
	}
	if max, ok := maxPayload(t); !ok || n > max {
		return 0, fmt.Errorf("%w: cannot send a %v payload of %d bytes", errFrame, t, n)
	}
	h := make([]byte, frameHeaderLen)
	h[0] = byte(t)
	binary.BigEndian.PutUint32(h[1:], uint32(n))
	bufs := append(net.Buffers{h}, parts...)
	return bufs.WriteTo(w)
}

// hello is a rank's introduction: to the root (frameHello), to its ring
// successor (frameRingHello), and to a rank it opens a point-to-point
// connection to (frameP2PHello).
type hello struct {
	secret [32]byte
	rank   uint32
	nranks uint32
	ring   netip.AddrPort // the sender's listener
}

// errWrongSecret is a hello whose secret is not the communicator's.
var errWrongSecret = errors.New("wrong secret")

// readHello reads the first frame of a connection that has not proved the
// secret yet, which must be a hello of type want (frameHello or
// frameRingHello), and compares its secret with secret, in constant time,
// before it looks at any other field. Nothing it allocates or waits for
// depends on what the peer sends: it reads the fixed-size header and refuses
// any other type or length before reading on, then exactly the fixed-size
// payload. Errors: errFrame (another type or length, or a truncated frame),
// errWrongSecret, io.EOF when the connection ends before the first byte, or
// r's error (a deadline).
func readHello(r io.Reader, want frameType, secret *[32]byte) (hello, error) {
	_, h, err := readHelloOf(r, secret, want)
	return h, err
}

// readHelloOf is readHello taking a hello of any of the types want (all of
// helloLen bytes), and returning which it was.
func readHelloOf(r io.Reader, secret *[32]byte, want ...frameType) (frameType, hello, error) {
	var buf [frameHeaderLen + helloLen]byte
	n, err := io.ReadFull(r, buf[:frameHeaderLen])
	if err != nil {
		if n > 0 && errors.Is(err, io.ErrUnexpectedEOF) {
			return 0, hello{}, fmt.Errorf("%w: truncated header (%d of %d bytes)", errFrame, n, frameHeaderLen)
		}
		return 0, hello{}, err
	}
	t := frameType(buf[0])
	if !slices.Contains(want, t) {
		return 0, hello{}, fmt.Errorf("%w: expected a %v, got a %v frame", errFrame, helloNames(want), t)
	}
	if n := binary.BigEndian.Uint32(buf[1:]); n != helloLen {
		return 0, hello{}, fmt.Errorf("%w: %v of %d bytes, want %d", errFrame, t, n, helloLen)
	}
	p := buf[frameHeaderLen:]
	if n, err := io.ReadFull(r, p); err != nil {
		if errors.Is(err, io.EOF) || errors.Is(err, io.ErrUnexpectedEOF) {
			return 0, hello{}, fmt.Errorf("%w: truncated %v (%d of %d bytes)", errFrame, t, n, helloLen)
		}
		return 0, hello{}, err
	}
	if subtle.ConstantTimeCompare(p[:len(secret)], secret[:]) != 1 {
		return 0, hello{}, errWrongSecret
	}
	h, err := decodeHello(p)
	return t, h, err
}

// helloNames names hello types for an error: "hello", "ring hello or p2p
// hello".
func helloNames(types []frameType) string {
	names := make([]string, len(types))
	for i, t := range types {
		names[i] = t.String()
	}
	return strings.Join(names, " or ")
}

func appendHello(b []byte, h hello) []byte {
	b = append(b, h.secret[:]...)
	b = binary.BigEndian.AppendUint32(b, h.rank)
	b = binary.BigEndian.AppendUint32(b, h.nranks)
	return tcp.AppendAddr(b, h.ring)
}

func decodeHello(p []byte) (hello, error) {
	var h hello
	if len(p) != helloLen {
		return h, fmt.Errorf("%w: hello of %d bytes, want %d", errFrame, len(p), helloLen)
	}
	copy(h.secret[:], p)
	h.rank = binary.BigEndian.Uint32(p[32:])
	h.nranks = binary.BigEndian.Uint32(p[36:])
	h.ring = tcp.DecodeAddr(p[40:])
	return h, nil
}

// status lists the ranks the root still waits for: missing in all, the
// first of them (at most maxListedMissing) listed.
type status struct {
	missing int
	listed  []int
}

func appendStatus(b []byte, s status) []byte {
	b = binary.BigEndian.AppendUint32(b, uint32(s.missing))
	for _, r := range s.listed {
		b = binary.BigEndian.AppendUint32(b, uint32(r))
	}
	return b
}

func decodeStatus(p []byte) (status, error) {
	if len(p) < 4 || len(p)%4 != 0 {
		return status{}, fmt.Errorf("%w: status of %d bytes", errFrame, len(p))
	}
	s := status{missing: int(binary.BigEndian.Uint32(p))}
	for p = p[4:]; len(p) > 0; p = p[4:] {
		s.listed = append(s.listed, int(binary.BigEndian.Uint32(p)))
	}
	if len(s.listed) > s.missing {
		return status{}, fmt.Errorf("%w: status lists %d of %d missing ranks", errFrame, len(s.listed), s.missing)
	}
	return s, nil
}

// String names the missing ranks, e.g. "[2 5]" or "[0 1 2 … and 100 more]".
func (s status) String() string {
	out := fmt.Sprint(s.listed)
	if more := s.missing - len(s.listed); more > 0 {
		out = fmt.Sprintf("%s … and %d more]", out[:len(out)-1], more)
	}
	return out
}

func appendTable(b []byte, addrs []netip.AddrPort) []byte {
	b = binary.BigEndian.AppendUint32(b, uint32(len(addrs)))
	for _, a := range addrs {
		b = tcp.AppendAddr(b, a)
	}
	return b
}

func decodeTable(p []byte) ([]netip.AddrPort, error) {
	if len(p) < 4 {
		return nil, fmt.Errorf("%w: table of %d bytes", errFrame, len(p))
	}
	n := int(binary.BigEndian.Uint32(p))
	if n > maxRanks || len(p) != 4+n*tcp.AddrLen {
		return nil, fmt.Errorf("%w: table of %d ranks in %d bytes", errFrame, n, len(p))
	}
	addrs := make([]netip.AddrPort, n)
	for i := range addrs {
		addrs[i] = tcp.DecodeAddr(p[4+i*tcp.AddrLen:])
	}
	return addrs, nil
}

// A refusal's code says which sentinel the refused connector's error wraps.
const (
	refuseInvalid  byte = 1 // errs.ErrInvalidArgument
	refusePeerLost byte = 2 // errs.ErrPeerLost: the communicator already lost a rank
	refuseCrossed  byte = 3 // errCrossed: the refuser connects to the connector itself (p2p.go)
)

func appendRefuse(b []byte, code byte, reason string) []byte {
	return append(append(b, code), truncateReason(reason)...)
}

func decodeRefuse(p []byte) (code byte, reason string, err error) {
	if len(p) < 1 || (p[0] != refuseInvalid && p[0] != refusePeerLost && p[0] != refuseCrossed) {
		return 0, "", fmt.Errorf("%w: refusal without a known code", errFrame)
	}
	return p[0], string(p[1:]), nil
}

func appendLost(b []byte, rank int, reason string) []byte {
	b = binary.BigEndian.AppendUint32(b, uint32(rank))
	return append(b, truncateReason(reason)...)
}

func decodeLost(p []byte) (rank int, reason string, err error) {
	if len(p) < 4 {
		return 0, "", fmt.Errorf("%w: lost frame of %d bytes", errFrame, len(p))
	}
	return int(binary.BigEndian.Uint32(p)), string(p[4:]), nil
}

func truncateReason(s string) string {
	if len(s) > maxReasonLen {
		return s[:maxReasonLen]
	}
	return s
}

// gatherHeader returns the header of a gather or barrier payload.
func gatherHeader(seq uint64, origin int) []byte {
	b := binary.BigEndian.AppendUint64(make([]byte, 0, gatherHeaderLen), seq)
	return binary.BigEndian.AppendUint32(b, uint32(origin))
}

func decodeGather(p []byte) (seq uint64, origin int, blob []byte, err error) {
	if len(p) < gatherHeaderLen {
		return 0, 0, nil, fmt.Errorf("%w: gather payload of %d bytes", errFrame, len(p))
	}
	return binary.BigEndian.Uint64(p), int(binary.BigEndian.Uint32(p[8:])), p[gatherHeaderLen:], nil
}

func appendProgress(b []byte, p Progress) []byte {
	b = binary.BigEndian.AppendUint32(b, uint32(p.Rank))
	b = append(b, byte(p.State))
	return binary.BigEndian.AppendUint64(b, p.Seq)
}

func decodeProgress(p []byte) (Progress, error) {
	if len(p) != progressLen || ProgressState(p[4]) >= numProgressStates {
		return Progress{}, fmt.Errorf("%w: progress of %d bytes", errFrame, len(p))
	}
	return Progress{Rank: int(binary.BigEndian.Uint32(p)), State: ProgressState(p[4]), Seq: binary.BigEndian.Uint64(p[5:])}, nil
}

// appendAnswer encodes a rank's answer to ask q.
func appendAnswer(b []byte, q uint32, p Progress) []byte {
	return appendProgress(binary.BigEndian.AppendUint32(b, q), p)
}

func decodeAnswer(p []byte) (q uint32, pr Progress, err error) {
	if len(p) != answerLen {
		return 0, Progress{}, fmt.Errorf("%w: answer of %d bytes", errFrame, len(p))
	}
	pr, err = decodeProgress(p[4:])
	return binary.BigEndian.Uint32(p), pr, err
}

func appendReport(b []byte, ps []Progress) []byte {
	b = binary.BigEndian.AppendUint32(b, uint32(len(ps)))
	for _, p := range ps {
		b = appendProgress(b, p)
	}
	return b
}

func decodeReport(p []byte) ([]Progress, error) {
	if len(p) < 4 {
		return nil, fmt.Errorf("%w: report of %d bytes", errFrame, len(p))
	}
	n := int(binary.BigEndian.Uint32(p))
	if n > maxRanks || len(p) != 4+n*progressLen {
		return nil, fmt.Errorf("%w: report of %d ranks in %d bytes", errFrame, n, len(p))
	}
	ps := make([]Progress, n)
	for i := range ps {
		var err error
		if ps[i], err = decodeProgress(p[4+i*progressLen : 4+(i+1)*progressLen]); err != nil {
			return nil, err
		}
	}
	return ps, nil
}

// msgHeader returns the header of a message payload.
func msgHeader(tag uint32) []byte {
	return binary.BigEndian.AppendUint32(make([]byte, 0, msgHeaderLen), tag)
}

func decodeMsg(p []byte) (tag uint32, blob []byte, err error) {
	if len(p) < msgHeaderLen {
		return 0, nil, fmt.Errorf("%w: message payload of %d bytes", errFrame, len(p))
	}
	return binary.BigEndian.Uint32(p), p[msgHeaderLen:], nil
}

// appendRanks encodes the increasing ranks of a hosts frame.
func appendRanks(b []byte, ranks []int) []byte {
	b = binary.BigEndian.AppendUint32(b, uint32(len(ranks)))
	for _, r := range ranks {
		b = binary.BigEndian.AppendUint32(b, uint32(r))
	}
	return b
}

func decodeRanks(p []byte) ([]int, error) {
	if len(p) < 4 {
		return nil, fmt.Errorf("%w: rank list of %d bytes", errFrame, len(p))
	}
	n := int(binary.BigEndian.Uint32(p))
	if n > maxRanks || len(p) != 4+4*n {
		return nil, fmt.Errorf("%w: rank list of %d ranks in %d bytes", errFrame, n, len(p))
	}
	ranks := make([]int, n)
	for i := range ranks {
		ranks[i] = int(binary.BigEndian.Uint32(p[4+4*i:]))
		if ranks[i] >= maxRanks || (i > 0 && ranks[i] <= ranks[i-1]) {
			return nil, fmt.Errorf("%w: rank list %v… not increasing below %d", errFrame, ranks[:i+1], maxRanks)
		}
	}
	return ranks, nil
}
