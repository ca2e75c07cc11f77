package bench

import (
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/ringo-ccl/ringo"
)

// TestCollNames: every collective parses from its nccl-tests name, a ring
// collective from the library's too; "all" is the five ring collectives;
// an unknown name is an error listing the names.
func TestCollNames(t *testing.T) {
	for c := range numColls {
		got, err := ParseColls(c.String())
		require.NoError(t, err)
		assert.Equal(t, []Coll{c}, got)
		if r, ok := c.Ring(); ok {
			got, err := ParseColls(r.String())
			require.NoError(t, err)
			assert.Equal(t, []Coll{c}, got)
		}
	}
	got, err := ParseColls(" SendRecv,alltoall , gather,scatter,allreduce")
	require.NoError(t, err)
	assert.Equal(t, []Coll{SendRecv, AllToAll, Gather, Scatter, AllReduce}, got)
	got, err = ParseColls("all")
	require.NoError(t, err)
	assert.Equal(t, []Coll{AllReduce, ReduceScatter, AllGather, Broadcast, Reduce}, got)
	for _, c := range got {
		_, ok := c.Ring()
		assert.True(t, ok, "%v", c)
	}
	_, err = ParseColls("gather,all_to_all")
	require.ErrorContains(t, err, `unknown collective "all_to_all" (all_reduce, reduce_scatter, all_gather, broadcast, reduce, sendrecv, alltoall, gather, scatter, or all)`)
}

// TestCollDefinitions: nccl-tests' bus bandwidth factors, buffer sizes and
// which collectives reduce, have a root and run in place.
func TestCollDefinitions(t *testing.T) {
	for _, c := range []struct {
		coll                     Coll
		bus4                     float64 // BusFactor(4)
		in, out                  int64   // elems(10, 4)
		reduces, rooted, inPlace bool
	}{
		{AllReduce, 1.5, 10, 10, true, false, true},
		{ReduceScatter, 0.75, 40, 10, true, false, true},
		{AllGather, 0.75, 10, 40, false, false, true},
		{Broadcast, 1, 10, 10, false, true, true},
		{Reduce, 1, 10, 10, true, true, true},
		{SendRecv, 1, 10, 10, false, false, false},
		{AllToAll, 0.75, 40, 40, false, false, false},
		{Gather, 0.75, 10, 40, false, true, true},
		{Scatter, 0.75, 40, 10, false, true, true},
	} {
		assert.InDelta(t, c.bus4, c.coll.BusFactor(4), 1e-12, "%v", c.coll)
		in, out := c.coll.elems(10, 4)
		assert.Equal(t, [2]int64{c.in, c.out}, [2]int64{in, out}, "%v buffers", c.coll)
		assert.Equal(t, c.in != c.out || c.coll == AllToAll, c.coll.blocks(), "%v blocks", c.coll)
		assert.Equal(t, c.reduces, c.coll.Reduces(), "%v reduces", c.coll)
		assert.Equal(t, c.rooted, c.coll.Rooted(), "%v rooted", c.coll)
		assert.Equal(t, c.inPlace, c.coll.runsInPlace(), "%v in place", c.coll)
	}
	// One rank: no bus traffic, but sendrecv's factor is 1 whatever n.
	assert.Zero(t, AllToAll.BusFactor(1))
	assert.Equal(t, 1.0, SendRecv.BusFactor(1))
	assert.InDelta(t, 7.0/8, Scatter.BusFactor(8), 1e-12)
	// A point's bandwidths from its time: 4 MB in 2 µs·1000 on 4 ranks.
	p := Point{Bytes: 4e6, TimeUs: 2000}.WithTime(Gather, 4)
	assert.InDelta(t, 2.0, p.AlgBW, 1e-12)
	assert.InDelta(t, 1.5, p.BusBW, 1e-12)
	_, ok := SendRecv.Ring()
	assert.False(t, ok)
	r, ok := Broadcast.Ring()
	assert.True(t, ok)
	assert.Equal(t, ringo.CollBroadcast, r)
}
