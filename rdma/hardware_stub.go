//go:build !ibverbs

package rdma

import (
	"fmt"

	"github.com/ringo-ccl/ringo/internal/errs"
)

func hardware() (Provider, error) {
	return nil, fmt.Errorf("%w: rdma: built without the ibverbs tag", errs.ErrNotSupported)
}
