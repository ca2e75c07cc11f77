package calls

import (
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/ringo-ccl/ringo/bootstrap"
	"github.com/ringo-ccl/ringo/internal/errs"
	"github.com/ringo-ccl/ringo/reduce"
	"github.com/ringo-ccl/ringo/ring"
)

// TestRecordRoundTrip: what RINGO_CHECK exchanges reads back as the
// record, less what is not exchanged (its stream, whether it is done);
// another length is refused.
func TestRecordRoundTrip(t *testing.T) {
	rec := Record{Seq: 7, Coll: ring.Broadcast, Count: 1 << 40, Type: reduce.BF16, Op: reduce.OpKind(2), Root: 3,
		Done: true, Stream: Stream{GPU: 1, Handle: 0x10}}
	got, err := Decode(rec.Encode())
	require.NoError(t, err)
	want := rec
	want.Done, want.Stream = false, Stream{}
	assert.Equal(t, want, got)
	_, err = Decode(rec.Encode()[1:])
	assert.Error(t, err)
}

// TestMismatch: ranks disagreeing on a collective's shape are named; the
// op of a collective that does not reduce and the root of one without a
// root do not count.
func TestMismatch(t *testing.T) {
	a := Record{Seq: 1, Coll: ring.AllGather, Count: 8, Type: reduce.Float32, Op: 1, Root: 0}
	b := a
	b.Op, b.Root = 2, 5
	assert.NoError(t, a.Mismatch(0, b, 1))
	b.Count = 9
	err := a.Mismatch(0, b, 1)
	require.ErrorIs(t, err, errs.ErrInvalidArgument)
	assert.Contains(t, err.Error(), "collective #1 differs between ranks: rank 0 called")
}

// TestStallReport: ranks behind, inside, past, silent and gone are each
// named.
func TestStallReport(t *testing.T) {
	ps := []bootstrap.Progress{
		bootstrap.NewProgress(0, 4, false),
		bootstrap.NewProgress(1, 3, true),
		bootstrap.NewProgress(2, 5, true),
		{Rank: 3, State: bootstrap.Silent},
		{Rank: 4, State: bootstrap.Gone},
	}
	assert.Equal(t, "collective #4: ranks that never called it [1], ranks still inside it [0], ranks past it [2], ranks not answering [3], ranks gone [4] (rank 1 at #3)",
		StallReport(4, ps))
}
