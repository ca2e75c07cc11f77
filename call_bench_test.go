package ringo_test

import (
	"context"
	"fmt"
	"testing"

	"github.com/stretchr/testify/require"

	"github.com/ringo-ccl/ringo"
)

// BenchmarkHostCall measures what an 8-byte float all-reduce costs on the
// host beyond its data: for a world of one, the call's checks, its entry
// into the group and exit, and the copy; for two ranks of the processes'
// kind (here goroutines of this process), the board's one exchange
// besides. Each rank runs b.N calls; ns/op is per call.
func BenchmarkHostCall(b *testing.B) {
	for _, n := range []int{1, 2} {
		b.Run(fmt.Sprintf("ranks=%d", n), func(b *testing.B) {
			ctx := context.Background()
			comms := procsKind(b, ctx, n)
			defer func() { noErrors(b, each(comms, func(_ int, c *ringo.Comm) error { return c.Close() })) }()
			in, out := []float32{1, 2}, make([]float32, 2)
			b.ReportAllocs()
			b.ResetTimer()
			noErrors(b, each(comms, func(r int, c *ringo.Comm) error {
				in, out := in, out
				if r > 0 {
					in, out = []float32{1, 2}, make([]float32, 2)
				}
				for range b.N {
					if err := ringo.AllReduce(ctx, c, in, out, ringo.OpSum); err != nil {
						return err
					}
				}
				return nil
			}))
			b.StopTimer()
			require.Equal(b, []float32{float32(n), 2 * float32(n)}, out)
		})
	}
}
