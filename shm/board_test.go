package shm

import (
	"context"
	"fmt"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/ringo-ccl/ringo/internal/errs"
	"github.com/ringo-ccl/ringo/transport"
	"github.com/ringo-ccl/ringo/transport/exchangetest"
)

// boards makes n ranks' boards of the communicator tagged tag.
func boards(t *testing.T, f *exchangetest.Fake, tag string, slot int) ([]*Board, []error) {
	t.Helper()
	bs := make([]*Board, f.Size())
	return bs, f.Each(func(r int) (err error) {
		bs[r], err = NewBoard(context.Background(), f.Rank(r), tag, slot)
		return err
	})
}

// TestBoard: every rank sees every other rank's slot of a call once it is
// published — whole, when it waits as a reader of the slot's first n bytes
// (AwaitSlot, which warms the lines past the first up to warmMax) — the two
// slots alternate, and nothing is left in /dev/shm.
func TestBoard(t *testing.T) {
	tag := fmt.Sprintf("board-%d", time.Now().UnixNano())
	f := exchangetest.New(3)
	bs, errors := boards(t, f, tag, 384)
	for r, err := range errors {
		require.NoError(t, err, "rank %d", r)
	}
	defer func() {
		for _, b := range bs {
			require.NoError(t, b.Close())
		}
	}()
	left, err := Leftovers(tag)
	require.NoError(t, err)
	assert.Empty(t, left, "the board's names stay in /dev/shm")

	var w transport.Waiter
	fill := func(call, r, n int) []byte {
		d := make([]byte, n)
		for i := range d {
			d[i] = byte(10*call + r + i)
		}
		return d
	}
	sizes := []int{1, firstLine, firstLine + 1, 200, warmMax, warmMax + 1, 384}
	for call := range 2 * len(sizes) {
		n := sizes[call%len(sizes)]
		errors := f.Each(func(r int) error {
			b := bs[r]
			var w transport.Waiter
			w.Reset(context.Background(), 10*time.Second)
			seq := b.Next()
			copy(b.Slot(r, seq), fill(call, r, n))
			b.Publish(seq)
			for q := range bs {
				if call%2 == 0 {
					if err := b.Await(&w, q, seq); err != nil {
						return err
					}
				} else if err := b.AwaitSlot(&w, q, seq, n); err != nil {
					return err
				}
				assert.Equal(t, fill(call, q, n), b.Slot(q, seq)[:n], "call %d (%d B): rank %d reads rank %d's slot", call, n, r, q)
			}
			return nil
		})
		for r, err := range errors {
			require.NoError(t, err, "call %d: rank %d", call, r)
		}
	}
	assert.NotEqual(t, &bs[0].Slot(1, 1)[0], &bs[0].Slot(1, 2)[0], "consecutive calls share a slot")

	// A rank that never publishes: the wait ends at the deadline.
	w.Reset(context.Background(), 20*time.Millisecond)
	err = bs[0].Await(&w, 1, bs[0].Next()+5)
	require.ErrorIs(t, err, errs.ErrTimeout)
	w.Reset(context.Background(), 20*time.Millisecond)
	err = bs[0].AwaitSlot(&w, 1, bs[0].Next()+5, 200)
	require.ErrorIs(t, err, errs.ErrTimeout)
}

// TestBoardBadInput: slots that are not a positive multiple of 64 are
// refused; a board whose setup fails leaves nothing in /dev/shm.
func TestBoardBadInput(t *testing.T) {
	for _, slot := range []int{0, -64, 100} {
		_, err := NewBoard(context.Background(), exchangetest.New(1).Rank(0), "bad", slot)
		require.ErrorContains(t, err, fmt.Sprintf("board slots of %d bytes", slot))
	}
	for _, failAt := range []int{1, 2} { // the name exchange, the barrier
		tag := fmt.Sprintf("boardfail%d-%d", failAt, time.Now().UnixNano())
		f := exchangetest.New(2)
		f.FailAt = failAt
		_, errors := boards(t, f, tag, 64)
		for r, err := range errors {
			require.Error(t, err, "round %d: rank %d", failAt, r)
		}
		left, err := Leftovers(tag)
		require.NoError(t, err)
		assert.Empty(t, left, "round %d: segments left in /dev/shm", failAt)
	}
}

// TestBoardPlace: a rank's crowded waits pause by its peers' core words
// (awaited.Place): Near while a peer that has not published the call last
// ran on this core or its core is not known, Away while every such peer
// last ran on another; and the rank's own word says the core it was asked
// about.
func TestBoardPlace(t *testing.T) {
	bs := placeBoards(t)
	const me = 1 // rank 0's core, plus one
	cases := []struct {
		name      string
		cores     [4]uint32
		published []int
		want      transport.Place
	}{
		{"nothing known", [4]uint32{}, nil, transport.Near},
		{"every peer elsewhere", [4]uint32{me, 2, 2, 2}, nil, transport.Away},
		{"a peer here", [4]uint32{me, 2, me, 2}, nil, transport.Near},
		{"a peer not known", [4]uint32{me, 2, 0, 2}, nil, transport.Near},
		{"the peer here has published", [4]uint32{me, 2, me, 2}, []int{2}, transport.Away},
		{"the peers elsewhere have published", [4]uint32{me, 2, me, 2}, []int{1, 3}, transport.Near},
		{"all published", [4]uint32{me, me, me, me}, []int{1, 2, 3}, transport.Away},
	}
	for _, c := range cases {
		assert.Equal(t, c.want, place(bs, 0, c.cores, c.published...), c.name)
	}

	// The waiting rank's own word follows the core it is asked about.
	b := bs[0]
	b.posts[0].core.Store(0)
	b.wait.Place(3)
	assert.Equal(t, uint32(3), bs[1].posts[0].core.Load(), "rank 0's core word, as rank 1 reads it")
}

// TestBoardRebalance: where more than the share of ranks last ran on one
// core, and every rank's core is known, the one of them with the highest
// index — only it — moves to the core with the fewest ranks, if that has
// fewer than the share, and says so in its core word; not again within
// moveEvery; never without a share.
func TestBoardRebalance(t *testing.T) {
	bs := placeBoards(t)
	var moves [4][]int
	for r, b := range bs {
		b.move = func(cpu int) error { moves[r] = append(moves[r], cpu); return nil }
		b.SetShare(2, []int{0, 1})
	}
	const c0, c1 = 1, 2 // the words of cores 0 and 1
	three := [4]uint32{c1, c0, c0, c0}
	for r := range 3 {
		place(bs, r, three)
	}
	assert.Empty(t, moves[0], "rank 0, alone on its core")
	assert.Empty(t, moves[1], "rank 1: rank 3 is on its core")
	assert.Empty(t, moves[2], "rank 2: rank 3 is on its core")
	place(bs, 3, three)
	assert.Equal(t, []int{1}, moves[3], "rank 3, the highest of three on core 0")
	assert.Equal(t, uint32(c1), bs[3].posts[3].core.Load(), "rank 3's core word after its move")
	place(bs, 3, three)
	assert.Equal(t, []int{1}, moves[3], "rank 3 again within moveEvery")

	for _, cores := range [][4]uint32{
		{c0, c0, c1, c1}, // balanced
		{c0, c0, 0, c0},  // a core not known
		{c0, c0, c0, c0}, // the other core empty: rank 3 moves
	} {
		bs[3].moved = time.Time{}
		place(bs, 3, cores)
	}
	assert.Equal(t, []int{1, 1}, moves[3], "rank 3: balanced, a core not known, then four on core 0")

	bs[3].moved = time.Time{}
	bs[3].SetShare(0, nil)
	place(bs, 3, three)
	assert.Equal(t, []int{1, 1}, moves[3], "rank 3 without a share")

	// Three cores, a share of one: a rank moves to the core with the
	// fewest, and only to one with fewer than the share.
	const c2 = 3
	for _, b := range bs {
		b.SetShare(1, []int{0, 1, 2})
		b.moved = time.Time{}
	}
	place(bs, 1, [4]uint32{c0, c0, c1, c2})
	assert.Empty(t, moves[1], "rank 1: every other core holds its share")
	place(bs, 2, [4]uint32{c0, c0, c0, c1})
	assert.Equal(t, []int{2}, moves[2], "rank 2: to the empty core, not the one holding its share")
}

// placeBoards makes 4 ranks' boards for the tests of Place.
func placeBoards(t *testing.T) []*Board {
	tag := fmt.Sprintf("boardplace-%d", time.Now().UnixNano())
	bs, errors := boards(t, exchangetest.New(4), tag, 64)
	for r, err := range errors {
		require.NoError(t, err, "rank %d", r)
	}
	t.Cleanup(func() {
		for _, b := range bs {
			require.NoError(t, b.Close())
		}
	})
	return bs
}

// place sets the ranks' core words to cores, publishes call Next of rank
// r's board for the ranks published, and returns how a wait of rank r on
// its core (cores[r]) pauses for that call.
func place(bs []*Board, r int, cores [4]uint32, published ...int) transport.Place {
	b := bs[r]
	seq := b.Next()
	for q, c := range cores {
		bs[q].posts[q].core.Store(c)
		bs[q].posts[q].seqs[seq%2].Store(0) // not published
	}
	for _, q := range published {
		bs[q].posts[q].seqs[seq%2].Store(seq)
	}
	b.wait.seq = seq
	return b.wait.Place(cores[r])
}
