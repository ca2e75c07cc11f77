package verbs

import "testing"

func TestMTUBytes(t *testing.T) {
	for m, want := range map[MTU]int{MTU256: 256, MTU512: 512, MTU1024: 1024, MTU2048: 2048, MTU4096: 4096, 0: 0, 6: 0} {
		if got := m.Bytes(); got != want {
			t.Errorf("%d.Bytes() = %d, want %d", int(m), got, want)
		}
	}
}
