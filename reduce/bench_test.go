package reduce

import (
	"math/rand/v2"
	"testing"
)

// BenchmarkReduce measures Reduce (dst = acc ⊕ pre(in), out of place) on
// 64 KiB slices of moderate random values, for every datatype and operator.
// The reported rate counts the 64 KiB of dst per call; each call also reads
// twice as much.
func BenchmarkReduce(b *testing.B) {
	const bytes = 64 << 10
	r := rand.New(rand.NewPCG(9, 10))
	for dt := range NumTypes {
		n := bytes / dt.Size()
		acc, in, dst := randBuf(r, dt, n, false), randBuf(r, dt, n, false), randBuf(r, dt, n, false)
		for kind := range numOpKinds {
			b.Run(dt.String()+"/"+kind.String(), func(b *testing.B) {
				op := randOp(b, dt, kind, r, false)
				f, err := New(dt, op, 4)
				if err != nil {
					b.Fatal(err)
				}
				b.SetBytes(bytes)
				for b.Loop() {
					f.Reduce(dst, acc, in)
				}
			})
		}
	}
}
