package main

import (
	"cmp"
	"context"
	"encoding/binary"
	"fmt"
	"maps"
	"slices"
	"sync"
	"sync/atomic"
	"testing"
	"time"
	"unsafe"

	"github.com/ringo-ccl/ringo"
)

// fakeComm is one rank of a communicator made by fakeCreator: it records
// what the C ABI asks of it.
type fakeComm struct {
	rank, size, gpu int
	fc              *fakeCreator
	fam             *fakeFamily // the ranks made with it, over which Split meets

	mu         sync.Mutex
	calls      int
	last       ringo.DeviceCall
	lastStream ringo.Stream
	doErr      error // DoDevice's answer
	err        error // Err's answer
	closeErr   error // Close's answer
	aborted    bool
	closed     bool
	splits     int // Split calls so far
	shrinks    int // Shrink calls so far
	revoked    bool
	shrinkCfgs []*ringo.Config // the cfg of each Shrink
	windows    int             // RegisterWindow calls so far
	wins       []*fakeWindow
	regs       []*fakeWindow // Register's
}

// fakeWindowKey names the seq-th RegisterWindow of a family.
type fakeWindowKey struct {
	fam *fakeFamily
	seq int
}

// fakeWindow is a window a fakeComm registered.
type fakeWindow struct {
	addr         uintptr
	bytes        int64
	deregistered atomic.Int32
}

func (w *fakeWindow) Deregister() error {
	if w.deregistered.Add(1) > 1 {
		return fmt.Errorf("%w: fake window deregistered twice", ringo.ErrInvalidArgument)
	}
	return nil
}

// RegisterWindow stands for ringo's: every rank of c's family meets (its
// seq-th RegisterWindow), and all must bring the same size.
func (c *fakeComm) RegisterWindow(ctx context.Context, addr uintptr, bytes int64) (commWindow, error) {
	c.mu.Lock()
	seq := c.windows
	c.windows++
	c.mu.Unlock()
	_, err := c.fc.meet(ctx, fakeWindowKey{c.fam, seq}, c.size, c.rank, bytes, func(args map[int]any) (map[int]rankComm, error) {
		for r := range c.size {
			if args[r] != args[0] {
				return nil, fmt.Errorf("%w: window of %d bytes on rank 0 and of %d on rank %d", ringo.ErrInvalidArgument, args[0], args[r], r)
			}
		}
		return nil, nil
	})
	if err != nil {
		return nil, err
	}
	w := &fakeWindow{addr: addr, bytes: bytes}
	c.mu.Lock()
	c.wins = append(c.wins, w)
	c.mu.Unlock()
	return w, nil
}

// Register stands for ringo's: this rank's alone; the fake window records
// the buffer.
func (c *fakeComm) Register(ctx context.Context, addr uintptr, bytes int64) (commWindow, error) {
	w := &fakeWindow{addr: addr, bytes: bytes}
	c.mu.Lock()
	c.regs = append(c.regs, w)
	c.mu.Unlock()
	return w, nil
}

// fakeFamily names the ranks one fakeCreator.create call made. Not empty:
// distinct families need distinct addresses.
type fakeFamily struct {
	size int

	mu     sync.Mutex
	growID *ringo.UniqueID // made by a rank's GrowID
}

// fakeShrinkKey names the seq-th Shrink of a family.
type fakeShrinkKey struct {
	fam *fakeFamily
	seq int
}

// fakeSplitKey names the seq-th Split of a family.
type fakeSplitKey struct {
	fam *fakeFamily
	seq int
}

// splitArg is what a rank brings to a Split.
type splitArg struct{ color, key, gpu int }

var _ rankComm = (*fakeComm)(nil)

func (c *fakeComm) DoDevice(_ context.Context, call ringo.DeviceCall, s ringo.Stream) error {
	c.mu.Lock()
	defer c.mu.Unlock()
	c.calls++
	c.last, c.lastStream = call, s
	return c.doErr
}

func (c *fakeComm) Err() error {
	c.mu.Lock()
	defer c.mu.Unlock()
	return c.err
}

func (c *fakeComm) Abort() {
	c.mu.Lock()
	c.aborted = true
	c.mu.Unlock()
}

func (c *fakeComm) Close() error {
	c.mu.Lock()
	defer c.mu.Unlock()
	c.closed = true
	return c.closeErr
}

// Split stands for ringo's: every rank of c's family must call it (its
// seq-th Split meets their seq-th); then each color's members, ordered by
// (key, parent rank), become a communicator made by fakeCreator, color after
// color.
func (c *fakeComm) Split(ctx context.Context, color, key int, _ *ringo.Config) (rankComm, error) {
	c.mu.Lock()
	seq := c.splits
	c.splits++
	c.mu.Unlock()
	return c.fc.meet(ctx, fakeSplitKey{c.fam, seq}, c.size, c.rank, splitArg{color, key, c.gpu}, func(args map[int]any) (map[int]rankComm, error) {
		byColor := map[int][]int{} // parent ranks
		for r := range c.size {
			if a := args[r].(splitArg); a.color >= 0 {
				byColor[a.color] = append(byColor[a.color], r)
			}
		}
		out := map[int]rankComm{}
		for _, col := range slices.Sorted(maps.Keys(byColor)) {
			members := byColor[col]
			slices.SortStableFunc(members, func(a, b int) int { return cmp.Compare(args[a].(splitArg).key, args[b].(splitArg).key) })
			gpus := make([]int, len(members))
			for i, r := range members {
				gpus[i] = args[r].(splitArg).gpu
			}
			kids, err := c.fc.create(gpus, nil)
			if err != nil {
				return nil, err
			}
			for i, r := range members {
				out[r] = kids[i]
			}
		}
		return out, nil
	})
}

// Shrink stands for ringo's: the ranks not in exclude meet (their seq-th
// Shrink) and become a communicator made by fakeCreator, renumbered in
// order. With abort, c is aborted first.
func (c *fakeComm) Shrink(ctx context.Context, exclude []int, cfg *ringo.Config, abort bool) (rankComm, error) {
	c.mu.Lock()
	seq := c.shrinks
	c.shrinks++
	c.shrinkCfgs = append(c.shrinkCfgs, cfg)
	c.aborted = c.aborted || abort
	c.mu.Unlock()
	var survivors []int
	for r := range c.size {
		if !slices.Contains(exclude, r) {
			survivors = append(survivors, r)
		}
	}
	return c.fc.meet(ctx, fakeShrinkKey{c.fam, seq}, len(survivors), slices.Index(survivors, c.rank), c.gpu, func(args map[int]any) (map[int]rankComm, error) {
		gpus := make([]int, len(survivors))
		for i := range gpus {
			gpus[i] = args[i].(int)
		}
		kids, err := c.fc.create(gpus, cfg)
		if err != nil {
			return nil, err
		}
		out := map[int]rankComm{}
		for i, k := range kids {
			out[i] = k
		}
		return out, nil
	})
}

func (c *fakeComm) Revoke() {
	c.mu.Lock()
	c.revoked = true
	c.mu.Unlock()
}

// GrowID stands for ringo's: an id {0x67, family's size, …}, which the
// family's ranks Grow with.
func (c *fakeComm) GrowID() (ringo.UniqueID, error) {
	c.fam.mu.Lock()
	defer c.fam.mu.Unlock()
	id := ringo.UniqueID{0x67, byte(c.size), byte(c.rank)}
	c.fam.growID = &id
	return id, nil
}

// Grow stands for ringo's: the family's ranks join the communicator of the
// id one of them made, as the new ranks do (fakeCreator.join), keeping
// their ranks. A rank that passes an id must pass that one.
func (c *fakeComm) Grow(ctx context.Context, newSize int, id *ringo.UniqueID, cfg *ringo.Config) (rankComm, error) {
	c.fam.mu.Lock()
	grown := c.fam.growID
	c.fam.mu.Unlock()
	switch {
	case grown == nil:
		return nil, fmt.Errorf("fake grow: %w: no rank made a grow id", ringo.ErrInvalidArgument)
	case id != nil && *id != *grown:
		return nil, fmt.Errorf("fake grow: %w: rank %d passed another grow id", ringo.ErrInvalidArgument, c.rank)
	}
	return c.fc.join(ctx, *grown, newSize, c.rank, c.gpu, cfg)
}

func (c *fakeComm) Rank() int { return c.rank }
func (c *fakeComm) Size() int { return c.size }
func (c *fakeComm) GPU() int  { return c.gpu }

// fakeCreator stands for ringo: join for ringo.NewGPUComm, meeting the
// other ranks as ringo's bootstrap would, and create, which makes the ranks
// of a communicator once all have met.
type fakeCreator struct {
	mu    sync.Mutex
	calls [][]int       // the gpus of each create
	made  [][]*fakeComm // what each create returned
	fail  error         // returned instead of ranks
	panic any           // panicked with instead

	meetMu   sync.Mutex
	meetings map[any]*fakeMeeting // under way, by key

	// arrived, when set, is called as each rank reaches join.
	arrived func(id [128]byte, rank int)
}

// join stands for ringo.NewGPUComm: no rank of id returns before all nranks
// have called (or its ctx ends: an error naming the missing ranks); then the
// last to come makes them all, in rank order, with one create.
func (f *fakeCreator) join(ctx context.Context, id [128]byte, nranks, rank, dev int, cfg *ringo.Config) (rankComm, error) {
	if f.arrived != nil {
		f.arrived(id, rank)
	}
	return f.meet(ctx, id, nranks, rank, dev, func(devs map[int]any) (map[int]rankComm, error) {
		gpus := make([]int, nranks)
		for r := range gpus {
			gpus[r] = devs[r].(int)
		}
		comms, err := f.create(gpus, cfg)
		if err != nil {
			return nil, err
		}
		out := map[int]rankComm{}
		for r, c := range comms {
			out[r] = c
		}
		return out, nil
	})
}

// fakeMeeting is a collective under way: the n parties of a join or a Split.
type fakeMeeting struct {
	n    int
	args map[int]any // by party
	done chan struct{}
	out  map[int]rankComm
	err  error
}

// meet brings party i of the n of the meeting named key, with arg: it waits
// for the others, the last of which runs build over every party's arg, and
// returns i's result. When ctx ends first, i leaves the meeting and gets an
// error naming the parties that never came, as ringo's bootstrap says it.
func (f *fakeCreator) meet(ctx context.Context, key any, n, i int, arg any, build func(args map[int]any) (map[int]rankComm, error)) (rankComm, error) {
	f.meetMu.Lock()
	if f.meetings == nil {
		f.meetings = map[any]*fakeMeeting{}
	}
	m := f.meetings[key]
	if m == nil {
		m = &fakeMeeting{n: n, args: map[int]any{}, done: make(chan struct{})}
		f.meetings[key] = m
	}
	switch _, dup := m.args[i]; {
	case m.n != n:
		f.meetMu.Unlock()
		return nil, fmt.Errorf("fake bootstrap: rank %d: %w: nranks %d differs from the other ranks' %d", i, ringo.ErrInvalidArgument, n, m.n)
	case dup:
		f.meetMu.Unlock()
		return nil, fmt.Errorf("fake bootstrap: %w: rank %d joined twice", ringo.ErrInvalidArgument, i)
	}
	m.args[i] = arg
	last := len(m.args) == n
	if last {
		delete(f.meetings, key)
	}
	f.meetMu.Unlock()
	if last {
		func() {
			defer close(m.done)
			defer func() {
				if p := recover(); p != nil {
					m.err = fmt.Errorf("fake bootstrap: the rank that made the communicator panicked: %v", p)
					panic(p)
				}
			}()
			m.out, m.err = build(m.args)
		}()
	}
	select {
	case <-m.done:
	case <-ctx.Done():
		f.meetMu.Lock()
		select {
		case <-m.done: // complete after all
		default:
			var missing []int
			for r := range n {
				if _, ok := m.args[r]; !ok {
					missing = append(missing, r)
				}
			}
			delete(m.args, i)
			if len(m.args) == 0 {
				delete(f.meetings, key)
			}
			f.meetMu.Unlock()
			return nil, fmt.Errorf("fake bootstrap: rank %d: ranks %v never joined: %w: %w", i, missing, ringo.ErrTimeout, ctx.Err())
		}
		f.meetMu.Unlock()
	}
	if m.err != nil {
		return nil, m.err
	}
	return m.out[i], nil
}

func (f *fakeCreator) create(gpus []int, _ *ringo.Config) ([]rankComm, error) {
	f.mu.Lock()
	defer f.mu.Unlock()
	f.calls = append(f.calls, append([]int(nil), gpus...))
	if f.panic != nil {
		panic(f.panic)
	}
	if f.fail != nil {
		return nil, f.fail
	}
	var made []*fakeComm
	out := make([]rankComm, len(gpus))
	fam := &fakeFamily{size: len(gpus)}
	for r, g := range gpus {
		c := &fakeComm{rank: r, size: len(gpus), gpu: g, fc: f, fam: fam}
		made = append(made, c)
		out[r] = c
	}
	f.made = append(f.made, made)
	return out, nil
}

func (f *fakeCreator) snapshot() [][]int {
	f.mu.Lock()
	defer f.mu.Unlock()
	return append([][]int(nil), f.calls...)
}

// testLib is a library over fakes: ranks from fc, the current device from
// *dev, fresh unique ids {1, 2, 3, n…}, a short timeout, and logs into the
// test's log.
type testLib struct {
	*library
	fc      *fakeCreator
	fp      *fakeP2P
	dev     int
	devMu   sync.Mutex
	lastErr []string
}

func newTestLib(t *testing.T) *testLib {
	t.Helper()
	tl := &testLib{fc: &fakeCreator{}, fp: &fakeP2P{}}
	var ids atomic.Uint64
	l := &library{
		join: tl.fc.join,
		device: func() (int, error) {
			tl.devMu.Lock()
			defer tl.devMu.Unlock()
			return tl.dev, nil
		},
		devices:   func() (int, error) { return 8, nil },
		memAlloc:  func(n uint64) (uintptr, error) { return 0x7f0000000000 + uintptr(n), nil },
		memShared: func(n uint64) (uintptr, error) { return 0x7e0000000000 + uintptr(n), nil },
		memFree:   func(uintptr) error { return nil },
		newID: func() ([128]byte, error) {
			x := [128]byte{1, 2, 3}
			binary.LittleEndian.PutUint64(x[4:], ids.Add(1))
			return x, nil
		},
		sendRecv: tl.fp.sendRecv,
		streams:  tl.fp.streams(),
		log:      newLogger(func(line string) { t.Log(line) }),
		reg:      newRegistry(func() time.Duration { return 5 * time.Second }),
	}
	l.setLastErr = func(s string) {
		tl.devMu.Lock()
		tl.lastErr = append(tl.lastErr, s)
		tl.devMu.Unlock()
	}
	tl.library = l
	return tl
}

func (tl *testLib) setDev(d int) {
	tl.devMu.Lock()
	tl.dev = d
	tl.devMu.Unlock()
}

func (tl *testLib) setTimeout(d time.Duration) {
	tl.reg.timeout = func() time.Duration { return d }
}

// id returns a unique id whose first byte is b.
func id(b byte) *[128]byte {
	var x [128]byte
	x[0], x[127] = b, 0x5a
	return &x
}

// comm returns the fake behind handle h.
func (tl *testLib) comm(t *testing.T, h unsafe.Pointer) *fakeComm {
	t.Helper()
	e, err := tl.handles.lookup("test", h)
	if err != nil {
		t.Fatal(err)
	}
	st, err := e.get("test")
	if err != nil {
		t.Fatal(err)
	}
	return st.comm.(*fakeComm)
}

// wantResult fails unless err maps to want.
func wantResult(t *testing.T, what string, err error, want result) {
	t.Helper()
	if got := resultOf(err); got != want {
		t.Fatalf("%s: got %v (%v), want %v", what, got, err, want)
	}
}

// ptr is p as the void* a C caller passes.
func ptr[T any](p *T) unsafe.Pointer { return unsafe.Pointer(p) }

// fakeP2P stands for ringo.SendRecv and the stream work around it: it
// records every call, in order.
type fakeP2P struct {
	mu     sync.Mutex
	runs   [][]p2pPart // each SendRecv's parts, copied
	events []string    // every call: "sendrecv", "alloc", "copy", "free", "wait", with arguments
	next   uintptr     // the next scratch address alloc returns

	err      error // SendRecv's answer
	allocErr error // alloc's
}

func (f *fakeP2P) log(format string, a ...any) {
	f.events = append(f.events, fmt.Sprintf(format, a...))
}

func (f *fakeP2P) sendRecv(_ context.Context, parts []p2pPart) error {
	f.mu.Lock()
	defer f.mu.Unlock()
	run := make([]p2pPart, len(parts))
	for i, p := range parts {
		run[i] = p2pPart{comm: p.comm, stream: p.stream, msgs: slices.Clone(p.msgs)}
	}
	f.runs = append(f.runs, run)
	f.log("sendrecv %d parts", len(parts))
	return f.err
}

func (f *fakeP2P) streams() streamCUDA {
	return streamCUDA{
		alloc: func(dev int, stream uintptr, n int64) (uintptr, error) {
			f.mu.Lock()
			defer f.mu.Unlock()
			if f.allocErr != nil {
				return 0, f.allocErr
			}
			if f.next == 0 {
				f.next = 0x5000_0000
			}
			p := f.next
			f.next += uintptr(n+0xfff) &^ 0xfff
			f.log("alloc gpu %d stream %#x %d bytes = %#x", dev, stream, n, p)
			return p, nil
		},
		copy: func(dev int, stream, dst, src uintptr, n int64) error {
			f.mu.Lock()
			defer f.mu.Unlock()
			f.log("copy gpu %d stream %#x %#x <- %#x %d bytes", dev, stream, dst, src, n)
			return nil
		},
		free: func(dev int, stream, p uintptr) error {
			f.mu.Lock()
			defer f.mu.Unlock()
			f.log("free gpu %d stream %#x %#x", dev, stream, p)
			return nil
		},
		wait: func(dev int, waiter, on uintptr) error {
			f.mu.Lock()
			defer f.mu.Unlock()
			f.log("wait gpu %d stream %#x on %#x", dev, waiter, on)
			return nil
		},
	}
}

// snapshot returns the runs and events so far.
func (f *fakeP2P) snapshot() ([][]p2pPart, []string) {
	f.mu.Lock()
	defer f.mu.Unlock()
	return slices.Clone(f.runs), slices.Clone(f.events)
}
