// Package direct is what GPU ranks need to read each other's memory for
// the direct all-reduce (kernels/src/direct.cu, device.Rank.LaunchDirect):
// every rank's sync area mapped by every rank (Local for ranks of one
// process, Join for ranks in processes of one host, over CUDA IPC), where
// each call's input is read from (Peers.Source), and windows — buffers
// that every rank registers together (Comm.RegisterWindow,
// ncclCommWindowRegister) and maps from every other — inside which an
// input is read where it is, without the copy into the staging buffer
// that ranks in separate processes otherwise make; and registrations
// (register.go: Comm.Register, ncclCommRegister), one rank's buffers that
// the other processes' ranks map at its request, through the service each
// runs (sys.Serve), with the same effect for that rank's inputs. Host
// ranks that are processes of one host use its windows too (host.go:
// NewHost, over HostAlloc's shared memory), for host.RunWindowed.
//
// Every collective step here (Join, RegisterWindow) all-gathers each rank's
// outcome before anyone acts on it, so the ranks agree: on whether direct
// all-reduces run at all (a rank that cannot set them up makes every rank
// keep the ring, never a mix that would hang), and on every window.
package direct

import (
	"context"
	"encoding/binary"
	"errors"
	"fmt"
	"sync"

	"github.com/ringo-ccl/ringo/internal/errs"
	"github.com/ringo-ccl/ringo/internal/sys"
	"github.com/ringo-ccl/ringo/kernels"
)

// HandleBytes is the size of a CUDA IPC handle (CU_IPC_HANDLE_SIZE).
const HandleBytes = 64

// Handle names a rank's GPU allocation for other processes: a CUDA IPC
// handle, or, Shared, where to borrow the file descriptor of memory of
// CUDA's virtual memory API (ncclMemAlloc's, which CUDA IPC refuses) and
// its size.
type Handle struct {
	Shared bool
	Data   [HandleBytes]byte
}

// GPU is what Peers asks of its rank's GPU: package device's executor and
// CUDA IPC, in a build with the cuda tag (NewGPU).
type GPU interface {
	// Area returns the rank's sync area with a staging buffer of stage
	// bytes (device.Rank.DirectArea).
	Area(stage int64) (uintptr, error)
	// SetDirect gives the kernels every rank's area as this rank reaches
	// it and the ring's order (device.Rank.SetDirect).
	SetDirect(rank int, areas []uintptr, order []int) error
	// SetWindow records every rank's window w as this rank reaches it.
	SetWindow(w int, addrs []uintptr) error
	// SetWindowOf records rank q's window w alone (a registration's).
	SetWindowOf(w, q int, addr uintptr) error
	// Check returns where the allocation holding [p, p+n) starts, which
	// must be this GPU's memory (an error naming what it is otherwise).
	Check(p uintptr, n int64) (base uintptr, err error)
	// Allocation returns the identity of the allocation holding p, which
	// no later allocation shares (CUDA's buffer ID), or an error if none
	// holds it.
	Allocation(p uintptr) (uint64, error)
	// Export returns the handle of the allocation starting at base, and
	// release (nil when there is nothing to end), which ends the export
	// once every rank has opened it: a lent file descriptor.
	Export(base uintptr) (h Handle, release func() error, err error)
	// Open maps another process's allocation; Close unmaps it.
	Open(h Handle) (uintptr, error)
	Close(h Handle, p uintptr) error
	// Sync waits for the GPU's work (before memory a kernel may read is
	// unmapped).
	Sync() error
}

// sharedHandle is the Handle of shareable memory of size bytes whose file
// descriptor is lent at a.
func sharedHandle(a sys.ServiceAddr, size int64) Handle {
	h := Handle{Shared: true}
	n := copy(h.Data[:], a.Name[:])
	n += copy(h.Data[n:], a.Secret[:])
	binary.LittleEndian.PutUint64(h.Data[n:], uint64(size))
	return h
}

// lent returns where a Shared handle's descriptor is lent, and the size of
// its memory.
func (h Handle) lent() (sys.ServiceAddr, int64) {
	var a sys.ServiceAddr
	n := copy(a.Name[:], h.Data[:])
	n += copy(a.Secret[:], h.Data[n:])
	return a, int64(binary.LittleEndian.Uint64(h.Data[n:]))
}

// Exchanger all-gathers a blob from every rank (the bootstrap's).
type Exchanger interface {
	AllGather(ctx context.Context, blob []byte) ([][]byte, error)
}

// Peers is one rank's view of its communicator's memory.
type Peers struct {
	gpu   GPU
	rank  int
	local []bool // rank q is in this process: its addresses are this process's
	// raw: every rank is in this process, so inputs are read where they
	// are, windows or not.
	raw bool

	// svc answers the other processes' ranks' requests to map and unmap
	// their registrations (Register); addrs is every rank's (zero for
	// ranks of this process). nil when every rank is in this process.
	svc   *sys.Service
	addrs []sys.ServiceAddr

	// dropping counts the unmappings of the others' registrations under
	// way behind their services' answers (drop); dropErr is the first
	// that failed. Close waits for them.
	dropping sync.WaitGroup
	dropErr  error

	mu      sync.Mutex
	windows [MaxWindows]*Window
	regs    [MaxRegistrations]*Registration // this rank's, by slot - MaxWindows
	remote  map[[2]int]mapKey               // the others' registrations mapped here, by rank and slot
	maps    map[mapKey]*mapping             // other processes' allocations mapped here
	areas   []mapKey                        // the areas' mappings, held until Close
}

// The kernels' window table (kernels.DirectMaxWindows slots of every
// rank's address) is cut in two: windows take a slot of every rank's at
// once, registrations one of their own rank's.
const (
	MaxWindows       = kernels.DirectMaxWindows / 2
	MaxRegistrations = kernels.DirectMaxWindows - MaxWindows
)

// mapKey is an allocation of another process: its rank and handle.
type mapKey struct {
	peer int
	h    Handle
}

// mapping is an allocation of another process mapped here, with the
// windows (and area) that hold it.
type mapping struct {
	addr uintptr
	refs int
}

// Window is a buffer every rank registered together: slot Slot of every
// rank's table, Bytes at Addr here.
type Window struct {
	Slot  int
	Addr  uintptr
	Bytes int64
	keys  []mapKey // the others' allocations it maps
	peers *Peers
	// alloc is the identity of the allocation the others mapped (0 for
	// ranks of one process, which map nothing); freed says the buffer
	// at Addr is another allocation now (see Source).
	alloc uint64
	freed bool
	views [][]byte // host memory's (NewHost): every rank's window as this rank reaches it
}

// Local readies ranks of one process — rank r on gpus[r], each reaching
// every other's memory — summing in the ring order order: each gets its
// sync area (no staging: inputs are read where they are) and every
// other's.
func Local(gpus []GPU, order []int) ([]*Peers, error) {
	n := len(gpus)
	areas := make([]uintptr, n)
	for r, g := range gpus {
		var err error
		if areas[r], err = g.Area(0); err != nil {
			return nil, err
		}
	}
	ps := make([]*Peers, n)
	local := make([]bool, n)
	for q := range local {
		local[q] = true
	}
	for r, g := range gpus {
		if err := g.SetDirect(r, areas, order); err != nil {
			return nil, err
		}
		ps[r] = &Peers{gpu: g, rank: r, local: local, raw: true, maps: map[mapKey]*mapping{}, remote: map[[2]int]mapKey{}}
	}
	return ps, nil
}

// Join readies rank rank of a communicator whose ranks all share this
// host and reach each other's GPUs (local[q]: rank q is in this process,
// and its GPU is reachable from here) for direct all-reduces, summing in
// the ring order order, with a staging buffer of stage bytes unless every
// rank is in this process. Every rank calls it; unready is why this rank
// cannot (nil: it can). When any rank cannot (that, memory, CUDA IPC
// refused), every rank returns nil Peers and the reason in why, and
// all-reduces stay on the ring; err is the exchange's failure (a lost
// rank, the context's end).
func Join(ctx context.Context, ex Exchanger, gpu GPU, rank int, local []bool, order []int, stage int64, unready error) (p *Peers, why, err error) {
	n := len(local)
	p = &Peers{gpu: gpu, rank: rank, local: local, raw: true, maps: map[mapKey]*mapping{}, remote: map[[2]int]mapKey{}}
	for _, l := range local {
		p.raw = p.raw && l
	}
	if p.raw {
		stage = 0
	}
	// Round 1: every rank's area (and its handle, for other processes).
	var mine entry
	setup := unready
	if setup == nil {
		mine.addr, setup = gpu.Area(stage)
	}
	var release func() error
	if setup == nil && !p.raw {
		mine.base = mine.addr
		mine.h, release, setup = gpu.Export(mine.base)
	}
	defer end(release) // once every rank has answered round 2, or failed
	if setup == nil && !p.raw {
		if p.svc, setup = sys.Serve(requestBytes, p.answer); setup == nil {
			mine.svc = p.svc.Addr()
		}
	}
	all, err := exchange(ctx, ex, n, mine, setup)
	if err != nil {
		p.Close()
		return nil, nil, err
	}
	if why = failed(all, "set up its direct all-reduce"); why == nil {
		areas := make([]uintptr, n)
		for q, e := range all {
			if areas[q], setup = p.reach(q, e); setup != nil {
				break
			}
			if q != rank && !local[q] {
				p.areas = append(p.areas, mapKey{q, e.h})
			}
		}
		if setup == nil {
			setup = gpu.SetDirect(rank, areas, order)
		}
		p.addrs = make([]sys.ServiceAddr, n)
		for q, e := range all {
			p.addrs[q] = e.svc
		}
		// Round 2: whether every rank could map every other's.
		var done []entry
		if done, err = exchange(ctx, ex, n, entry{}, setup); err != nil {
			p.Close()
			return nil, nil, err
		}
		why = failed(done, "map the others' direct all-reduce areas")
	}
	if why != nil {
		p.Close()
		return nil, why, nil
	}
	return p, nil, nil
}

// Raw reports whether every rank is in this process (inputs are read
// where they are).
func (p *Peers) Raw() bool { return p.raw }

// Source returns where the others read this rank's input of bytes at in
// (LaunchDirect's how and at): in place when every rank is in this
// process, inside a window it lies in, else staged. It allocates nothing.
// A window whose buffer was freed (its address now another allocation's,
// or none's) is never read again: the others' mappings still show the
// freed memory, so its calls are staged — right, if slower — until it is
// deregistered. Each rank chooses its own source, so the others need not
// know.
func (p *Peers) Source(in uintptr, bytes int64) (how, at uint64) {
	if p.raw {
		return kernels.DirectRaw, 0
	}
	p.mu.Lock()
	defer p.mu.Unlock()
	for _, w := range p.windows {
		if w != nil && !w.freed && in >= w.Addr && int64(in-w.Addr)+bytes <= w.Bytes {
			if w.alloc != 0 && !p.same(in, w.alloc) {
				w.freed = true // the others would read the freed buffer's memory through their mappings
				break
			}
			return kernels.DirectWindow + uint64(w.Slot), uint64(in - w.Addr)
		}
	}
	if how, at, ok := p.registered(in, bytes); ok {
		return how, at
	}
	return kernels.DirectStaged, 0
}

// same reports whether in lies in allocation alloc still.
func (p *Peers) same(in uintptr, alloc uint64) bool {
	id, err := p.gpu.Allocation(in)
	return err == nil && id == alloc
}

// RegisterWindow registers bytes at addr, this rank's buffer, as a window
// with every rank (each calls it, in the same order with the others of the
// communicator, with a buffer of the same size): it takes the lowest free
// slot, and every rank maps every other's buffer there. ex is nil for
// ranks of one process, which only record it: they read each other's
// memory anyway. Errors name the rank whose buffer was refused, or the
// ranks whose sizes or slots differ.
func (p *Peers) RegisterWindow(ctx context.Context, ex Exchanger, addr uintptr, bytes int64) (*Window, error) {
	if bytes <= 0 {
		return nil, fmt.Errorf("%w: a window of %d bytes", errs.ErrInvalidArgument, bytes)
	}
	p.mu.Lock()
	slot := -1
	for i, w := range p.windows {
		if w == nil {
			slot = i
			break
		}
	}
	p.mu.Unlock()
	w := &Window{Slot: slot, Addr: addr, Bytes: bytes, peers: p}
	var bad error
	if slot < 0 {
		bad = fmt.Errorf("%w: %d windows are registered, the most a communicator holds: deregister one first", errs.ErrInvalidArgument, MaxWindows)
	}
	if ex == nil {
		if bad == nil {
			_, bad = p.gpu.Check(addr, bytes)
		}
		if bad != nil {
			return nil, bad
		}
		p.keep(w)
		return w, nil
	}
	mine := entry{addr: addr, bytes: bytes, slot: int64(slot)}
	if bad == nil {
		mine.base, bad = p.gpu.Check(addr, bytes)
	}
	if bad == nil && !p.raw {
		w.alloc, bad = p.gpu.Allocation(addr)
	}
	var release func() error
	if bad == nil && !p.raw {
		mine.h, release, bad = p.gpu.Export(mine.base)
	}
	defer end(release) // once every rank has answered the last round, or failed
	all, err := exchange(ctx, ex, len(p.local), mine, bad)
	if err != nil {
		return nil, err
	}
	if err := agreed(all, p.rank, bytes); err != nil {
		return nil, err
	}
	for q, e := range all {
		if e.slot != int64(slot) {
			return nil, fmt.Errorf("%w: this window takes slot %d on rank %d and %d on rank %d: the ranks registered and deregistered windows in different orders", errs.ErrInvalidArgument, slot, p.rank, e.slot, q)
		}
	}
	addrs := make([]uintptr, len(all))
	for q, e := range all {
		if addrs[q], bad = p.reach(q, e); bad != nil {
			break
		}
		if q != p.rank && !p.local[q] {
			w.keys = append(w.keys, mapKey{q, e.h})
		}
	}
	if h, ok := p.gpu.(*hostMem); ok && bad == nil {
		w.views = make([][]byte, len(addrs))
		for q, a := range addrs {
			if w.views[q] = h.view(a, bytes); w.views[q] == nil {
				bad = fmt.Errorf("rank %d's window of %d bytes is not mapped here", q, bytes)
				break
			}
		}
	}
	if bad == nil {
		bad = p.gpu.SetWindow(slot, addrs)
	}
	done, err := exchange(ctx, ex, len(p.local), entry{}, bad)
	if err == nil {
		err = failed(done, "map the others' windows")
	}
	if err != nil {
		p.unmap(w.keys)
		return nil, err
	}
	p.keep(w)
	return w, nil
}

// end ends an export (Export's release), if it has one to end. What
// fails there is only this rank's: the others have mapped the memory.
func end(release func() error) {
	if release != nil {
		release()
	}
}

// Agree is Register's check for a communicator that reads no windows (its
// all-reduces run the ring): every rank's buffer was accepted (bad: why
// this rank's was not) and all are of the same size. Every rank calls it.
func Agree(ctx context.Context, ex Exchanger, rank int, bytes int64, bad error) error {
	all, err := exchange(ctx, ex, -1, entry{bytes: bytes}, bad)
	if err != nil {
		return err
	}
	return agreed(all, rank, bytes)
}

// agreed checks a window's exchange: every rank's buffer accepted, all of
// this rank's size.
func agreed(all []entry, rank int, bytes int64) error {
	if err := failed(all, "register its window"); err != nil {
		return err
	}
	for q, e := range all {
		if e.bytes != bytes {
			return fmt.Errorf("%w: window of %d bytes on rank %d and of %d on rank %d: every rank's must be the same size", errs.ErrInvalidArgument, bytes, rank, e.bytes, q)
		}
	}
	return nil
}

// keep records w in its slot.
func (p *Peers) keep(w *Window) {
	p.mu.Lock()
	defer p.mu.Unlock()
	p.windows[w.Slot] = w
}

// Deregister ends w on this rank (not collective, as NCCL's): once this
// rank's GPU is done with what it enqueued, the others' buffers are
// unmapped and the slot is free. No rank may still use the window.
func (w *Window) Deregister() error {
	p := w.peers
	p.mu.Lock()
	if p.windows[w.Slot] != w {
		p.mu.Unlock()
		return fmt.Errorf("%w: window %d (%d bytes at %#x) is not registered: deregistered twice?", errs.ErrInvalidArgument, w.Slot, w.Bytes, w.Addr)
	}
	p.windows[w.Slot] = nil
	p.mu.Unlock()
	if len(w.keys) == 0 {
		return nil
	}
	if err := p.gpu.Sync(); err != nil {
		return fmt.Errorf("the others' buffers stay mapped: %w", err)
	}
	return p.unmap(w.keys)
}

// Close unmaps everything of other processes this rank mapped (its kernels
// must be done).
func (p *Peers) Close() error {
	var err error
	if p.svc != nil {
		err = p.svc.Close() // no more requests: what they mapped is unmapped below
		p.svc = nil
	}
	p.dropping.Wait()
	p.mu.Lock()
	err = errors.Join(err, p.dropErr)
	keys := p.areas
	p.areas = nil
	for k, m := range p.remote {
		keys = append(keys, m)
		delete(p.remote, k)
	}
	for i, w := range p.windows {
		if w != nil {
			keys = append(keys, w.keys...)
			p.windows[i] = nil
		}
	}
	p.mu.Unlock()
	return errors.Join(err, p.unmap(keys))
}

// reach returns where rank q's allocation e is as this rank reaches it:
// where it is for this rank and ranks of this process, mapped (once,
// counted) for ranks of others.
func (p *Peers) reach(q int, e entry) (uintptr, error) {
	if q == p.rank || p.local[q] {
		return e.addr, nil
	}
	k := mapKey{q, e.h}
	p.mu.Lock()
	defer p.mu.Unlock()
	m := p.maps[k]
	if m == nil {
		a, err := p.gpu.Open(e.h)
		if err != nil {
			return 0, fmt.Errorf("rank %d's memory: %w", q, err)
		}
		m = &mapping{addr: a}
		p.maps[k] = m
	}
	m.refs++
	return m.addr + (e.addr - e.base), nil
}

// unmap releases one reference to each of keys, closing those no longer
// held — outside the lock, as closing may wait for the GPU.
func (p *Peers) unmap(keys []mapKey) error {
	type closing struct {
		h    Handle
		addr uintptr
	}
	var last []closing
	p.mu.Lock()
	for _, k := range keys {
		m := p.maps[k]
		if m == nil {
			continue
		}
		if m.refs--; m.refs == 0 {
			delete(p.maps, k)
			last = append(last, closing{k.h, m.addr})
		}
	}
	p.mu.Unlock()
	var errs []error
	for _, c := range last {
		errs = append(errs, p.gpu.Close(c.h, c.addr))
	}
	return errors.Join(errs...)
}

// entry is one rank's part of an exchange: an allocation (address, bytes,
// handle and base) and a window's slot, or the reason it has none.
type entry struct {
	addr, base uintptr
	bytes      int64
	slot       int64
	h          Handle
	svc        sys.ServiceAddr // the rank's service (Join)
	err        string          // "": none
}

// svcBytes is a service address's encoding.
const svcBytes = sys.ServiceNameBytes + sys.ServiceSecretBytes

// entryBytes is an entry's encoding without its error text.
const entryBytes = 8 + 8 + 8 + 8 + 1 + HandleBytes + svcBytes + 4

// maxWhy bounds the error text an entry carries.
const maxWhy = 512

// exchange all-gathers mine (or, when bad is not nil, its text) and
// returns every rank's entry, n of them (-1: as many as answer). A blob
// that does not decode is an error naming its rank.
func exchange(ctx context.Context, ex Exchanger, n int, mine entry, bad error) ([]entry, error) {
	if bad != nil {
		mine.err = bad.Error()
		if len(mine.err) > maxWhy {
			mine.err = mine.err[:maxWhy]
		}
		if mine.err == "" {
			mine.err = "failed"
		}
	}
	b := make([]byte, entryBytes, entryBytes+len(mine.err))
	binary.LittleEndian.PutUint64(b[0:], uint64(mine.addr))
	binary.LittleEndian.PutUint64(b[8:], uint64(mine.base))
	binary.LittleEndian.PutUint64(b[16:], uint64(mine.bytes))
	binary.LittleEndian.PutUint64(b[24:], uint64(mine.slot))
	if mine.h.Shared {
		b[32] = 1
	}
	copy(b[33:], mine.h.Data[:])
	copy(b[33+HandleBytes:], mine.svc.Name[:])
	copy(b[33+HandleBytes+sys.ServiceNameBytes:], mine.svc.Secret[:])
	binary.LittleEndian.PutUint32(b[33+HandleBytes+svcBytes:], uint32(len(mine.err)))
	b = append(b, mine.err...)
	blobs, err := ex.AllGather(ctx, b)
	if err != nil {
		return nil, err
	}
	if n < 0 {
		n = len(blobs)
	}
	if len(blobs) != n {
		return nil, fmt.Errorf("direct: %d ranks answered an exchange of %d", len(blobs), n)
	}
	all := make([]entry, n)
	for q, b := range blobs {
		if len(b) < entryBytes {
			return nil, fmt.Errorf("direct: rank %d sent %d bytes, want at least %d", q, len(b), entryBytes)
		}
		e := &all[q]
		e.addr = uintptr(binary.LittleEndian.Uint64(b[0:]))
		e.base = uintptr(binary.LittleEndian.Uint64(b[8:]))
		e.bytes = int64(binary.LittleEndian.Uint64(b[16:]))
		e.slot = int64(binary.LittleEndian.Uint64(b[24:]))
		e.h.Shared = b[32] == 1
		copy(e.h.Data[:], b[33:])
		copy(e.svc.Name[:], b[33+HandleBytes:])
		copy(e.svc.Secret[:], b[33+HandleBytes+sys.ServiceNameBytes:])
		why := int(binary.LittleEndian.Uint32(b[33+HandleBytes+svcBytes:]))
		if why > maxWhy || len(b) != entryBytes+why {
			return nil, fmt.Errorf("direct: rank %d sent %d bytes with %d of reason, want %d and at most %d", q, len(b), why, entryBytes+why, maxWhy)
		}
		e.err = string(b[entryBytes:])
	}
	return all, nil
}

// failed returns the first rank's failure to do what, or nil.
func failed(all []entry, what string) error {
	for q, e := range all {
		if e.err != "" {
			return fmt.Errorf("rank %d could not %s: %s", q, what, e.err)
		}
	}
	return nil
}
