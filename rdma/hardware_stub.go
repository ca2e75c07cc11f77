//go:build !ibverbs

package rdma

import (
	"fmt"

	"github.com/ringo-ccl/ringo/internal/errs"
)

// Hardware returns the provider of this machine's RDMA devices; this build
// has none (it lacks the ibverbs tag).
func Hardware() (Provider, error) {
	return nil, fmt.Errorf("%w: rdma: built without the ibverbs tag", errs.ErrNotSupported)
}
