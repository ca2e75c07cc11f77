package bench

import (
	"bytes"
	"context"
	"fmt"
	"strings"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/ringo-ccl/ringo"
)

// p2pColls are the point-to-point collectives.
var p2pColls = []Coll{SendRecv, AllToAll, Gather, Scatter}

// TestP2PSweepIsCorrect runs the point-to-point collectives on 1, 2 and 4
// ranks, every datatype, shifted buffers and a root other than 0: the
// harness's checks find nothing wrong, out of place and — gather and
// scatter — in place; sendrecv's and alltoall's in-place halves are not
// run. An op sweep gives one row per size, its op "none".
func TestP2PSweepIsCorrect(t *testing.T) {
	for _, n := range []int{1, 2, 4} {
		t.Run(fmt.Sprint(n), func(t *testing.T) {
			o := Defaults()
			o.Colls = p2pColls
			o.Types, _ = ParseTypes("all")
			o.Ops, _ = ParseOps("all")
			o.MinBytes, o.MaxBytes, o.StepFactor = 8, 32<<10, 64
			o.Iters, o.Warmup, o.Root, o.Unalign = 2, 1, n-1, 1
			rows := runAll(t, n, o)
			require.Len(t, rows[0], len(p2pColls)*12*3) // sizes 8, 512 and 32768
			for _, r := range rows[0] {
				assert.Zero(t, r.OutOfPlace.Wrong, "%+v", r)
				assert.Positive(t, r.OutOfPlace.TimeUs, "%+v", r)
				assert.Equal(t, "none", r.Op)
				switch r.Coll {
				case "sendrecv", "alltoall":
					assert.Equal(t, notRun, r.InPlace, "%+v", r)
					assert.Equal(t, -1, r.Root)
				default:
					assert.Zero(t, r.InPlace.Wrong, "%+v", r)
					assert.Equal(t, n-1, r.Root)
				}
			}
			for r := 1; r < n; r++ {
				assert.Equal(t, len(rows[0]), len(rows[r]))
			}
			var buf bytes.Buffer
			for _, r := range rows[0] {
				WriteRow(&buf, r)
			}
			assert.True(t, WriteFooter(&buf, rows[0]), buf.String())
		})
	}
}

// TestP2PCheckFindsCorruption: one element off in rank 1's output — a
// received one, or, at a gather's other ranks, one the call must leave
// alone — is counted there and nowhere else, out of place and in place.
func TestP2PCheckFindsCorruption(t *testing.T) {
	const n, count, bad = 3, 8, 3
	for _, coll := range p2pColls {
		for _, inPlace := range []bool{false, true} {
			if inPlace && !coll.runsInPlace() {
				continue
			}
			for _, dt := range []ringo.DataType{ringo.TypeFloat32, ringo.TypeFloat8E4M3, ringo.TypeInt64} {
				name := fmt.Sprintf("%v %v in place %v", coll, dt, inPlace)
				wrong := make([]int64, n)
				eachLocalRank(t, n, func(r int, c *ringo.Comm) error {
					o := Defaults()
					o.Root = 2 // rank 1 is not the root
					h := newHostTarget(context.Background(), c, 1024)
					rr := newRankRun(context.Background(), c, c, h, &o)
					rr.do = func(l *layout) error {
						if err := h.run(l); err != nil {
							return err
						}
						if r == 1 {
							h.bufs[l.outBuf][l.outOff+bad*int64(dt.Size())] ^= 0x40
						}
						return nil
					}
					op, err := rr.op(dt, o.Ops[0])
					if err != nil {
						return err
					}
					l := rr.layout(coll, dt, op, count, inPlace)
					wrong[r], err = rr.check(&l, o.Ops[0], 1, new(errSums))
					return err
				})
				assert.Equal(t, []int64{0, 1, 0}, wrong, name)
			}
		}
	}
}

// TestP2PRunAllocatesAsTheLibrary: the harness's call of a point-to-point
// collective, made once per layout, allocates nothing beyond what the
// library's call itself does.
func TestP2PRunAllocatesAsTheLibrary(t *testing.T) {
	comms, err := ringo.NewLocal(1, nil)
	require.NoError(t, err)
	defer comms[0].Close()
	c := comms[0]
	o := Defaults()
	h := newHostTarget(context.Background(), c, 4096)
	rr := newRankRun(context.Background(), c, c, h, &o)
	send, recv := make([]float32, 64), make([]float32, 64)
	ops := []ringo.P2POp{ringo.SendOp(c, send, 0), ringo.RecvOp(c, recv, 0)}
	for _, x := range []struct {
		coll   Coll
		direct func() error
	}{
		{SendRecv, func() error { return ringo.SendRecv(context.Background(), ops...) }},
		{AllToAll, func() error { return ringo.AllToAll(context.Background(), c, send, recv) }},
		{Gather, func() error { return ringo.Gather(context.Background(), c, send, recv, 0) }},
		{Scatter, func() error { return ringo.Scatter(context.Background(), c, send, recv, 0) }},
	} {
		l := rr.layout(x.coll, ringo.TypeFloat32, ringo.OpSum, 64, false)
		require.NotNil(t, l.p2p, "%v", x.coll)
		direct := testing.AllocsPerRun(50, func() { require.NoError(t, x.direct()) })
		harness := testing.AllocsPerRun(50, func() { require.NoError(t, h.run(&l)) })
		assert.Equal(t, direct, harness, "%v: allocations per call, the library's and the harness's", x.coll)
	}
}

// TestNotRunRoundTrip: a measure not run prints N/A throughout, parses
// back as not run, and counts in neither the footer's errors nor its
// average bandwidth.
func TestNotRunRoundTrip(t *testing.T) {
	r := Row{Bytes: 1024, Count: 256, Type: "float", Op: "none", Root: -1, InPlace: notRun,
		OutOfPlace: Measure{TimeUs: 10, AlgBW: 0.1, BusBW: 0.1, Wrong: 0, RelErr: -1}}
	var buf bytes.Buffer
	WriteRow(&buf, r)
	require.Equal(t, 4, strings.Count(buf.String(), "N/A"), buf.String())
	rows, err := ParseTable(&buf)
	require.NoError(t, err)
	require.Len(t, rows, 1)
	assert.False(t, rows[0].InPlace.Ran())
	assert.True(t, rows[0].OutOfPlace.Ran())
	buf.Reset()
	assert.True(t, WriteFooter(&buf, []Row{r}))
	assert.Contains(t, buf.String(), "# Avg bus bandwidth    : 0.1\n")
	buf.Reset()
	require.Equal(t, 1, WriteTimeComparison(&buf, "a", "b", rows, rows))
	assert.Contains(t, buf.String(), "\n          1024          10.00          10.00            N/A            N/A         0.10         0.10\n")
}
