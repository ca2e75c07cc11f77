package rdma

import (
	"errors"
	"testing"

	"github.com/ringo-ccl/ringo/internal/errs"
)

func TestPickGID(t *testing.T) {
	linkLocal := [16]byte{0xfe, 0x80, 15: 1}
	v4 := [16]byte{10: 0xff, 11: 0xff, 12: 10, 13: 0, 14: 0, 15: 7}
	v6 := [16]byte{0x20, 0x01, 15: 9}
	table := []GIDEntry{
		{Index: 0, GID: linkLocal, Type: GIDTypeRoCEv1},
		{Index: 1, GID: linkLocal, Type: GIDTypeRoCEv2},
		{Index: 2, GID: v4, Type: GIDTypeRoCEv1},
		{Index: 3, GID: v4, Type: GIDTypeRoCEv2},
		{Index: 4, GID: v6, Type: GIDTypeRoCEv2},
		{Index: 5, Type: GIDTypeRoCEv2}, // zero
	}
	for _, c := range []struct {
		name    string
		entries []GIDEntry
		want    int
		index   int
		err     bool
	}{
		{"RoCEv2 IPv4 first", table, -1, 3, false},
		{"RoCEv2 when no IPv4", []GIDEntry{table[0], table[1], table[4]}, -1, 1, false},
		{"first non-zero otherwise", []GIDEntry{{Index: 0}, table[0], table[2]}, -1, 0, false},
		{"IB", []GIDEntry{{Index: 0, GID: linkLocal, Type: GIDTypeIB}}, -1, 0, false},
		{"explicit", table, 2, 2, false},
		{"explicit zero entry", table, 5, 0, true},
		{"explicit missing", table, 9, 0, true},
		{"empty table", nil, -1, 0, true},
	} {
		got, err := PickGID(c.entries, c.want)
		if c.err {
			if err == nil {
				t.Errorf("%s: PickGID = %+v, want an error", c.name, got)
			}
			if c.want >= 0 && !errors.Is(err, errs.ErrInvalidArgument) {
				t.Errorf("%s: %v does not wrap ErrInvalidArgument", c.name, err)
			}
			continue
		}
		if err != nil || got.Index != c.index {
			t.Errorf("%s: PickGID = %+v, %v; want index %d", c.name, got, err, c.index)
		}
	}
}
