package rdma

import (
	"errors"
	"testing"

	"github.com/ringo-ccl/ringo/ring"
	"github.com/ringo-ccl/ringo/transport"
)

func TestHeaderRoundTrip(t *testing.T) {
	for _, p := range []transport.Post{
		{Step: 0, Slots: 1},
		{Step: 1<<40 + 7, Skip: 1, Slots: 3, Bytes: 12345, Proto: uint8(ring.Simple)},
		{Step: 9, Slots: 1, Bytes: 8 * 63, Proto: uint8(ring.LL)},
		{Step: 1, Skip: 15, Slots: 2 * ring.NSteps},
	} {
		for _, h := range []header{
			{post: p, off: 4096},
			{post: p, off: 1<<32 - 1, sum: 0xdeadbeef, summed: true},
			{post: p, off: 64, summed: true}, // a checksum that happens to be 0
		} {
			var b [headerBytes]byte
			h.put(b[:])
			got, err := decodeHeader(b[:])
			if err != nil || got != h {
				t.Errorf("decode(encode(%+v)) = %+v, %v", h, got, err)
			}
		}
	}
}

func FuzzDecodeHeader(f *testing.F) {
	for _, h := range []header{
		{post: transport.Post{Step: 3, Slots: 2, Bytes: 100}, off: 512},
		{post: transport.Post{Step: 1 << 33, Skip: 1, Slots: 16, Bytes: 7, Proto: uint8(ring.LL)}, off: 64, sum: 0x1234, summed: true},
	} {
		var b [headerBytes]byte
		h.put(b[:])
		f.Add(b[:])
	}
	f.Fuzz(func(t *testing.T, in []byte) {
		if len(in) < headerBytes {
			return
		}
		h, err := decodeHeader(in)
		if err != nil {
			if !errors.Is(err, errHeader) {
				t.Fatalf("decode error %v does not wrap errHeader", err)
			}
			return
		}
		if !h.post.ShapeOK() || !h.summed && h.sum != 0 {
			t.Fatalf("% x decodes to %+v", in[:headerBytes], h)
		}
		// Anything that decodes re-encodes to the same bytes.
		var re [headerBytes]byte
		h.put(re[:])
		if string(re[:]) != string(in[:headerBytes]) {
			t.Fatalf("% x decodes to %+v, which encodes to % x", in[:headerBytes], h, re)
		}
	})
}
