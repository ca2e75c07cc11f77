//go:build cuda

package queues

import (
	"os"
	"strconv"
)

func init() {
	if _, ok := os.LookupEnv(Variable); !ok {
		os.Setenv(Variable, strconv.Itoa(Most))
	}
}
