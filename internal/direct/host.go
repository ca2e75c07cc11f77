package direct

import (
	"cmp"
	"context"
	"errors"
	"fmt"
	"os"
	"slices"
	"sync"
	"sync/atomic"
	"syscall"

	"github.com/ringo-ccl/ringo/internal/errs"
	"github.com/ringo-ccl/ringo/internal/mem"
	"github.com/ringo-ccl/ringo/internal/sys"
)

// Host memory that the processes of a communicator on one host share:
// HostAlloc's allocations, each anonymous shared memory (a memfd) that
// the other processes map by borrowing its descriptor (sys.Lend), and
// host windows over them — Peers with NewHost, whose RegisterWindow maps
// every rank's window into every rank and whose Find and Reach are what
// host.RunWindowed asks of them.

// hostAlloc is one of HostAlloc's allocations.
type hostAlloc struct {
	m  *sys.Memfd
	id uint64 // no later allocation's
}

// hostAllocs is this process's allocations: a snapshot sorted by
// address, replaced whole (under mu) by each HostAlloc and HostFree, so
// that a call's lookup (hostFind, on every windowed collective) takes no
// lock and walks no map.
var hostAllocs struct {
	mu   sync.Mutex
	last uint64
	all  atomic.Pointer[[]*hostAlloc]
}

// HostAlloc returns bytes of zeroed memory that the other processes of a
// communicator on this host can map once it is registered in a window:
// anonymous shared memory, its pages reserved now.
func HostAlloc(bytes int) ([]byte, error) {
	if bytes <= 0 {
		return nil, fmt.Errorf("%w: an allocation of %d bytes", errs.ErrInvalidArgument, bytes)
	}
	page := os.Getpagesize()
	m, err := sys.NewMemfd("ringo-host", (bytes+page-1)/page*page)
	if err != nil {
		return nil, err
	}
	hostAllocs.mu.Lock()
	defer hostAllocs.mu.Unlock()
	hostAllocs.last++
	all := append(hostSnapshot(), &hostAlloc{m: m, id: hostAllocs.last})
	slices.SortFunc(all, func(a, b *hostAlloc) int { return cmp.Compare(mem.Addr(a.m.Mem), mem.Addr(b.m.Mem)) })
	hostAllocs.all.Store(&all)
	return m.Mem[:bytes:bytes], nil
}

// hostSnapshot returns a copy of the allocations' snapshot, to replace it.
func hostSnapshot() []*hostAlloc {
	if all := hostAllocs.all.Load(); all != nil {
		return slices.Clone(*all)
	}
	return nil
}

// HostFree frees an allocation of HostAlloc, b being all of it. A window
// over it no longer holds any buffer of this rank's (calls stage or take
// the FIFOs); the other processes keep their mappings until the window
// is deregistered.
func HostFree(b []byte) error {
	hostAllocs.mu.Lock()
	all := hostSnapshot()
	i := slices.IndexFunc(all, func(a *hostAlloc) bool { return mem.Addr(a.m.Mem) == mem.Addr(b) })
	if i < 0 || len(b) == 0 {
		hostAllocs.mu.Unlock()
		return fmt.Errorf("%w: %d bytes at %#x are not an allocation of HostAlloc (freed twice?)", errs.ErrInvalidArgument, len(b), mem.Addr(b))
	}
	a := all[i]
	all = slices.Delete(all, i, i+1)
	hostAllocs.all.Store(&all)
	hostAllocs.mu.Unlock()
	return a.m.Close()
}

// hostFind returns the allocation holding [p, p+n), or an error saying
// why there is none.
func hostFind(p uintptr, n int64) (*hostAlloc, error) {
	var all []*hostAlloc
	if s := hostAllocs.all.Load(); s != nil {
		all = *s
	}
	// The last allocation starting at or below p is the only one that can hold it.
	i, at := slices.BinarySearchFunc(all, p, func(a *hostAlloc, p uintptr) int { return cmp.Compare(mem.Addr(a.m.Mem), p) })
	if at {
		i++
	}
	if i > 0 {
		a := all[i-1]
		if base := mem.Addr(a.m.Mem); p-base < uintptr(len(a.m.Mem)) {
			if n > int64(uintptr(len(a.m.Mem))-(p-base)) {
				return nil, fmt.Errorf("%w: %d bytes at %#x run past the end of their allocation (%d bytes at %#x)", errs.ErrInvalidArgument, n, p, len(a.m.Mem), base)
			}
			return a, nil
		}
	}
	return nil, fmt.Errorf("%w: %d bytes at %#x are not memory of HostAlloc: the other processes cannot map them", errs.ErrInvalidArgument, n, p)
}

// HostCheck returns why n bytes at p are not memory of HostAlloc, or nil.
func HostCheck(p uintptr, n int64) error {
	_, err := hostFind(p, n)
	return err
}

// hostMem is Peers' GPU for host ranks: windows over HostAlloc's memory.
type hostMem struct {
	mu   sync.Mutex
	maps map[uintptr][]byte // the other processes' allocations mapped here, by address
}

// errHostOnly answers what host memory has no part in.
var errHostOnly = errors.New("direct: host memory has no direct all-reduce")

// NewHost returns the Peers of rank rank of a communicator of n host ranks,
// each a process of this host, for windows over HostAlloc's memory.
func NewHost(rank, n int) *Peers {
	return &Peers{gpu: &hostMem{maps: map[uintptr][]byte{}}, rank: rank, local: make([]bool, n),
		maps: map[mapKey]*mapping{}, remote: map[[2]int]mapKey{}}
}

func (h *hostMem) Area(int64) (uintptr, error)           { return 0, errHostOnly }
func (h *hostMem) SetDirect(int, []uintptr, []int) error { return errHostOnly }
func (h *hostMem) SetWindow(int, []uintptr) error        { return nil } // views keep them
func (h *hostMem) SetWindowOf(int, int, uintptr) error   { return errHostOnly }
func (h *hostMem) Sync() error                           { return nil } // host calls return done
func (h *hostMem) Check(p uintptr, n int64) (uintptr, error) {
	a, err := hostFind(p, n)
	if err != nil {
		return 0, err
	}
	return mem.Addr(a.m.Mem), nil
}

func (h *hostMem) Allocation(p uintptr) (uint64, error) {
	a, err := hostFind(p, 1)
	if err != nil {
		return 0, err
	}
	return a.id, nil
}

// Export lends a duplicate of the allocation's descriptor until release.
func (h *hostMem) Export(base uintptr) (Handle, func() error, error) {
	a, err := hostFind(base, 1)
	if err != nil {
		return Handle{}, nil, err
	}
	fd, err := syscall.Dup(a.m.FD)
	if err != nil {
		return Handle{}, nil, fmt.Errorf("direct: lending host memory: %w", err)
	}
	l, err := sys.Lend(fd)
	if err != nil {
		return Handle{}, nil, err
	}
	return sharedHandle(l.Addr(), int64(len(a.m.Mem))), l.Close, nil
}

// Open maps another process's allocation, whose size its handle says and
// its descriptor must have.
func (h *hostMem) Open(hd Handle) (uintptr, error) {
	if !hd.Shared {
		return 0, fmt.Errorf("direct: a handle of host memory that lends no descriptor")
	}
	a, size := hd.lent()
	if size <= 0 || int64(int(size)) != size {
		return 0, fmt.Errorf("direct: host memory of %d bytes", size)
	}
	fd, err := sys.Borrow(context.Background(), a) // bounded by the service's timeout
	if err != nil {
		return 0, err
	}
	defer syscall.Close(fd)
	m, err := sys.MapFD(fd, int(size))
	if err != nil {
		return 0, err
	}
	h.mu.Lock()
	defer h.mu.Unlock()
	h.maps[mem.Addr(m)] = m
	return mem.Addr(m), nil
}

func (h *hostMem) Close(_ Handle, p uintptr) error {
	h.mu.Lock()
	m := h.maps[p]
	delete(h.maps, p)
	h.mu.Unlock()
	if m == nil {
		return nil
	}
	return sys.Unmap(m)
}

// view returns n bytes at p, in an allocation of this process's or one
// mapped from another, or nil if none holds them.
func (h *hostMem) view(p uintptr, n int64) []byte {
	if a, err := hostFind(p, n); err == nil {
		off := p - mem.Addr(a.m.Mem)
		return a.m.Mem[off : int64(off)+n : int64(off)+n]
	}
	h.mu.Lock()
	defer h.mu.Unlock()
	for base, m := range h.maps {
		if p >= base && p-base < uintptr(len(m)) && n <= int64(uintptr(len(m))-(p-base)) {
			off := p - base
			return m[off : int64(off)+n : int64(off)+n]
		}
	}
	return nil
}

// Find returns the window holding this rank's n bytes at p and their
// offset in it, or ok false if none does — or if the memory there is no
// longer the allocation the window was registered on (freed, and another
// in its place).
func (p *Peers) Find(addr uintptr, n int) (slot, off int, ok bool) {
	p.mu.Lock()
	defer p.mu.Unlock()
	for _, w := range p.windows {
		if w == nil || addr < w.Addr || addr-w.Addr >= uintptr(w.Bytes) || int64(n) > w.Bytes-int64(addr-w.Addr) {
			continue
		}
		if !p.raw {
			if id, err := p.gpu.Allocation(addr); err != nil || id != w.alloc {
				continue
			}
		}
		return w.Slot, int(addr - w.Addr), true
	}
	return 0, 0, false
}

// Reach returns rank q's window slot as this rank reaches it, or nil if
// this rank holds no window there (host memory's only: NewHost).
func (p *Peers) Reach(q, slot int) []byte {
	p.mu.Lock()
	defer p.mu.Unlock()
	if slot < 0 || slot >= MaxWindows || p.windows[slot] == nil || q < 0 || q >= len(p.windows[slot].views) {
		return nil
	}
	return p.windows[slot].views[q]
}
