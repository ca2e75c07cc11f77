package bootstrap

import (
	"bytes"
	"crypto/sha256"
	"encoding/binary"
	"encoding/hex"
	"fmt"
	"hash/crc32"
	"net/netip"
	"strings"

	"github.com/ringo-ccl/ringo/internal/errs"
)

// UniqueIDBytes is the size of a UniqueID, NCCL's NCCL_UNIQUE_ID_BYTES.
const UniqueIDBytes = 128

// UniqueID names one communicator: the root's TCP address and a random
// secret. It is a plain value, safe to copy and to share; whoever holds it
// can join the communicator, so hand it only to the communicator's ranks.
//
// Layout (integers big endian, unused bytes zero):
//
//	[0:4]     magic "RNGO"
//	[4]       version (1)
//	[5]       address family: 4 (IPv4, in [8:12]) or 6 (IPv6, in [8:24])
//	[6:8]     the root's port
//	[8:24]    the root's IP
//	[24:56]   secret, 256 bits
//	[56:124]  reserved, zero
//	[124:128] CRC-32 (IEEE) of [0:124]
type UniqueID [UniqueIDBytes]byte

const (
	idMagic     = "RNGO"
	idVersion   = 1
	idOffFamily = 5
	idOffPort   = 6
	idOffIP     = 8
	idOffSecret = 24
	idOffCRC    = UniqueIDBytes - 4
)

// newUniqueID encodes the ID of the root at a with secret.
func newUniqueID(a netip.AddrPort, secret [32]byte) UniqueID {
	var id UniqueID
	copy(id[:], idMagic)
	id[4] = idVersion
	ip := a.Addr().Unmap()
	if ip.Is4() {
		id[idOffFamily] = 4
		b := ip.As4()
		copy(id[idOffIP:], b[:])
	} else {
		id[idOffFamily] = 6
		b := ip.As16()
		copy(id[idOffIP:], b[:])
	}
	binary.BigEndian.PutUint16(id[idOffPort:], a.Port())
	copy(id[idOffSecret:], secret[:])
	binary.BigEndian.PutUint32(id[idOffCRC:], crc32.ChecksumIEEE(id[:idOffCRC]))
	return id
}

// ParseUniqueID decodes b, which must be exactly UniqueIDBytes long, and
// checks its magic, version, checksum and address. Every failure wraps
// errs.ErrInvalidArgument and says what is wrong.
func ParseUniqueID(b []byte) (UniqueID, error) {
	var id UniqueID
	bad := func(format string, a ...any) (UniqueID, error) {
		return UniqueID{}, fmt.Errorf("unique ID: %s: %w", fmt.Sprintf(format, a...), errs.ErrInvalidArgument)
	}
	if len(b) != UniqueIDBytes {
		return bad("length %d bytes, want %d", len(b), UniqueIDBytes)
	}
	copy(id[:], b)
	if string(id[:4]) != idMagic {
		return bad("bad magic %q, want %q (not a ringo ID?)", id[:4], idMagic)
	}
	if id[4] != idVersion {
		return bad("version %d, this build reads version %d", id[4], idVersion)
	}
	if got, want := binary.BigEndian.Uint32(id[idOffCRC:]), crc32.ChecksumIEEE(id[:idOffCRC]); got != want {
		return bad("checksum %08x does not match its contents (%08x): corrupted", got, want)
	}
	if !allZero(id[idOffSecret+32 : idOffCRC]) {
		return bad("reserved bytes are not zero")
	}
	a, err := id.addrPort()
	if err != nil {
		return bad("address: %v", err)
	}
	if a.Port() == 0 || a.Addr().IsUnspecified() {
		return bad("address %v cannot be dialed", a)
	}
	return id, nil
}

// addrPort decodes the root's address.
func (id UniqueID) addrPort() (netip.AddrPort, error) {
	port := binary.BigEndian.Uint16(id[idOffPort:])
	switch id[idOffFamily] {
	case 4:
		if !allZero(id[idOffIP+4 : idOffSecret]) {
			return netip.AddrPort{}, fmt.Errorf("IPv4 address with nonzero padding")
		}
		return netip.AddrPortFrom(netip.AddrFrom4([4]byte(id[idOffIP:])), port), nil
	case 6:
		ip := netip.AddrFrom16([16]byte(id[idOffIP:]))
		if ip.Is4In6() {
			return netip.AddrPort{}, fmt.Errorf("IPv4-mapped address %v under family 6", ip)
		}
		return netip.AddrPortFrom(ip, port), nil
	}
	return netip.AddrPort{}, fmt.Errorf("unknown address family %d", id[idOffFamily])
}

// Addr returns the root's "host:port" ("[v6]:port" for IPv6), or "" for an
// ID that ParseUniqueID would refuse for its address.
func (id UniqueID) Addr() string {
	a, err := id.addrPort()
	if err != nil {
		return ""
	}
	return a.String()
}

func (id UniqueID) secret() [32]byte { return [32]byte(id[idOffSecret:]) }

// Tag returns 16 hex characters derived from the secret by a one-way hash,
// for naming things of this communicator (its /dev/shm segments). It does
// not reveal the secret; the ranks of a JoinLaunch job agree on it even when
// they resolve the root's host name differently.
func (id UniqueID) Tag() string {
	s := id.secret()
	h := sha256.Sum256(append([]byte("ringo tag\x00"), s[:]...))
	return hex.EncodeToString(h[:8])
}

// String returns the hex encoding of all UniqueIDBytes bytes.
func (id UniqueID) String() string { return hex.EncodeToString(id[:]) }

// UniqueIDFromString is the inverse of String (surrounding white space is
// ignored), followed by ParseUniqueID. Failures wrap errs.ErrInvalidArgument.
func UniqueIDFromString(s string) (UniqueID, error) {
	b, err := hex.DecodeString(strings.TrimSpace(s))
	if err != nil {
		return UniqueID{}, fmt.Errorf("unique ID: not hex: %v: %w", err, errs.ErrInvalidArgument)
	}
	return ParseUniqueID(b)
}

func allZero(b []byte) bool { return len(bytes.Trim(b, "\x00")) == 0 }
