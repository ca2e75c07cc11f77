package mem

import "testing"

func TestAlloc(t *testing.T) {
	for _, align := range []int{1, 8, 64, 128, 4096} {
		for _, n := range []int{0, 1, 100, 5000} {
			b := Alloc(n, align)
			if len(b) != n || !Aligned(b, align) {
				t.Fatalf("Alloc(%d, %d): len %d aligned %v", n, align, len(b), Aligned(b, align))
			}
		}
	}
}

func TestViews(t *testing.T) {
	f := []float32{1, 2, 3}
	b := Bytes(f)
	if len(b) != 12 {
		t.Fatalf("Bytes: %d bytes", len(b))
	}
	back := Slice[float32](b)
	back[1] = 7
	if f[1] != 7 {
		t.Fatal("views must share memory")
	}
	if !Same(b, Bytes(f)) || Same(b[4:], b) || Same(nil, b) {
		t.Fatal("Same is wrong")
	}
	if !Overlap(b[:8], b[4:]) || Overlap(b[:4], b[4:]) || Overlap(nil, b) {
		t.Fatal("Overlap is wrong")
	}
	mustPanic(t, "misaligned", func() { Slice[float32](b[1:5]) })
	mustPanic(t, "partial element", func() { Slice[float32](b[:6]) })
	mustPanic(t, "misaligned word", func() { Word(Alloc(16, 8), 4) })
}

func mustPanic(t *testing.T, name string, f func()) {
	t.Helper()
	defer func() {
		if recover() == nil {
			t.Errorf("%s: no panic", name)
		}
	}()
	f()
}
