//go:build ibverbs

package rdma

import (
	"testing"

	"github.com/ringo-ccl/ringo/internal/verbs"
)

// TestStatusTextMatchesLibibverbs checks the fake's status strings against
// ibv_wc_status_str, which needs no device.
func TestStatusTextMatchesLibibverbs(t *testing.T) {
	for code := range statusText {
		if got, want := Status(code).String(), verbs.StatusString(code); got != want {
			t.Errorf("status %d: fake says %q, libibverbs %q", code, got, want)
		}
	}
}
