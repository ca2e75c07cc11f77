package rdma

import (
	"fmt"

	"github.com/ringo-ccl/ringo/internal/errs"
)

// GIDType is a GID table entry's type.
type GIDType int

const (
	GIDTypeIB GIDType = iota
	GIDTypeRoCEv1
	GIDTypeRoCEv2
)

// GIDEntry is one populated entry of a port's GID table.
type GIDEntry struct {
	Index int
	GID   [16]byte
	Type  GIDType
}

func (e GIDEntry) zero() bool { return e.GID == [16]byte{} }

// ipv4Mapped reports whether the GID is an IPv4 address (::ffff:a.b.c.d),
// the form RoCEv2 routes over IPv4 networks.
func (e GIDEntry) ipv4Mapped() bool {
	for _, b := range e.GID[:10] {
		if b != 0 {
			return false
		}
	}
	return e.GID[10] == 0xff && e.GID[11] == 0xff
}

// PickGID chooses the GID a queue pair sources its packets from. want ≥ 0
// (NCCL_IB_GID_INDEX) must name a populated, non-zero entry. want < 0
// chooses as NCCL does by default: a RoCEv2 IPv4 GID, else any RoCEv2 GID,
// else the first non-zero one.
func PickGID(entries []GIDEntry, want int) (GIDEntry, error) {
	if want >= 0 {
		for _, e := range entries {
			if e.Index == want && !e.zero() {
				return e, nil
			}
		}
		return GIDEntry{}, fmt.Errorf("%w: NCCL_IB_GID_INDEX=%d: no such populated GID (%d entries)", errs.ErrInvalidArgument, want, len(entries))
	}
	pick := -1
	rank := func(e GIDEntry) int {
		switch {
		case e.zero():
			return 0
		case e.Type == GIDTypeRoCEv2 && e.ipv4Mapped():
			return 3
		case e.Type == GIDTypeRoCEv2:
			return 2
		}
		return 1
	}
	for i, e := range entries {
		if r := rank(e); r > 0 && (pick < 0 || r > rank(entries[pick])) {
			pick = i
		}
	}
	if pick < 0 {
		return GIDEntry{}, fmt.Errorf("no non-zero GID in the port's table (%d entries)", len(entries))
	}
	return entries[pick], nil
}
