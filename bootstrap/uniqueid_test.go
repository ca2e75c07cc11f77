package bootstrap

import (
	"encoding/binary"
	"encoding/hex"
	"errors"
	"hash/crc32"
	"net/netip"
	"strings"
	"testing"

	"github.com/ringo-ccl/ringo/internal/errs"
)

func sampleID() UniqueID {
	return newUniqueID(netip.MustParseAddrPort("10.0.0.1:4242"), testSecret(1))
}

// reseal recomputes id's checksum after a deliberate edit.
func reseal(id UniqueID) UniqueID {
	binary.BigEndian.PutUint32(id[idOffCRC:], crc32.ChecksumIEEE(id[:idOffCRC]))
	return id
}

func TestUniqueIDRoundTrip(t *testing.T) {
	for _, a := range []string{"10.0.0.1:4242", "[fd00::2]:29500", "127.0.0.1:1"} {
		id := newUniqueID(netip.MustParseAddrPort(a), testSecret(2))
		if id.Addr() != a {
			t.Errorf("Addr %q, want %q", id.Addr(), a)
		}
		s := id.String()
		if len(s) != 2*UniqueIDBytes {
			t.Fatalf("String is %d characters", len(s))
		}
		back, err := UniqueIDFromString(" " + s + "\n")
		if err != nil || back != id {
			t.Fatalf("%s: round trip gave %v, %v", a, back.Addr(), err)
		}
		if back.secret() != testSecret(2) {
			t.Fatal("secret lost in the round trip")
		}
	}
	if _, err := UniqueIDFromString("zz"); !errors.Is(err, errs.ErrInvalidArgument) || !strings.Contains(err.Error(), "not hex") {
		t.Fatalf("non-hex string: %v", err)
	}
}

func TestParseUniqueIDTruncated(t *testing.T) {
	id := sampleID()
	_, err := ParseUniqueID(id[:100])
	if !errors.Is(err, errs.ErrInvalidArgument) || !strings.Contains(err.Error(), "length 100 bytes, want 128") {
		t.Fatalf("%v, want a length error", err)
	}
}

func TestParseUniqueIDChecksum(t *testing.T) {
	for _, off := range []int{idOffPort, idOffIP + 1, idOffSecret + 7, 100, idOffCRC} {
		id := sampleID()
		id[off] ^= 0x10
		_, err := ParseUniqueID(id[:])
		if !errors.Is(err, errs.ErrInvalidArgument) || !strings.Contains(err.Error(), "checksum") {
			t.Fatalf("byte %d flipped: %v, want a checksum error", off, err)
		}
	}
}

func TestParseUniqueIDMagic(t *testing.T) {
	id := sampleID()
	copy(id[:], "NCCL")
	_, err := ParseUniqueID(id[:])
	if !errors.Is(err, errs.ErrInvalidArgument) || !strings.Contains(err.Error(), "magic") {
		t.Fatalf("%v, want a magic error", err)
	}
}

func TestParseUniqueIDVersionAndAddress(t *testing.T) {
	cases := []struct {
		name string
		edit func(id *UniqueID)
		want string
	}{
		{"version", func(id *UniqueID) { id[4] = 2 }, "version 2"},
		{"family", func(id *UniqueID) { id[idOffFamily] = 9 }, "address: unknown address family 9"},
		{"padding", func(id *UniqueID) { id[idOffIP+5] = 1 }, "nonzero padding"},
		{"port 0", func(id *UniqueID) { id[idOffPort], id[idOffPort+1] = 0, 0 }, "cannot be dialed"},
		{"reserved", func(id *UniqueID) { id[60] = 1 }, "reserved"},
	}
	for _, c := range cases {
		id := sampleID()
		c.edit(&id)
		id = reseal(id)
		_, err := ParseUniqueID(id[:])
		if !errors.Is(err, errs.ErrInvalidArgument) || !strings.Contains(err.Error(), c.want) {
			t.Errorf("%s: %v, want an error containing %q", c.name, err, c.want)
		}
	}
	var zero UniqueID
	if _, err := ParseUniqueID(zero[:]); err == nil {
		t.Error("the zero ID parsed")
	}
}

func TestTag(t *testing.T) {
	a := sampleID()
	b := newUniqueID(netip.MustParseAddrPort("10.9.9.9:1"), testSecret(1))
	c := newUniqueID(netip.MustParseAddrPort("10.0.0.1:4242"), testSecret(3))
	if len(a.Tag()) != 16 {
		t.Fatalf("tag %q is not 16 characters", a.Tag())
	}
	if _, err := hex.DecodeString(a.Tag()); err != nil {
		t.Fatalf("tag %q is not hex", a.Tag())
	}
	if a.Tag() != b.Tag() {
		t.Error("the tag depends on more than the secret")
	}
	if a.Tag() == c.Tag() {
		t.Error("different secrets give the same tag")
	}
	s := a.secret()
	if strings.Contains(hex.EncodeToString(s[:]), a.Tag()) {
		t.Error("the tag is a piece of the secret")
	}
}

// FuzzParseUniqueID: ParseUniqueID never panics, and what it accepts is
// the ID of its own address and secret.
func FuzzParseUniqueID(f *testing.F) {
	id := sampleID()
	f.Add(id[:])
	f.Add(id[:100])
	f.Fuzz(func(t *testing.T, b []byte) {
		id, err := ParseUniqueID(b)
		if err != nil {
			return
		}
		a, err := id.addrPort()
		if err != nil {
			t.Fatal(err)
		}
		if newUniqueID(a, id.secret()) != id {
			t.Fatalf("accepted %x, which is not the ID of %v", b, a)
		}
	})
}
