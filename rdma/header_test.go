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
		{Step: 1, Skip: 15, Slots: 16},
	} {
		var b [headerBytes]byte
		putHeader(b[:], p, 4096)
		got, off, err := decodeHeader(b[:])
		if err != nil || got != p || off != 4096 {
			t.Errorf("decode(encode(%v)) = %v at %d, %v", p, got, off, err)
		}
	}
}

func FuzzDecodeHeader(f *testing.F) {
	var b [headerBytes]byte
	putHeader(b[:], transport.Post{Step: 3, Slots: 2, Bytes: 100}, 512)
	f.Add(b[:])
	f.Fuzz(func(t *testing.T, in []byte) {
		if len(in) < headerBytes {
			return
		}
		p, off, err := decodeHeader(in)
		if err != nil {
			if !errors.Is(err, errHeader) {
				t.Fatalf("decode error %v does not wrap errHeader", err)
			}
			return
		}
		// Anything that decodes re-encodes to the same bytes.
		var re [headerBytes]byte
		putHeader(re[:], p, off)
		if string(re[:]) != string(in[:headerBytes]) {
			t.Fatalf("% x decodes to %v at %d, which encodes to % x", in[:headerBytes], p, off, re)
		}
	})
}
