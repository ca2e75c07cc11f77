package direct

import (
	"context"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/ringo-ccl/ringo/internal/errs"
	"github.com/ringo-ccl/ringo/internal/mem"
)

// hostWindows registers one window per rank of n host ranks (goroutines
// of this process standing in for processes: each maps the others'
// memory through a borrowed descriptor, at addresses of its own), each
// over an allocation of bytes(r) bytes.
func hostWindows(t *testing.T, w *world, ps []*Peers, bufs [][]byte) ([]*Window, []error) {
	t.Helper()
	type out struct {
		w   *Window
		err error
	}
	outs := each(len(ps), func(r int) out {
		win, err := ps[r].RegisterWindow(context.Background(), rank{w: w, r: r}, mem.Addr(bufs[r]), int64(len(bufs[r])))
		return out{win, err}
	})
	ws, errs := make([]*Window, len(ps)), make([]error, len(ps))
	for r, o := range outs {
		ws[r], errs[r] = o.w, o.err
	}
	return ws, errs
}

// TestHostWindows: 3 host ranks register windows over HostAlloc's memory;
// each reaches every other's window through a mapping of its own (another
// address, the same memory: a write through one shows through the
// other), finds its own buffers inside its window and nothing outside; a
// freed allocation is no longer found; deregistering twice is an error.
func TestHostWindows(t *testing.T) {
	const n, bytes = 3, 1 << 16
	ps, bufs := make([]*Peers, n), make([][]byte, n)
	for r := range n {
		ps[r] = NewHost(r, n)
		b, err := HostAlloc(bytes)
		require.NoError(t, err)
		bufs[r] = b
		t.Cleanup(func() { ps[r].Close() })
	}
	ws, fails := hostWindows(t, newWorld(n), ps, bufs)
	for r, err := range fails {
		require.NoError(t, err, "rank %d", r)
	}
	for r := range n {
		bufs[r][100] = byte(r + 1)
		for q := range n {
			v := ps[r].Reach(q, ws[r].Slot)
			require.Len(t, v, bytes, "rank %d's view of rank %d", r, q)
			if q != r {
				assert.NotEqual(t, mem.Addr(bufs[q]), mem.Addr(v), "rank %d maps rank %d's window", r, q)
			}
		}
	}
	for r := range n {
		for q := range n {
			assert.Equal(t, byte(q+1), ps[r].Reach(q, ws[r].Slot)[100], "rank %d sees rank %d's write", r, q)
		}
		slot, off, ok := ps[r].Find(mem.Addr(bufs[r][4096:]), 100)
		assert.True(t, ok)
		assert.Equal(t, [2]int{ws[r].Slot, 4096}, [2]int{slot, off})
		_, _, ok = ps[r].Find(mem.Addr(bufs[r][bytes-50:]), 100)
		assert.False(t, ok, "runs past the window")
		assert.Nil(t, ps[r].Reach(r, ws[r].Slot+1), "no window there")
	}
	// A freed allocation: its window holds no buffer of this rank's any
	// more, even with new memory at the same address.
	require.NoError(t, HostFree(bufs[0]))
	_, _, ok := ps[0].Find(mem.Addr(bufs[0]), 100)
	assert.False(t, ok)
	err := HostFree(bufs[0])
	require.ErrorIs(t, err, errs.ErrInvalidArgument)
	assert.ErrorContains(t, err, "not an allocation of HostAlloc (freed twice?)")
	for r := range n {
		require.NoError(t, ws[r].Deregister())
		assert.Nil(t, ps[r].Reach((r+1)%n, ws[r].Slot), "deregistered")
		assert.ErrorContains(t, ws[r].Deregister(), "deregistered twice?")
	}
	for r := 1; r < n; r++ {
		require.NoError(t, HostFree(bufs[r]))
	}
}

// TestHostWindowsRefused: memory that is not HostAlloc's, and windows of
// different sizes, are refused on every rank, naming the rank; so is an
// allocation of no bytes.
func TestHostWindowsRefused(t *testing.T) {
	const n = 2
	ps := []*Peers{NewHost(0, n), NewHost(1, n)}
	own, err := HostAlloc(4096)
	require.NoError(t, err)
	defer HostFree(own)
	_, fails := hostWindows(t, newWorld(n), ps, [][]byte{own, make([]byte, 4096)})
	for r, err := range fails {
		require.Error(t, err, "rank %d", r)
		assert.Contains(t, err.Error(), "rank 1 could not register its window", "rank %d", r)
		assert.Contains(t, err.Error(), "are not memory of HostAlloc", "rank %d", r)
	}
	other, err := HostAlloc(8192)
	require.NoError(t, err)
	defer HostFree(other)
	_, fails = hostWindows(t, newWorld(n), ps, [][]byte{own, other})
	assert.ErrorContains(t, fails[0], "window of 4096 bytes on rank 0 and of 8192 on rank 1")
	assert.ErrorContains(t, fails[1], "window of 8192 bytes on rank 1 and of 4096 on rank 0")
	_, err = HostAlloc(0)
	assert.ErrorIs(t, err, errs.ErrInvalidArgument)
}

// TestHostFind: the lookup a windowed call makes finds, for addresses in,
// between and around several allocations, exactly the allocation a walk
// over all of them finds, refuses a span that runs past its allocation's
// end, and no longer finds a freed one.
func TestHostFind(t *testing.T) {
	var bufs [][]byte
	for _, n := range []int{1 << 12, 3 << 12, 1 << 16, 5 << 12} {
		b, err := HostAlloc(n)
		require.NoError(t, err)
		bufs = append(bufs, b)
	}
	defer func() {
		for _, b := range bufs[1:] {
			assert.NoError(t, HostFree(b))
		}
	}()
	walk := func(p uintptr) []byte {
		for _, b := range bufs {
			if base := mem.Addr(b); p >= base && p < base+uintptr(len(b)) {
				return b
			}
		}
		return nil
	}
	probe := func(p uintptr) {
		a, err := hostFind(p, 1)
		if want := walk(p); want == nil {
			if err == nil { // then memory of HostAlloc that is none of these (another test's)
				for _, b := range bufs {
					assert.NotEqual(t, mem.Addr(b), mem.Addr(a.m.Mem), "%#x", p)
				}
			}
		} else if assert.NoError(t, err, "%#x", p) {
			assert.Equal(t, mem.Addr(want), mem.Addr(a.m.Mem), "%#x", p)
		}
	}
	for _, b := range bufs {
		base, n := mem.Addr(b), uintptr(len(b))
		for _, p := range []uintptr{base - 1, base, base + 1, base + n/2, base + n - 1, base + n, base + n + 4096} {
			probe(p)
		}
		_, err := hostFind(base+8, int64(n))
		assert.ErrorIs(t, err, errs.ErrInvalidArgument)
		assert.ErrorContains(t, err, "run past the end of their allocation")
		a, err := hostFind(base, int64(n))
		require.NoError(t, err)
		assert.Equal(t, base, mem.Addr(a.m.Mem))
	}
	freed := mem.Addr(bufs[0])
	require.NoError(t, HostFree(bufs[0]))
	_, err := hostFind(freed, 1)
	assert.ErrorContains(t, err, "are not memory of HostAlloc")
}

// BenchmarkHostFind: the lookup of a windowed call's buffer among a few
// allocations.
func BenchmarkHostFind(b *testing.B) {
	var bufs [][]byte
	for range 4 {
		buf, err := HostAlloc(1 << 16)
		require.NoError(b, err)
		bufs = append(bufs, buf)
	}
	defer func() {
		for _, buf := range bufs {
			require.NoError(b, HostFree(buf))
		}
	}()
	p := mem.Addr(bufs[2]) + 100
	for b.Loop() {
		if _, err := hostFind(p, 8); err != nil {
			b.Fatal(err)
		}
	}
}
