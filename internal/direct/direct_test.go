package direct

import (
	"context"
	"encoding/binary"
	"errors"
	"fmt"
	"sync"
	"testing"
	"time"

	"github.com/ringo-ccl/ringo/internal/errs"
	"github.com/ringo-ccl/ringo/internal/sys"
	"github.com/ringo-ccl/ringo/kernels"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// world is an in-memory all-gather among n ranks.
type world struct {
	mu     sync.Mutex
	cond   *sync.Cond
	n      int
	rounds map[int][][]byte // by round: every rank's blob, as they arrive
	round  []int            // each rank's next round
}

func newWorld(n int) *world {
	w := &world{n: n, rounds: map[int][][]byte{}, round: make([]int, n)}
	w.cond = sync.NewCond(&w.mu)
	return w
}

// rank is one rank's Exchanger; bad replaces its blob when set.
type rank struct {
	w   *world
	r   int
	bad []byte
}

func (x rank) AllGather(ctx context.Context, blob []byte) ([][]byte, error) {
	w := x.w
	w.mu.Lock()
	defer w.mu.Unlock()
	k := w.round[x.r]
	w.round[x.r]++
	if w.rounds[k] == nil {
		w.rounds[k] = make([][]byte, w.n)
	}
	if x.bad != nil {
		blob = x.bad
	}
	w.rounds[k][x.r] = append([]byte(nil), blob...)
	w.cond.Broadcast()
	for {
		full := true
		for _, b := range w.rounds[k] {
			full = full && b != nil
		}
		if full {
			out := make([][]byte, w.n)
			for q, b := range w.rounds[k] {
				out[q] = append([]byte(nil), b...)
			}
			return out, nil
		}
		w.cond.Wait()
	}
}

// fakeGPU is one rank's GPU: areas and buffers at made-up addresses,
// handles that name (rank, base), mappings counted.
type fakeGPU struct {
	rank       int
	failArea   bool
	failOpen   bool
	failExp    bool
	unready    string // Join's reason this rank cannot
	mu         sync.Mutex
	stage      int64
	areas      []uintptr
	order      []int
	windows    map[int][]uintptr
	open       map[uintptr]Handle // mapped address → handle
	opens      int
	syncs      int
	nextMap    uintptr
	hostBelow  uintptr            // addresses below it are "host memory"
	sharedFrom uintptr            // addresses from it on are shareable memory (0: none)
	lent       int                // shareable exports not yet released
	freed      map[uintptr]uint64 // allocation base → times it was freed and made again
}

func newFake(rank int) *fakeGPU {
	return &fakeGPU{rank: rank, windows: map[int][]uintptr{}, open: map[uintptr]Handle{}, freed: map[uintptr]uint64{},
		nextMap: 0x7f0000000000 + uintptr(rank)<<32, hostBelow: 0x1000}
}

func (g *fakeGPU) Area(stage int64) (uintptr, error) {
	if g.failArea {
		return 0, errors.New("out of memory")
	}
	g.stage = stage
	return 0x100000000 * uintptr(g.rank+1), nil
}

func (g *fakeGPU) SetDirect(rank int, areas []uintptr, order []int) error {
	g.mu.Lock()
	defer g.mu.Unlock()
	g.areas, g.order = append([]uintptr(nil), areas...), order
	return nil
}

func (g *fakeGPU) SetWindow(w int, addrs []uintptr) error {
	g.mu.Lock()
	defer g.mu.Unlock()
	g.windows[w] = append([]uintptr(nil), addrs...)
	return nil
}

// window returns rank q's address in window w as g has it, and how many
// mappings g holds and has made.
func (g *fakeGPU) window(w, q int) (addr uintptr, open, opens int) {
	g.mu.Lock()
	defer g.mu.Unlock()
	if row := g.windows[w]; q < len(row) {
		addr = row[q]
	}
	return addr, len(g.open), g.opens
}

func (g *fakeGPU) SetWindowOf(w, q int, addr uintptr) error {
	g.mu.Lock()
	defer g.mu.Unlock()
	row := g.windows[w]
	for len(row) <= q {
		row = append(row, 0)
	}
	row[q] = addr
	g.windows[w] = row
	return nil
}

func (g *fakeGPU) Check(p uintptr, n int64) (uintptr, error) {
	if p < g.hostBelow {
		return 0, fmt.Errorf("%#x is host memory, not GPU memory", p)
	}
	return p &^ 0xfffff, nil
}

// Allocation identifies an allocation by its base and how often it was
// freed and made again there (free).
func (g *fakeGPU) Allocation(p uintptr) (uint64, error) {
	g.mu.Lock()
	defer g.mu.Unlock()
	base := p &^ 0xfffff
	return uint64(base) + g.freed[base], nil
}

// free frees the allocation holding p, and makes another there.
func (g *fakeGPU) free(p uintptr) {
	g.mu.Lock()
	defer g.mu.Unlock()
	g.freed[p&^0xfffff]++
}

// Export: buffers at or above sharedFrom are shareable memory, lent until
// released (lent counts what is).
func (g *fakeGPU) Export(base uintptr) (Handle, func() error, error) {
	if g.failExp {
		return Handle{}, nil, errors.New("cuIpcGetMemHandle: not permitted")
	}
	var h Handle
	binary.LittleEndian.PutUint64(h.Data[0:], uint64(g.rank))
	binary.LittleEndian.PutUint64(h.Data[8:], uint64(base))
	if g.sharedFrom == 0 || base < g.sharedFrom {
		return h, nil, nil
	}
	h.Shared = true
	g.mu.Lock()
	g.lent++
	g.mu.Unlock()
	return h, func() error {
		g.mu.Lock()
		defer g.mu.Unlock()
		g.lent--
		return nil
	}, nil
}

func (g *fakeGPU) Open(h Handle) (uintptr, error) {
	g.mu.Lock()
	defer g.mu.Unlock()
	if g.failOpen {
		return 0, errors.New("cuIpcOpenMemHandle: invalid handle")
	}
	g.nextMap += 1 << 24
	g.open[g.nextMap] = h
	g.opens++
	return g.nextMap, nil
}

func (g *fakeGPU) Close(h Handle, p uintptr) error {
	g.mu.Lock()
	defer g.mu.Unlock()
	if got, ok := g.open[p]; !ok || got != h {
		return fmt.Errorf("closing %#x as %v, opened as %v", p, h, got)
	}
	delete(g.open, p)
	return nil
}

func (g *fakeGPU) Sync() error {
	g.syncs++
	return nil
}

// mappedFrom returns the rank and base a mapped address of g names.
func (g *fakeGPU) mappedFrom(p uintptr) (int, uintptr) {
	g.mu.Lock()
	defer g.mu.Unlock()
	for a, h := range g.open {
		if p >= a && p < a+1<<24 {
			return int(binary.LittleEndian.Uint64(h.Data[0:])), uintptr(binary.LittleEndian.Uint64(h.Data[8:])) + (p - a)
		}
	}
	return -1, 0
}

// each runs f on n ranks at once and returns their results.
func each[T any](n int, f func(r int) T) []T {
	out := make([]T, n)
	var wg sync.WaitGroup
	for r := range n {
		wg.Go(func() { out[r] = f(r) })
	}
	wg.Wait()
	return out
}

type joined struct {
	p        *Peers
	why, err error
}

func join(t *testing.T, gpus []*fakeGPU, w *world, local func(r, q int) bool, stage int64) []joined {
	t.Helper()
	n := len(gpus)
	order := []int{2, 0, 1, 3, 4, 5, 6, 7}[:n]
	ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
	defer cancel()
	return each(n, func(r int) joined {
		l := make([]bool, n)
		for q := range l {
			l[q] = local(r, q)
		}
		var unready error
		if gpus[r].unready != "" {
			unready = errors.New(gpus[r].unready)
		}
		p, why, err := Join(ctx, rank{w: w, r: r}, gpus[r], r, l, order, stage, unready)
		return joined{p, why, err}
	})
}

func fakes(n int) []*fakeGPU {
	g := make([]*fakeGPU, n)
	for r := range g {
		g[r] = newFake(r)
	}
	return g
}

// TestLocal: ranks of one process read in place: every rank gets every
// area as it is, the ring's order, no staging buffer.
func TestLocal(t *testing.T) {
	g := fakes(3)
	ps, err := Local([]GPU{g[0], g[1], g[2]}, []int{1, 2, 0})
	require.NoError(t, err)
	for r, p := range ps {
		assert.True(t, p.Raw())
		assert.Equal(t, []uintptr{0x100000000, 0x200000000, 0x300000000}, g[r].areas)
		assert.Equal(t, []int{1, 2, 0}, g[r].order)
		assert.Zero(t, g[r].stage)
		how, at := p.Source(0x5000, 64)
		assert.Equal(t, uint64(kernels.DirectRaw), how)
		assert.Zero(t, at)
	}
	w, err := ps[0].RegisterWindow(context.Background(), nil, 0x5000000, 1<<20)
	require.NoError(t, err)
	assert.Equal(t, 0, w.Slot)
	_, err = ps[0].RegisterWindow(context.Background(), nil, 0x10, 64)
	assert.ErrorContains(t, err, "host memory")
	require.NoError(t, w.Deregister())
	assert.ErrorContains(t, w.Deregister(), "deregistered twice")
}

// TestJoinProcesses: ranks in separate processes map each other's areas
// (and stage their inputs); windows map every rank's buffer, inputs inside
// one are read there; Deregister and Close unmap all they mapped.
func TestJoinProcesses(t *testing.T) {
	const n = 3
	g := fakes(n)
	w := newWorld(n)
	js := join(t, g, w, func(r, q int) bool { return r == q }, 256<<10)
	for r, j := range js {
		require.NoError(t, j.err)
		require.NoError(t, j.why)
		assert.False(t, j.p.Raw())
		assert.Equal(t, int64(256<<10), g[r].stage)
		assert.Equal(t, []int{2, 0, 1}, g[r].order)
		for q, a := range g[r].areas {
			if q == r {
				assert.Equal(t, uintptr(0x100000000*(r+1)), a)
				continue
			}
			from, base := g[r].mappedFrom(a)
			assert.Equal(t, q, from, "rank %d's view of rank %d's area", r, q)
			assert.Equal(t, uintptr(0x100000000*(q+1)), base)
		}
		how, _ := j.p.Source(0x9000000, 64)
		assert.Equal(t, uint64(kernels.DirectStaged), how)
	}

	ctx := context.Background()
	buf := func(r int) uintptr { return 0x40000000*uintptr(r+1) + 0x100 } // 256 bytes into its allocation
	wins := each(n, func(r int) *Window {
		win, err := js[r].p.RegisterWindow(ctx, rank{w: w, r: r}, buf(r), 1<<20)
		require.NoError(t, err)
		return win
	})
	for r, win := range wins {
		assert.Equal(t, 0, win.Slot)
		for q, a := range g[r].windows[0] {
			if q == r {
				assert.Equal(t, buf(r), a)
				continue
			}
			from, at := g[r].mappedFrom(a)
			assert.Equal(t, q, from)
			assert.Equal(t, buf(q), at, "rank %d's view of rank %d's window", r, q)
		}
		how, at := js[r].p.Source(buf(r)+64, 128)
		assert.Equal(t, uint64(kernels.DirectWindow), how)
		assert.Equal(t, uint64(64), at)
		how, _ = js[r].p.Source(buf(r)+(1<<20)-64, 128) // runs past the window
		assert.Equal(t, uint64(kernels.DirectStaged), how)
	}
	// Rank 0 frees its window's buffer and gets another at its address:
	// the others' mappings show the freed one, so its calls are staged
	// from then on, even were the old allocation's identity to return.
	g[0].free(buf(0))
	how, _ := js[0].p.Source(buf(0)+64, 128)
	assert.Equal(t, uint64(kernels.DirectStaged), how, "a freed window's buffer is staged")
	g[0].freed[buf(0)&^0xfffff] = 0
	how, _ = js[0].p.Source(buf(0)+64, 128)
	assert.Equal(t, uint64(kernels.DirectStaged), how, "a freed window stays unread")
	how, _ = js[1].p.Source(buf(1)+64, 128)
	assert.Equal(t, uint64(kernels.DirectWindow), how, "another rank's window is its own")
	for r, win := range wins {
		opened := len(g[r].open)
		require.NoError(t, win.Deregister())
		assert.Equal(t, opened-(n-1), len(g[r].open), "the window's mappings closed, the areas' kept")
		assert.Equal(t, 1, g[r].syncs, "the GPU waited before unmapping")
		assert.ErrorIs(t, win.Deregister(), errs.ErrInvalidArgument)
		how, _ := js[r].p.Source(buf(r)+64, 128)
		assert.Equal(t, uint64(kernels.DirectStaged), how)
	}
	for r, j := range js {
		require.NoError(t, j.p.Close())
		assert.Empty(t, g[r].open, "rank %d left mappings open", r)
	}
}

// TestRegisterShared: a window over shareable memory (ncclMemAlloc's)
// travels as a Shared handle, which the others open and close as such;
// each rank's export is released once every rank has mapped it, after a
// registration refused too.
func TestRegisterShared(t *testing.T) {
	const n = 3
	g := fakes(n)
	w := newWorld(n)
	js := join(t, g, w, func(r, q int) bool { return r == q }, 1<<10)
	ctx := context.Background()
	buf := func(r int) uintptr { return 0x80000000 * uintptr(r+1) }
	for r := range n {
		g[r].sharedFrom = 0x80000000
		require.NoError(t, js[r].err)
		require.NoError(t, js[r].why)
	}
	wins := each(n, func(r int) *Window {
		win, err := js[r].p.RegisterWindow(ctx, rank{w: w, r: r}, buf(r), 1<<20)
		require.NoError(t, err)
		return win
	})
	for r := range n {
		assert.Zero(t, g[r].lent, "rank %d's export released", r)
		shared := 0
		for _, h := range g[r].open {
			if h.Shared {
				shared++
			}
		}
		assert.Equal(t, n-1, shared, "rank %d opened the others' windows as shareable memory", r)
		how, _ := js[r].p.Source(buf(r), 64)
		assert.Equal(t, uint64(kernels.DirectWindow), how)
	}
	for r, err := range each(n, func(r int) error {
		_, err := js[r].p.RegisterWindow(ctx, rank{w: w, r: r}, buf(r), 64<<(r/2))
		return err
	}) {
		assert.ErrorContains(t, err, "every rank's must be the same size")
		assert.Zero(t, g[r].lent, "rank %d's export of a refused window released", r)
	}
	for r, win := range wins {
		require.NoError(t, win.Deregister())
		require.NoError(t, js[r].p.Close())
		assert.Empty(t, g[r].open, "rank %d left mappings open", r)
	}
}

// TestRegisterBuffer: a rank's registration (ncclCommRegister's) is its
// call alone: the ranks of other processes map its buffer at a slot of its
// own column, through their services, while they do nothing else; its
// inputs inside are then read there, and after Deregister staged again,
// the others' mappings closed. A rank that cannot map it fails the
// registration, and those that had mapped it unmap it; a shareable
// buffer's export is released; a request a service cannot place is
// answered with why.
func TestRegisterBuffer(t *testing.T) {
	const n = 3
	g := fakes(n)
	js := join(t, g, newWorld(n), func(r, q int) bool { return r == q }, 1<<10)
	for _, j := range js {
		require.NoError(t, j.err)
		require.NoError(t, j.why)
	}
	ctx := context.Background()
	p1 := js[1].p
	const base = 0x40000000
	var opens [n]int
	for q := range opens {
		_, _, opens[q] = g[q].window(0, 0)
	}
	reg, err := p1.Register(ctx, base+0x100, 4096)
	require.NoError(t, err)
	assert.Equal(t, MaxWindows, reg.Slot)
	assert.Equal(t, uintptr(base), g[1].windows[MaxWindows][1], "its own column: the allocation's start")
	for _, q := range []int{0, 2} {
		a, _, made := g[q].window(MaxWindows, 1)
		from, at := g[q].mappedFrom(a)
		assert.Equal(t, 1, from, "rank %d's view of rank 1's registration", q)
		assert.Equal(t, uintptr(base), at)
		assert.Equal(t, opens[q]+1, made)
	}
	how, at := p1.Source(base+0x180, 64)
	assert.Equal(t, kernels.DirectWindow+uint64(MaxWindows), how)
	assert.Equal(t, uint64(0x180), at, "from the allocation's start")
	how, _ = p1.Source(base+0x100+4096-32, 64) // runs past it
	assert.Equal(t, uint64(kernels.DirectStaged), how)
	how, _ = js[0].p.Source(base+0x180, 64) // rank 0 registered nothing
	assert.Equal(t, uint64(kernels.DirectStaged), how)

	second, err := p1.Register(ctx, base+0x200000, 64)
	require.NoError(t, err)
	assert.Equal(t, MaxWindows+1, second.Slot)
	require.NoError(t, reg.Deregister())
	assert.ErrorContains(t, reg.Deregister(), "deregistered twice")
	how, _ = p1.Source(base+0x180, 64)
	assert.Equal(t, uint64(kernels.DirectStaged), how)
	// The others unmap it behind their answers (drop), leaving their
	// tables' entries: rank 1 publishes the slot no more.
	for _, q := range []int{0, 2} {
		assert.Eventually(t, func() bool { _, open, _ := g[q].window(MaxWindows, 1); return open == n-1+1 }, 10*time.Second, time.Millisecond,
			"rank %d: the areas and rank 1's second registration stay open", q)
	}

	// Rank 2 cannot map the next one: rank 0 unmaps it again.
	g[2].mu.Lock()
	g[2].failOpen = true
	g[2].mu.Unlock()
	_, err = p1.Register(ctx, base+0x400000, 64)
	assert.ErrorIs(t, err, ErrNotShared)
	assert.ErrorContains(t, err, "rank 2 could not map this rank's buffer: rank 1's memory: cuIpcOpenMemHandle: invalid handle")
	assert.Eventually(t, func() bool { _, open, _ := g[0].window(MaxWindows, 1); return open == n-1+1 }, 10*time.Second, time.Millisecond)
	g[2].mu.Lock()
	g[2].failOpen = false
	g[2].mu.Unlock()

	// Shareable memory: lent until both have mapped it.
	g[1].sharedFrom = base + 0x800000
	shared, err := p1.Register(ctx, base+0x800000, 64)
	require.NoError(t, err)
	assert.Zero(t, g[1].lent)
	require.NoError(t, shared.Deregister())

	_, err = p1.Register(ctx, 0x10, 64)
	assert.ErrorContains(t, err, "host memory")
	for range MaxRegistrations - 1 { // the second holds one slot
		_, err := p1.Register(ctx, base+0x100, 64)
		require.NoError(t, err)
	}
	_, err = p1.Register(ctx, base+0x100, 64)
	assert.ErrorContains(t, err, "32 buffers are registered")

	resp, fd, err := sys.Call(ctx, js[0].p.svc.Addr(), request(mapRequest, 0, MaxWindows), maxAnswer)
	require.NoError(t, err)
	assert.Equal(t, -1, fd)
	assert.Equal(t, "rank 0 is not a rank of another process", string(resp))
	resp, _, err = sys.Call(ctx, js[0].p.svc.Addr(), request(unmapRequest, 1, 3), maxAnswer)
	require.NoError(t, err)
	assert.Equal(t, "slot 3 is no registration's", string(resp))

	for r, j := range js {
		require.NoError(t, j.p.Close())
		_, open, _ := g[r].window(0, 0)
		assert.Zero(t, open, "rank %d left mappings open", r)
	}
}

// TestJoinMixed: ranks 0 and 1 share a process, rank 2 has its own; ranks
// of one process see each other's memory where it is.
func TestJoinMixed(t *testing.T) {
	g := fakes(3)
	proc := []int{0, 0, 1}
	js := join(t, g, newWorld(3), func(r, q int) bool { return proc[r] == proc[q] }, 1<<10)
	for _, j := range js {
		require.NoError(t, j.err)
		require.NoError(t, j.why)
		assert.False(t, j.p.Raw(), "a rank elsewhere: inputs are staged")
	}
	assert.Equal(t, uintptr(0x200000000), g[0].areas[1], "rank 1's area as it is, for rank 0")
	from, _ := g[0].mappedFrom(g[0].areas[2])
	assert.Equal(t, 2, from)
	assert.Equal(t, 1, g[0].opens)
	assert.Equal(t, 2, g[2].opens)
}

// TestJoinFallback: a rank that cannot set up (no memory, IPC refused, a
// peer's area it cannot map) makes every rank keep the ring, naming it,
// with nothing left mapped.
func TestJoinFallback(t *testing.T) {
	for _, tc := range []struct {
		name  string
		spoil func(g *fakeGPU)
		want  string
	}{
		{"unready", func(g *fakeGPU) { g.unready = "GPU 1 cannot reach GPU 0" }, "rank 1 could not set up its direct all-reduce: GPU 1 cannot reach GPU 0"},
		{"area", func(g *fakeGPU) { g.failArea = true }, "rank 1 could not set up its direct all-reduce: out of memory"},
		{"export", func(g *fakeGPU) { g.failExp = true }, "rank 1 could not set up its direct all-reduce: cuIpcGetMemHandle: not permitted"},
		{"open", func(g *fakeGPU) { g.failOpen = true }, "rank 1 could not map the others' direct all-reduce areas: rank 0's memory: cuIpcOpenMemHandle: invalid handle"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			g := fakes(3)
			tc.spoil(g[1])
			js := join(t, g, newWorld(3), func(r, q int) bool { return r == q }, 1<<10)
			for r, j := range js {
				require.NoError(t, j.err)
				assert.Nil(t, j.p)
				assert.EqualError(t, j.why, tc.want)
				assert.Empty(t, g[r].open, "rank %d left mappings open", r)
			}
		})
	}
}

// TestRegisterRefused: a buffer that is not GPU memory, windows of
// different sizes, and slots taken in different orders fail on every
// rank, naming the rank and what differs; and a communicator holds at
// most MaxWindows windows.
func TestRegisterRefused(t *testing.T) {
	const n = 2
	g := fakes(n)
	w := newWorld(n)
	js := join(t, g, w, func(r, q int) bool { return r == q }, 1<<10)
	ctx := context.Background()
	register := func(addr func(r int) uintptr, bytes func(r int) int64) []error {
		return each(n, func(r int) error {
			_, err := js[r].p.RegisterWindow(ctx, rank{w: w, r: r}, addr(r), bytes(r))
			return err
		})
	}
	dev := func(r int) uintptr { return 0x40000000 * uintptr(r+1) }
	for _, err := range register(func(r int) uintptr { return dev(r) - uintptr(r)*dev(r) + uintptr(r)*0x10 }, func(int) int64 { return 64 }) {
		assert.ErrorContains(t, err, "rank 1 could not register its window: 0x10 is host memory, not GPU memory")
	}
	for r, err := range register(dev, func(r int) int64 { return 64 << r }) {
		assert.ErrorIs(t, err, errs.ErrInvalidArgument)
		assert.ErrorContains(t, err, fmt.Sprintf("window of %d bytes on rank %d and of %d on rank %d", 64<<r, r, 64<<(1-r), 1-r))
	}
	// Rank 0 keeps one window the other deregistered: their next
	// registrations take different slots.
	wins := each(n, func(r int) *Window {
		win, err := js[r].p.RegisterWindow(ctx, rank{w: w, r: r}, dev(r), 64)
		require.NoError(t, err)
		return win
	})
	require.NoError(t, wins[1].Deregister())
	for _, err := range register(dev, func(int) int64 { return 64 }) {
		assert.ErrorContains(t, err, "takes slot")
	}
	require.NoError(t, wins[0].Deregister())
	for range MaxWindows {
		each(n, func(r int) *Window {
			win, err := js[r].p.RegisterWindow(ctx, rank{w: w, r: r}, dev(r), 64)
			require.NoError(t, err)
			return win
		})
	}
	for _, err := range register(dev, func(int) int64 { return 64 }) {
		assert.ErrorContains(t, err, "32 windows are registered")
	}
	for r := range n {
		_, err := js[r].p.RegisterWindow(ctx, nil, dev(r), 0)
		assert.ErrorContains(t, err, "a window of 0 bytes")
		require.NoError(t, js[r].p.Close())
		assert.Empty(t, g[r].open)
	}
}

// TestAgree: a communicator whose all-reduces read no windows still
// checks them: a rank's refused buffer and a size that differs fail every
// rank.
func TestAgree(t *testing.T) {
	w := newWorld(3)
	errs := each(3, func(r int) error {
		return Agree(context.Background(), rank{w: w, r: r}, r, 4096, nil)
	})
	for _, err := range errs {
		assert.NoError(t, err)
	}
	errs = each(3, func(r int) error {
		var bad error
		if r == 2 {
			bad = errors.New("0x10 is host memory, not GPU memory")
		}
		return Agree(context.Background(), rank{w: w, r: r}, r, 4096+int64(r%2)*16, bad)
	})
	for _, err := range errs {
		assert.EqualError(t, err, "rank 2 could not register its window: 0x10 is host memory, not GPU memory")
	}
	errs = each(3, func(r int) error {
		return Agree(context.Background(), rank{w: w, r: r}, r, 4096+int64(r%2)*16, nil)
	})
	assert.ErrorContains(t, errs[0], "window of 4096 bytes on rank 0 and of 4112 on rank 1")
	assert.ErrorContains(t, errs[1], "window of 4112 bytes on rank 1 and of 4096 on rank 0")
}

// TestExchangeMalformed: a blob that does not decode is an error naming
// its rank, never a read past its end.
func TestExchangeMalformed(t *testing.T) {
	for _, bad := range [][]byte{make([]byte, 10), append(make([]byte, entryBytes-4), 0xff, 0xff, 0, 0)} {
		w := newWorld(2)
		errs := each(2, func(r int) error {
			x := rank{w: w, r: r}
			if r == 1 {
				x.bad = bad
			}
			_, err := exchange(context.Background(), x, 2, entry{}, nil)
			return err
		})
		for _, err := range errs {
			assert.ErrorContains(t, err, "rank 1 sent")
		}
	}
}
