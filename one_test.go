package ringo_test

import (
	"context"
	"math/rand/v2"
	"net"
	"strconv"
	"testing"
	"time"

	"github.com/stretchr/testify/require"

	"github.com/ringo-ccl/ringo"
)

// A world of one: every constructor makes a communicator of one rank, and
// every collective, datatype and op, in and out of place, gives the
// one-rank results (the input, or PreMulSum's scaled input) bit for bit.
// torchrun and mpirun jobs of world size 1 are common (debugging, CI).
func TestWorldOfOne(t *testing.T) {
	ctx, cancel := context.WithTimeout(context.Background(), time.Minute)
	defer cancel()
	makers := map[string]func(t *testing.T) *ringo.Comm{
		"NewLocal": func(t *testing.T) *ringo.Comm {
			comms, err := ringo.NewLocal(1, nil)
			require.NoError(t, err)
			return comms[0]
		},
		"NewComm": func(t *testing.T) *ringo.Comm {
			id, err := ringo.NewUniqueID()
			require.NoError(t, err)
			c, err := ringo.NewComm(ctx, id, 1, 0, nil)
			require.NoError(t, err)
			return c
		},
		"NewCommFromEnv": func(t *testing.T) *ringo.Comm {
			t.Setenv("RINGO_RANK", "0")
			t.Setenv("RINGO_NRANKS", "1")
			t.Setenv("RINGO_COMM_ID", net.JoinHostPort("127.0.0.1", strconv.Itoa(freePort(t))))
			c, err := ringo.NewCommFromEnv(ctx, nil)
			require.NoError(t, err)
			return c
		},
	}
	for name, mk := range makers {
		t.Run(name, func(t *testing.T) {
			c := mk(t)
			t.Cleanup(func() { require.NoError(t, c.Close()) })
			require.Equal(t, 1, c.Size())
			everyTypeAndOp(t, []*ringo.Comm{c}, rand.New(rand.NewPCG(1, 1)))
		})
	}
}

// TestWorldOfOneScales: a one-rank PreMulSum multiplies every element by
// the scalar (NCCL's one-rank kernel does the same), in and out of place.
func TestWorldOfOneScales(t *testing.T) {
	c := newComms(t, 1, nil)[0]
	send := []float32{1, -2, 3.5, 0}
	out := make([]float32, len(send))
	require.NoError(t, ringo.AllReduce(bg, c, send, out, ringo.PreMul[float32](3)))
	require.Equal(t, []float32{3, -6, 10.5, 0}, out)
	require.NoError(t, ringo.Reduce(bg, c, out, out, ringo.PreMul[float32](0.5), 0))
	require.Equal(t, []float32{1.5, -3, 5.25, 0}, out)
	require.Equal(t, []float32{1, -2, 3.5, 0}, send, "the input is untouched")
}

// freePort returns a TCP port of the loopback interface that was free a
// moment ago.
func freePort(t testing.TB) int {
	t.Helper()
	l, err := net.Listen("tcp", "127.0.0.1:0")
	require.NoError(t, err)
	defer l.Close()
	return l.Addr().(*net.TCPAddr).Port
}
