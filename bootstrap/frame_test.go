package bootstrap

import (
	"bytes"
	"encoding/binary"
	"errors"
	"io"
	"net/netip"
	"runtime"
	"strings"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// sampleFrames are one valid frame of every type.
func sampleFrames() map[frameType][]byte {
	h := hello{secret: testSecret(5), rank: 3, nranks: 8, ring: netip.MustParseAddrPort("10.1.2.3:4567")}
	return map[frameType][]byte{
		frameHello:     appendHello(nil, h),
		frameRingHello: appendHello(nil, hello{secret: testSecret(6), rank: 1, nranks: 2, ring: netip.MustParseAddrPort("[fd00::2]:80")}),
		frameStatus:    appendStatus(nil, status{missing: 3, listed: []int{0, 4, 7}}),
		frameTable:     appendTable(nil, []netip.AddrPort{loopbackPort(1), netip.MustParseAddrPort("[::1]:2")}),
		frameRefuse:    appendRefuse(nil, refuseInvalid, "wrong secret"),
		frameLost:      appendLost(nil, 2, "its bootstrap connection closed without Close"),
		frameBye:       nil,
		frameAccept:    nil,
		frameGather:    append(gatherHeader(9, 4), "blob"...),
		frameBarrier:   gatherHeader(10, 0),
		frameQuery:     nil,
		frameAsk:       {0, 0, 0, 7},
		frameProgress:  appendAnswer(nil, 7, Progress{Rank: 2, State: Inside, Seq: 41}),
		frameReport:    appendReport(nil, []Progress{{0, Finished, 41}, {1, Silent, 0}, {2, Inside, 42}, {3, Gone, 0}}),
		frameP2PHello:  appendHello(nil, hello{secret: testSecret(7), rank: 2, nranks: 3, ring: loopbackPort(7)}),
		frameMsg:       append(msgHeader(7), "blob"...),
		frameHosts:     appendRanks(nil, []int{0, 3}),
	}
}

func encodeFrame(t frameType, payload []byte) []byte {
	var buf bytes.Buffer
	if err := writeFrame(&buf, t, payload); err != nil {
		panic(err)
	}
	return buf.Bytes()
}

// reencodePayload decodes p as a payload of type t and encodes it again;
// ok is false when p does not decode.
func reencodePayload(t frameType, p []byte) (out []byte, ok bool) {
	switch t {
	case frameHello, frameRingHello, frameP2PHello:
		h, err := decodeHello(p)
		return appendHello(nil, h), err == nil
	case frameStatus:
		s, err := decodeStatus(p)
		return appendStatus(nil, s), err == nil
	case frameTable:
		a, err := decodeTable(p)
		return appendTable(nil, a), err == nil
	case frameRefuse:
		code, reason, err := decodeRefuse(p)
		return appendRefuse(nil, code, reason), err == nil
	case frameLost:
		rank, reason, err := decodeLost(p)
		return appendLost(nil, rank, reason), err == nil
	case frameGather, frameBarrier:
		seq, origin, blob, err := decodeGather(p)
		return append(gatherHeader(seq, origin), blob...), err == nil
	case frameProgress:
		q, pr, err := decodeAnswer(p)
		return appendAnswer(nil, q, pr), err == nil
	case frameReport:
		ps, err := decodeReport(p)
		return appendReport(nil, ps), err == nil
	case frameMsg:
		tag, blob, err := decodeMsg(p)
		return append(msgHeader(tag), blob...), err == nil
	case frameHosts:
		ranks, err := decodeRanks(p)
		return appendRanks(nil, ranks), err == nil
	}
	return p, true
}

func TestFrameRoundTrip(t *testing.T) {
	for typ, p := range sampleFrames() {
		wire := encodeFrame(typ, p)
		gt, gp, err := readFrame(bytes.NewReader(wire))
		if err != nil || gt != typ || !bytes.Equal(gp, p) {
			t.Fatalf("%v: read back %v %x %v", typ, gt, gp, err)
		}
		re, ok := reencodePayload(typ, gp)
		if !ok || !bytes.Equal(re, p) {
			t.Fatalf("%v: payload re-encodes to %x, want %x", typ, re, p)
		}
	}
	h, _ := decodeHello(sampleFrames()[frameHello])
	if h.rank != 3 || h.nranks != 8 || h.ring.String() != "10.1.2.3:4567" || h.secret != testSecret(5) {
		t.Fatalf("hello decoded as %+v", h)
	}
}

func TestReadFrameRejects(t *testing.T) {
	header := func(t byte, n uint32) []byte { return binary.BigEndian.AppendUint32([]byte{t}, n) }
	cases := []struct {
		name string
		in   []byte
		want string
	}{
		{"unknown type", header(0x47, 0), "unknown frame type 0x47"},
		{"type zero", header(0, 0), "unknown frame type 0x0"},
		{"oversized gather", header(byte(frameGather), maxGatherFrameLen+1), "exceeds"},
		{"oversized message", header(byte(frameMsg), maxMsgFrameLen+1), "message payload of 1048597 bytes exceeds 1048596"},
		{"oversized hello", header(byte(frameHello), helloLen+1), "exceeds"},
		{"huge", header(byte(frameTable), 1<<31), "exceeds"},
		{"bye with payload", append(header(byte(frameBye), 1), 0), "exceeds"},
		{"truncated header", []byte{byte(frameHello), 0, 0}, "truncated header"},
		{"truncated payload", append(header(byte(frameRefuse), 10), "abc"...), "truncated refuse payload (3 of 10 bytes)"},
	}
	for _, c := range cases {
		_, _, err := readFrame(bytes.NewReader(c.in))
		if !errors.Is(err, errFrame) || !strings.Contains(err.Error(), c.want) {
			t.Errorf("%s: %v, want an errFrame containing %q", c.name, err, c.want)
		}
	}
	if _, _, err := readFrame(bytes.NewReader(nil)); err != io.EOF {
		t.Errorf("empty stream: %v, want io.EOF", err)
	}
	if err := writeFrame(io.Discard, frameBye, []byte{1}); !errors.Is(err, errFrame) {
		t.Errorf("writing a bye with a payload: %v", err)
	}
}

func TestPayloadDecodersReject(t *testing.T) {
	if _, err := decodeHello(make([]byte, helloLen-1)); err == nil {
		t.Error("short hello accepted")
	}
	if _, err := decodeStatus(appendStatus(nil, status{missing: 1, listed: []int{1, 2}})); err == nil {
		t.Error("status listing more ranks than missing accepted")
	}
	if _, err := decodeStatus([]byte{0, 0, 0, 1, 0}); err == nil {
		t.Error("status of 5 bytes accepted")
	}
	if _, err := decodeTable(binary.BigEndian.AppendUint32(nil, 2)); err == nil {
		t.Error("table short of its addresses accepted")
	}
	if _, _, err := decodeRefuse([]byte{9, 'x'}); err == nil {
		t.Error("refusal with an unknown code accepted")
	}
	if _, _, err := decodeLost([]byte{0, 0}); err == nil {
		t.Error("lost frame of 2 bytes accepted")
	}
	if _, _, _, err := decodeGather(make([]byte, gatherHeaderLen-1)); err == nil {
		t.Error("short gather accepted")
	}
	if _, _, err := decodeMsg(make([]byte, msgHeaderLen-1)); err == nil {
		t.Error("message without its tag accepted")
	}
	if got := (status{missing: 70, listed: []int{1, 2}}).String(); got != "[1 2 … and 68 more]" {
		t.Errorf("status string %q", got)
	}
}

// FuzzDecodeFrame: readFrame never panics, and whatever it decodes (frame
// and payload) re-encodes to the bytes it consumed.
func FuzzDecodeFrame(f *testing.F) {
	for typ, p := range sampleFrames() {
		f.Add(encodeFrame(typ, p))
	}
	f.Add([]byte("GET / HTTP/1.0\r\n\r\n"))
	f.Add([]byte{byte(frameGather), 0xff, 0xff, 0xff, 0xff})
	f.Fuzz(func(t *testing.T, data []byte) {
		typ, p, err := readFrame(bytes.NewReader(data))
		if err != nil {
			return
		}
		consumed := data[:frameHeaderLen+len(p)]
		if got := encodeFrame(typ, p); !bytes.Equal(got, consumed) {
			t.Fatalf("%v frame re-encodes to %x, read from %x", typ, got, consumed)
		}
		if re, ok := reencodePayload(typ, p); ok && !bytes.Equal(re, p) {
			t.Fatalf("%v payload re-encodes to %x, decoded from %x", typ, re, p)
		}
	})
}

// FuzzDecodeHello: decodeHello never panics, and a decoded hello re-encodes
// to its input.
func FuzzDecodeHello(f *testing.F) {
	f.Add(sampleFrames()[frameHello])
	f.Add(sampleFrames()[frameRingHello])
	f.Add(make([]byte, helloLen))
	f.Fuzz(func(t *testing.T, p []byte) {
		h, err := decodeHello(p)
		if err != nil {
			return
		}
		if got := appendHello(nil, h); !bytes.Equal(got, p) {
			t.Fatalf("hello %+v re-encodes to %x, decoded from %x", h, got, p)
		}
	})
}

// TestReadHello: readHello takes exactly a hello of the wanted type with
// the secret, refuses anything else after reading no more than the header
// (or the fixed-size hello), and allocates nothing sized by the peer.
func TestReadHello(t *testing.T) {
	secret := testSecret(5)
	header := func(t frameType, n uint32) []byte { return binary.BigEndian.AppendUint32([]byte{byte(t)}, n) }
	good := sampleFrames()[frameHello] // secret testSecret(5), rank 3 of 8
	wrong := appendHello(nil, hello{secret: testSecret(6), rank: 3, nranks: 8, ring: loopbackPort(1)})
	cases := []struct {
		name   string
		in     []byte
		want   frameType
		err    error  // nil: the sample hello
		msg    string // in err's text
		unread int    // bytes left in the stream
	}{
		{"hello", append(header(frameHello, helloLen), append(good, "next"...)...), frameHello, nil, "", 4},
		{"ring hello", append(header(frameRingHello, helloLen), good...), frameRingHello, nil, "", 0},
		{"wrong secret", append(header(frameHello, helloLen), wrong...), frameHello, errWrongSecret, "wrong secret", 0},
		{"ring hello at the root", append(header(frameRingHello, helloLen), good...), frameHello, errFrame, "expected a hello, got a ring hello frame", helloLen},
		{"gather header", append(header(frameGather, maxGatherFrameLen), 0, 0), frameHello, errFrame, "got a gather frame", 2},
		{"unknown type", []byte("GET / HTTP/1.0\r\n\r\n"), frameHello, errFrame, "got a frame type 0x47 frame", 13},
		{"oversized", append(header(frameHello, 1<<30), good...), frameHello, errFrame, "hello of 1073741824 bytes, want 58", helloLen},
		{"short", append(header(frameHello, helloLen-1), good[:helloLen-1]...), frameHello, errFrame, "hello of 57 bytes", helloLen - 1},
		{"truncated header", header(frameHello, helloLen)[:3], frameHello, errFrame, "truncated header (3 of 5 bytes)", 0},
		{"truncated payload", append(header(frameHello, helloLen), good[:20]...), frameHello, errFrame, "truncated hello (20 of 58 bytes)", 0},
		{"empty", nil, frameHello, io.EOF, "EOF", 0},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			r := bytes.NewReader(c.in)
			h, err := readHello(r, c.want, &secret)
			assert.Equal(t, c.unread, r.Len(), "bytes left unread")
			if c.err == nil {
				require.NoError(t, err)
				assert.Equal(t, hello{secret: secret, rank: 3, nranks: 8, ring: netip.MustParseAddrPort("10.1.2.3:4567")}, h)
				return
			}
			require.ErrorIs(t, err, c.err)
			assert.Contains(t, err.Error(), c.msg)
		})
	}

	// A listener's: either of two types, and which it was.
	secret6 := testSecret(6)
	for _, typ := range []frameType{frameRingHello, frameP2PHello} {
		got, h, err := readHelloOf(bytes.NewReader(encodeFrame(typ, sampleFrames()[frameRingHello])), &secret6, frameRingHello, frameP2PHello)
		require.NoError(t, err)
		assert.Equal(t, typ, got)
		assert.Equal(t, uint32(1), h.rank)
	}
	_, _, err := readHelloOf(bytes.NewReader(encodeFrame(frameHello, good)), &secret, frameRingHello, frameP2PHello)
	require.ErrorIs(t, err, errFrame)
	assert.Contains(t, err.Error(), "expected a ring hello or p2p hello, got a hello frame")

	// What a refused header makes readHello allocate does not depend on the
	// length it names.
	gather := append(header(frameGather, maxGatherFrameLen), 0, 0)
	var before, after runtime.MemStats
	runtime.ReadMemStats(&before)
	for range 1000 {
		readHello(bytes.NewReader(gather), frameHello, &secret)
	}
	runtime.ReadMemStats(&after)
	assert.Less(t, after.TotalAlloc-before.TotalAlloc, uint64(1000*1024), "bytes allocated by 1000 refused gather headers")
}
