package sys

import (
	"errors"
	"fmt"
	"os"
	"testing"
	"time"
)

// TestSegmentPrivate: a segment is readable and writable by its owner only,
// and a name that already exists (planted by anyone) is refused, not
// adopted.
func TestSegmentPrivate(t *testing.T) {
	name := fmt.Sprintf("ringo-systest-%d", time.Now().UnixNano())
	s, err := CreateSegment(name, 4096)
	if err != nil {
		t.Fatal(err)
	}
	defer Unlink(name)
	defer s.Close()
	st, err := os.Stat(ShmDir + "/" + name)
	if err != nil {
		t.Fatal(err)
	}
	if perm := st.Mode().Perm(); perm != 0o600 {
		t.Fatalf("segment mode %v, want -rw-------", perm)
	}
	if _, err := CreateSegment(name, 4096); !errors.Is(err, os.ErrExist) {
		t.Fatalf("creating over an existing segment: %v, want it refused", err)
	}
}
