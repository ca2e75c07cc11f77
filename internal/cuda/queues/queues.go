// Package queues sets how many hardware work queues a CUDA context of this
// process gets, before any package starts CUDA: it has no dependencies of
// its own and sorts before gorgonia.org/cu, whose init calls cuInit, so Go
// initializes it first.
//
// A context maps its streams onto CUDA_DEVICE_MAX_CONNECTIONS hardware
// queues (8 unless set), round robin; streams that share a queue are
// ordered as one. Ranks of one process that share a GPU run kernels that
// wait for each other on streams of their own, so two of them on one queue
// — or a rank's and the stream of package cuda's synchronous copies — can wait for
// each other forever (seen: 8 ranks of the hierarchical variant on one
// H200 hung with 8 queues and passed with 32). Unless the environment sets
// it, this package sets the most the driver allows — in the GPU build only
// (set.go): a CPU build leaves the environment alone.
package queues

import (
	"os"
	"strconv"
)

// Variable is the environment variable CUDA reads.
const Variable = "CUDA_DEVICE_MAX_CONNECTIONS"

// Most is the largest value CUDA accepts, which ringo sets when the
// environment leaves it unset.
const Most = 32

// driverDefault is what CUDA uses when the variable is unset or unusable.
const driverDefault = 8

// Connections returns the hardware work queues a context of this process
// gets: the variable's value in [1, Most], else the driver's default.
func Connections() int {
	n, err := strconv.Atoi(os.Getenv(Variable))
	if err != nil || n < 1 {
		return driverDefault
	}
	return min(n, Most)
}
