package direct

import (
	"context"
	"encoding/binary"
	"errors"
	"fmt"
	"syscall"

	"github.com/ringo-ccl/ringo/internal/errs"
	"github.com/ringo-ccl/ringo/internal/sys"
	"github.com/ringo-ccl/ringo/kernels"
)

// Registrations: a rank's buffer that the ranks of other processes map
// (NCCL's ncclCommRegister), so that its inputs inside it are read there
// rather than staged. Unlike a window, a registration is this rank's
// alone: no other rank takes part in the call, the buffers of the ranks
// need not match, and PyTorch registers each of its memory pool's
// segments so, rank by rank. Register asks every other process's rank,
// through its service (sys.Serve, started by Join), to map the buffer and
// record it in its kernels' window table at one of this rank's own slots
// (MaxWindows and up); once all have, this rank's calls read in place
// (Source). The others' services answer at any time, whatever their ranks
// are doing.

// Registration is a buffer this rank registered: Bytes at Addr, in the
// allocation at base, at slot Slot of its column of the window table (-1:
// nothing mapped, the ranks all in this process or none elsewhere).
type Registration struct {
	Addr  uintptr
	Bytes int64
	Slot  int
	base  uintptr
	alloc uint64 // the allocation the others mapped (see Window.alloc)
	live  bool   // every other process's rank has mapped it
	freed bool
	peers *Peers
}

// A request to a rank's service: op, the asking rank, the slot, and for
// mapRequest the handle of the allocation to map.
const (
	mapRequest   = 1
	unmapRequest = 2
	requestBytes = 1 + 4 + 4 + 1 + HandleBytes
	maxAnswer    = maxWhy
)

// ErrNotShared is Register's failure to have the others map a buffer
// that is fine in itself: every slot taken, a rank that could not map it.
var ErrNotShared = errors.New("the other processes' ranks do not read it in place")

// Register registers bytes at addr, this rank's buffer, with the ranks of
// other processes, which map it. It is this rank's call alone. Errors name
// what was refused: memory that is not this GPU's; wrapping ErrNotShared,
// every slot taken (deregister one) or a rank that could not map it (every
// other rank then unmaps it).
func (p *Peers) Register(ctx context.Context, addr uintptr, bytes int64) (*Registration, error) {
	if bytes <= 0 {
		return nil, fmt.Errorf("%w: a registration of %d bytes", errs.ErrInvalidArgument, bytes)
	}
	base, err := p.gpu.Check(addr, bytes)
	if err != nil {
		return nil, err
	}
	reg := &Registration{Addr: addr, Bytes: bytes, Slot: -1, base: base, peers: p}
	if p.raw || p.svc == nil {
		return reg, nil // the others read it where it is, or nobody maps anything
	}
	if reg.alloc, err = p.gpu.Allocation(addr); err != nil {
		return nil, err
	}
	p.mu.Lock()
	for i, r := range p.regs {
		if r == nil {
			reg.Slot = MaxWindows + i
			p.regs[i] = reg // taken; live once the others have mapped it
			break
		}
	}
	p.mu.Unlock()
	if reg.Slot < 0 {
		return nil, fmt.Errorf("%w: %d buffers are registered, the most a rank holds: deregister one first", ErrNotShared, MaxRegistrations)
	}
	err = p.share(ctx, reg)
	p.mu.Lock()
	defer p.mu.Unlock()
	if err != nil {
		p.regs[reg.Slot-MaxWindows] = nil
		return nil, fmt.Errorf("%w: %w", ErrNotShared, err)
	}
	reg.live = true
	return reg, nil
}

// share has every rank of another process map reg, and records it in this
// rank's own column; on failure every rank that mapped it unmaps it.
func (p *Peers) share(ctx context.Context, reg *Registration) (err error) {
	h, release, err := p.gpu.Export(reg.base)
	if err != nil {
		return err
	}
	defer end(release) // once every rank has mapped it, or failed
	req := request(mapRequest, p.rank, reg.Slot)
	req = append(req, 0)
	if h.Shared {
		req[len(req)-1] = 1
	}
	req = append(req, h.Data[:]...)
	var mapped []int
	for q := range p.local {
		if q == p.rank || p.local[q] {
			continue
		}
		if err = p.call(ctx, q, req); err != nil {
			break
		}
		mapped = append(mapped, q)
	}
	if err == nil {
		err = p.gpu.SetWindowOf(reg.Slot, p.rank, reg.base)
	}
	if err != nil {
		p.unshare(context.WithoutCancel(ctx), reg.Slot, mapped)
	}
	return err
}

// unshare asks ranks qs to unmap this rank's slot. What fails is theirs:
// a rank that is gone unmaps nothing.
func (p *Peers) unshare(ctx context.Context, slot int, qs []int) error {
	var errs []error
	req := request(unmapRequest, p.rank, slot)
	for _, q := range qs {
		errs = append(errs, p.call(ctx, q, req))
	}
	return errors.Join(errs...)
}

// call sends req to rank q's service and returns its refusal, if any
// (bounded by ctx and sys.Call's own timeout).
func (p *Peers) call(ctx context.Context, q int, req []byte) error {
	resp, fd, err := sys.Call(ctx, p.addrs[q], req, maxAnswer)
	if fd >= 0 {
		closeFD(fd)
	}
	switch {
	case err != nil:
		return fmt.Errorf("rank %d: %w", q, err)
	case len(resp) > 0:
		return fmt.Errorf("rank %d could not map this rank's buffer: %s", q, resp)
	}
	return nil
}

func closeFD(fd int) { syscall.Close(fd) }

func request(op byte, rank, slot int) []byte {
	b := []byte{op}
	b = binary.LittleEndian.AppendUint32(b, uint32(rank))
	return binary.LittleEndian.AppendUint32(b, uint32(slot))
}

// answer is the service's handler: another rank's request to map or unmap
// its registration at a slot. An empty answer says done; text, why not.
func (p *Peers) answer(req []byte) ([]byte, int) {
	if err := p.serve(req); err != nil {
		why := err.Error()
		if len(why) > maxAnswer {
			why = why[:maxAnswer]
		}
		return []byte(why), -1
	}
	return nil, -1
}

func (p *Peers) serve(req []byte) error {
	if len(req) < 9 {
		return fmt.Errorf("a request of %d bytes", len(req))
	}
	op, q, slot := req[0], int(binary.LittleEndian.Uint32(req[1:])), int(binary.LittleEndian.Uint32(req[5:]))
	switch {
	case q < 0 || q >= len(p.local) || q == p.rank || p.local[q]:
		return fmt.Errorf("rank %d is not a rank of another process", q)
	case slot < MaxWindows || slot >= kernels.DirectMaxWindows:
		return fmt.Errorf("slot %d is no registration's", slot)
	case op == unmapRequest && len(req) == 9:
		return p.drop(q, slot)
	case op != mapRequest || len(req) != requestBytes:
		return fmt.Errorf("a request of %d bytes, op %d", len(req), op)
	}
	h := Handle{Shared: req[9] == 1}
	copy(h.Data[:], req[10:])
	if err := p.drop(q, slot); err != nil { // a stale one, should q have lost an unmap
		return err
	}
	a, err := p.reach(q, entry{h: h})
	if err != nil {
		return err
	}
	k := mapKey{q, h}
	if err := p.gpu.SetWindowOf(slot, q, a); err != nil {
		p.unmap([]mapKey{k})
		return err
	}
	p.mu.Lock()
	p.remote[[2]int{q, slot}] = k
	p.mu.Unlock()
	return nil
}

// drop unmaps rank q's registration at slot, if this rank mapped one,
// behind the answer to q: the unmapping may wait for this rank's GPU,
// whose running kernel may wait for q's next call, which q makes once
// every service has answered its Deregister (a deadlock, until the
// service's timeout, while the answer waited for it). The kernels' table
// keeps the slot's address: q publishes the slot in no call until it
// registers there again, whose map request sets it anew.
func (p *Peers) drop(q, slot int) error {
	p.mu.Lock()
	k, ok := p.remote[[2]int{q, slot}]
	delete(p.remote, [2]int{q, slot})
	p.mu.Unlock()
	if !ok {
		return nil
	}
	p.dropping.Add(1)
	go func() {
		defer p.dropping.Done()
		if err := p.unmap([]mapKey{k}); err != nil {
			p.mu.Lock()
			p.dropErr = errors.Join(p.dropErr, fmt.Errorf("unmapping rank %d's registration at slot %d: %w", q, slot, err))
			p.mu.Unlock()
		}
	}()
	return nil
}

// Deregister ends the registration (this rank's call alone): no later
// call reads it; once this rank's GPU has finished what it enqueued (every
// call reading it among them: a call's kernel ends after every rank's has
// read), the others unmap it.
func (r *Registration) Deregister() error {
	p := r.peers
	if r.Slot < 0 {
		return nil
	}
	p.mu.Lock()
	if p.regs[r.Slot-MaxWindows] != r {
		p.mu.Unlock()
		return fmt.Errorf("%w: the registration of %d bytes at %#x is not registered: deregistered twice?", errs.ErrInvalidArgument, r.Bytes, r.Addr)
	}
	p.regs[r.Slot-MaxWindows] = nil
	p.mu.Unlock()
	if err := p.gpu.Sync(); err != nil {
		return fmt.Errorf("the others keep the buffer mapped: %w", err)
	}
	var others []int
	for q, l := range p.local {
		if q != p.rank && !l {
			others = append(others, q)
		}
	}
	return errors.Join(p.gpu.SetWindowOf(r.Slot, p.rank, 0), p.unshare(context.Background(), r.Slot, others))
}

// registered returns where the others read an input of bytes at in, when
// it lies in a live registration (p.mu held): its slot and the offset from
// the allocation's start.
func (p *Peers) registered(in uintptr, bytes int64) (how, at uint64, ok bool) {
	for _, r := range p.regs {
		if r == nil || !r.live || r.freed || in < r.Addr || int64(in-r.Addr)+bytes > r.Bytes {
			continue
		}
		if !p.same(in, r.alloc) {
			r.freed = true
			continue
		}
		return kernels.DirectWindow + uint64(r.Slot), uint64(in - r.base), true
	}
	return 0, 0, false
}
