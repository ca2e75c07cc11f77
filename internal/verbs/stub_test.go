//go:build !ibverbs

package verbs

import (
	"errors"
	"strings"
	"testing"

	"github.com/ringo-ccl/ringo/internal/errs"
)

func TestStubNotSupported(t *testing.T) {
	_, err := DeviceNames()
	if !errors.Is(err, errs.ErrNotSupported) || !strings.Contains(err.Error(), "built without the ibverbs tag") {
		t.Fatalf("DeviceNames in a build without ibverbs: %v", err)
	}
	if _, err := Open("mlx5_0"); !errors.Is(err, errs.ErrNotSupported) {
		t.Fatalf("Open: %v", err)
	}
}
