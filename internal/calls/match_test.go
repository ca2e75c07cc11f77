package calls

import (
	"testing"

	"github.com/ringo-ccl/ringo/internal/errs"
	"github.com/ringo-ccl/ringo/reduce"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

func sendMsg(peer int, n int64) Msg {
	return Msg{Send: true, Peer: peer, Count: n, Type: reduce.Float32}
}
func recvMsg(peer int, n int64) Msg { return Msg{Peer: peer, Count: n, Type: reduce.Float32} }

// TestMatcher: sends and receives pair in order per pair of ranks, across
// calls and whichever side comes first; the first pair of other sizes is
// an error naming both ranks and both sizes; ranks of other processes and
// the rank itself are not matched.
func TestMatcher(t *testing.T) {
	var m Matcher
	require.NoError(t, m.Match(0, []Msg{sendMsg(1, 10), sendMsg(1, 20), recvMsg(1, 5)}))
	require.NoError(t, m.Match(1, []Msg{recvMsg(0, 10)}))
	require.NoError(t, m.Match(1, []Msg{sendMsg(0, 5), recvMsg(0, 20), sendMsg(0, 7)}))
	require.NoError(t, m.Match(0, []Msg{recvMsg(1, 7), sendMsg(0, 3), recvMsg(0, 3)}))

	require.NoError(t, m.Match(2, []Msg{recvMsg(0, 100)}))
	err := m.Match(0, []Msg{sendMsg(2, 40)})
	require.ErrorIs(t, err, errs.ErrInvalidArgument)
	assert.Contains(t, err.Error(), "rank 0's send #1 to rank 2 is 160 bytes, and rank 2's receive that matches it takes 400")

	// Rank 3 lives in another process: nothing of its pairs is matched.
	m2 := NewMatcher([]bool{true, true, true, false})
	require.NoError(t, m2.Match(0, []Msg{sendMsg(3, 1)}))
	require.NoError(t, m2.Match(0, []Msg{sendMsg(1, 2)}))
	err = m2.Match(1, []Msg{recvMsg(0, 3)})
	assert.ErrorContains(t, err, "rank 0's send #1 to rank 1 is 8 bytes, and rank 1's receive that matches it takes 12")
}
