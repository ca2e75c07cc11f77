package mem

import "testing"

func TestOffset(t *testing.T) {
	base := make([]byte, 64)
	other := make([]byte, 8)
	cases := []struct {
		name string
		sub  []byte
		off  int
		ok   bool
	}{
		{"whole", base, 0, true},
		{"middle", base[10:20], 10, true},
		{"tail", base[60:], 60, true},
		{"empty inside", base[5:5], 5, true},
		{"nil", nil, 0, false},
		{"elsewhere", other, 0, false},
		{"past end via cap", base[60:64:64][:4], 60, true},
	}
	for _, c := range cases {
		off, ok := Offset(base, c.sub)
		if ok != c.ok || (ok && off != c.off) {
			t.Errorf("%s: Offset = %d, %v; want %d, %v", c.name, off, ok, c.off, c.ok)
		}
	}
	// A slice that starts inside base but extends past it is not inside.
	big := make([]byte, 128)
	if _, ok := Offset(big[:64], big[32:96]); ok {
		t.Errorf("a slice running past base's end is reported inside")
	}
	if Addr(nil) != 0 || Addr(base) == 0 {
		t.Errorf("Addr: nil → %#x, base → %#x", Addr(nil), Addr(base))
	}
}
