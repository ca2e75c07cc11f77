// Package rdmatest is an in-process fake RDMA fabric, an rdma.Provider
// that rdma's tests (and any test of a wire over RDMA) run on any machine,
// under -race: see Fabric. Nothing in production imports it; it sits
// beside package rdma as transport/wiretest sits beside transport.
package rdmatest

import (
	"errors"
	"fmt"
	"sync"
	"sync/atomic"

	"github.com/ringo-ccl/ringo/internal/mem"
	"github.com/ringo-ccl/ringo/rdma"
)

// Fabric is an in-process fake RDMA network: every Device opened from it
// shares one switch, and RC queue pairs between them behave as the verbs
// spec says where the protocol can tell. Work executes when it is posted,
// under one lock, so delivery is in order per queue pair and a completion's
// data is visible once the completion is polled:
//
//   - RDMA WRITE copies into the peer's registered memory after checking the
//     rkey (it must belong to the peer's device), the bounds and the
//     region's RemoteWrite access; otherwise the writer gets a remote access
//     error completion and its queue pair goes to the error state.
//   - WRITE WITH IMM also consumes one receive the peer posted and delivers
//     the immediate to the peer's receive CQ; with none posted the writer
//     gets an RNR retry error (the fake never retries).
//   - A queue pair in the error state flushes everything posted to it, and
//     what was already posted, with WR_FLUSH_ERR completions.
//   - A dead queue pair (Kill) never answers: writes to it complete with
//     "transport retry counter exceeded".
//   - The send queue holds at most maxSend unreclaimed work requests; a
//     signaled completion, once polled, reclaims every request posted
//     before it, as on hardware, and posting to a full queue fails.
//
// GPU memory registration succeeds or fails as SetGPUSupport says, so the
// registration strategy can be tested. The zero Fabric is not usable; make
// one with NewFabric.
type Fabric struct {
	mu       sync.Mutex // guards everything below and all state of the fake objects
	mrs      map[uint32]*fakeMR
	qps      map[uint32]*fakeQP
	nextKey  uint32
	nextAddr uint64
	nextLID  uint16
	gpu      GPUSupport
}

// GPUSupport says which GPU registrations the fake accepts.
type GPUSupport struct {
	Dmabuf  bool // RegDmabuf succeeds
	PeerMem bool // RegAddr succeeds (nvidia-peermem)
}

var _ rdma.Provider = (*Fabric)(nil)

// NewFabric returns an empty fake network.
func NewFabric() *Fabric {
	return &Fabric{mrs: map[uint32]*fakeMR{}, qps: map[uint32]*fakeQP{}, nextKey: 0x100, nextAddr: 0x7f0000000000, nextLID: 1}
}

// SetGPUSupport sets which GPU registrations succeed from now on.
func (f *Fabric) SetGPUSupport(s GPUSupport) {
	f.mu.Lock()
	f.gpu = s
	f.mu.Unlock()
}

// Open opens a fake device port; any name works.
func (f *Fabric) Open(name string, port int) (rdma.Device, error) {
	if port < 1 {
		return nil, fmt.Errorf("fake rdma: %s port %d: ports are 1-based", name, port)
	}
	f.mu.Lock()
	defer f.mu.Unlock()
	lid := f.nextLID
	f.nextLID++
	return &fakeDevice{f: f, name: name, port: port, addr: rdma.PortAddr{LID: lid, MTU: 5}}, nil
}

// Break moves queue pair qpn to the error state, as a local failure would.
func (f *Fabric) Break(qpn uint32) error { return f.onQP(qpn, (*fakeQP).toError) }

// Kill makes queue pair qpn a dead peer: it stops answering, and nothing
// more completes on it.
func (f *Fabric) Kill(qpn uint32) error { return f.onQP(qpn, func(q *fakeQP) { q.dead = true }) }

// onQP runs do on queue pair qpn with the fabric locked.
func (f *Fabric) onQP(qpn uint32, do func(*fakeQP)) error {
	f.mu.Lock()
	defer f.mu.Unlock()
	q, ok := f.qps[qpn]
	if !ok {
		return fmt.Errorf("fake rdma: no qp %#x", qpn)
	}
	do(q)
	return nil
}

type fakeDevice struct {
	f      *Fabric
	name   string
	port   int
	addr   rdma.PortAddr
	closed bool // guarded by f.mu
}

func (d *fakeDevice) Name() string        { return d.name }
func (d *fakeDevice) Port() int           { return d.port }
func (d *fakeDevice) Addr() rdma.PortAddr { return d.addr }

func (d *fakeDevice) Close() error {
	d.f.mu.Lock()
	defer d.f.mu.Unlock()
	d.closed = true
	return nil
}

// register records a region over buf; f.mu is held.
func (d *fakeDevice) register(buf []byte, addr uint64, access rdma.Access) *fakeMR {
	f := d.f
	if addr == 0 {
		addr = f.nextAddr
		f.nextAddr += uint64(len(buf)+4095) &^ 4095
	}
	m := &fakeMR{dev: d, buf: buf, addr: addr, lkey: f.nextKey, rkey: f.nextKey + 1, access: access}
	f.nextKey += 2
	f.mrs[m.rkey] = m
	return m
}

func (d *fakeDevice) RegHost(b []byte, access rdma.Access) (rdma.MR, error) {
	if len(b) == 0 {
		return nil, errors.New("fake rdma: register an empty buffer")
	}
	d.f.mu.Lock()
	defer d.f.mu.Unlock()
	return d.register(b, 0, access), nil
}

// RegAddr stands for GPU memory at addr: the fake backs it with host bytes.
func (d *fakeDevice) RegAddr(addr uint64, n int, access rdma.Access) (rdma.MR, error) {
	d.f.mu.Lock()
	defer d.f.mu.Unlock()
	if !d.f.gpu.PeerMem {
		return nil, fmt.Errorf("fake rdma: ibv_reg_mr on device address %#x: bad address (nvidia-peermem not loaded)", addr)
	}
	return d.register(make([]byte, n), addr, access), nil
}

func (d *fakeDevice) RegDmabuf(fd int, offset uint64, n int, iova uint64, access rdma.Access) (rdma.MR, error) {
	d.f.mu.Lock()
	defer d.f.mu.Unlock()
	if !d.f.gpu.Dmabuf {
		return nil, fmt.Errorf("fake rdma: ibv_reg_dmabuf_mr fd %d: operation not supported", fd)
	}
	if fd < 0 {
		return nil, fmt.Errorf("fake rdma: ibv_reg_dmabuf_mr: bad fd %d", fd)
	}
	return d.register(make([]byte, n), iova, access), nil
}

func (d *fakeDevice) CreateCQ(depth int) (rdma.CQ, error) {
	if depth < 1 {
		return nil, fmt.Errorf("fake rdma: cq depth %d", depth)
	}
	return &fakeCQ{f: d.f, ring: make([]fakeEntry, depth)}, nil
}

func (d *fakeDevice) CreateQP(send, recv rdma.CQ, maxSend, maxRecv int) (rdma.QP, error) {
	sc, ok1 := send.(*fakeCQ)
	rc, ok2 := recv.(*fakeCQ)
	if !ok1 || !ok2 {
		return nil, errors.New("fake rdma: completion queues from another provider")
	}
	f := d.f
	f.mu.Lock()
	defer f.mu.Unlock()
	q := &fakeQP{f: f, dev: d, num: f.nextKey & 0xffffff, psn: (f.nextKey * 2654435761) & 0xffffff,
		send: sc, recv: rc, maxSend: maxSend, maxRecv: maxRecv, state: qpInit}
	f.nextKey++
	f.qps[q.num] = q
	return q, nil
}

type fakeMR struct {
	dev        *fakeDevice
	buf        []byte
	addr       uint64
	lkey, rkey uint32
	access     rdma.Access
	closed     bool // guarded by f.mu
}

func (m *fakeMR) Addr() uint64 { return m.addr }
func (m *fakeMR) Len() int     { return len(m.buf) }
func (m *fakeMR) LKey() uint32 { return m.lkey }
func (m *fakeMR) RKey() uint32 { return m.rkey }

func (m *fakeMR) Close() error {
	f := m.dev.f
	f.mu.Lock()
	defer f.mu.Unlock()
	m.closed = true
	delete(f.mrs, m.rkey)
	return nil
}

type fakeEntry struct {
	c       rdma.Completion
	qp      *fakeQP
	reclaim int // send work requests this completion frees
}

type fakeCQ struct {
	f       *Fabric
	ring    []fakeEntry // guarded by f.mu
	head, n int
	overrun bool
	closed  bool
}

// push adds a completion; f.mu is held.
func (c *fakeCQ) push(e fakeEntry) {
	if c.n == len(c.ring) {
		c.overrun = true
		return
	}
	c.ring[(c.head+c.n)%len(c.ring)] = e
	c.n++
}

func (c *fakeCQ) Poll(out []rdma.Completion) (int, error) {
	c.f.mu.Lock()
	defer c.f.mu.Unlock()
	if c.closed {
		return 0, errors.New("fake rdma: poll of a destroyed cq")
	}
	if c.overrun {
		return 0, errors.New("fake rdma: completion queue overrun")
	}
	n := 0
	for n < len(out) && c.n > 0 {
		e := &c.ring[c.head]
		out[n] = e.c
		if e.qp != nil {
			e.qp.outstanding -= e.reclaim
		}
		*e = fakeEntry{}
		c.head = (c.head + 1) % len(c.ring)
		c.n--
		n++
	}
	return n, nil
}

func (c *fakeCQ) Close() error {
	c.f.mu.Lock()
	defer c.f.mu.Unlock()
	c.closed = true
	return nil
}

type qpState int

const (
	qpInit qpState = iota
	qpRTS
	qpError
	qpClosed
)

type fakeQP struct {
	f          *Fabric
	dev        *fakeDevice
	num, psn   uint32
	send, recv *fakeCQ
	maxSend    int
	maxRecv    int

	// Guarded by f.mu.
	state       qpState
	dead        bool
	peer        uint32
	recvs       []uint64 // posted receives, oldest first
	outstanding int      // send work requests not yet reclaimed
	unsignaled  int      // of which posted since the last signaled one
}

func (q *fakeQP) Num() uint32 { return q.num }
func (q *fakeQP) PSN() uint32 { return q.psn }

func (q *fakeQP) Connect(r rdma.Remote) error {
	q.f.mu.Lock()
	defer q.f.mu.Unlock()
	if q.state != qpInit {
		return fmt.Errorf("fake rdma: qp %#x: connect from state %d", q.num, q.state)
	}
	p, ok := q.f.qps[r.QPN]
	if !ok {
		return fmt.Errorf("fake rdma: qp %#x: no remote qp %#x", q.num, r.QPN)
	}
	if p.psn != r.PSN || p.dev.addr.LID != r.Addr.LID {
		return fmt.Errorf("fake rdma: qp %#x: remote qp %#x has psn %#x lid %d, not %#x lid %d",
			q.num, r.QPN, p.psn, p.dev.addr.LID, r.PSN, r.Addr.LID)
	}
	q.peer = r.QPN
	q.state = qpRTS
	return nil
}

// toError moves q to the error state and flushes its posted receives; f.mu
// is held.
func (q *fakeQP) toError() {
	if q.state == qpError || q.state == qpClosed {
		return
	}
	q.state = qpError
	for _, id := range q.recvs {
		q.recv.push(fakeEntry{c: rdma.Completion{ID: id, Status: rdma.StatusWRFlushErr, Text: rdma.StatusWRFlushErr.String(), QPN: q.num}})
	}
	q.recvs = q.recvs[:0]
}

func (q *fakeQP) Fail() error {
	q.f.mu.Lock()
	defer q.f.mu.Unlock()
	q.toError()
	return nil
}

func (q *fakeQP) PostRecv(id uint64) error {
	q.f.mu.Lock()
	defer q.f.mu.Unlock()
	switch q.state {
	case qpClosed:
		return fmt.Errorf("fake rdma: post recv on destroyed qp %#x", q.num)
	case qpError:
		q.recv.push(fakeEntry{c: rdma.Completion{ID: id, Status: rdma.StatusWRFlushErr, Text: rdma.StatusWRFlushErr.String(), QPN: q.num}})
		return nil
	}
	if len(q.recvs) >= q.maxRecv {
		return fmt.Errorf("fake rdma: post recv on qp %#x: receive queue full (%d)", q.num, q.maxRecv)
	}
	q.recvs = append(q.recvs, id)
	return nil
}

// complete finishes send work request w with status s; f.mu is held. Any
// failure also moves q to the error state.
func (q *fakeQP) complete(w *rdma.Write, s rdma.Status) {
	q.unsignaled++
	if s == rdma.StatusSuccess && !w.Signaled {
		return
	}
	e := fakeEntry{c: rdma.Completion{ID: w.ID, Status: s, QPN: q.num}, qp: q, reclaim: q.unsignaled}
	q.unsignaled = 0
	if s == rdma.StatusSuccess {
		e.c.Opcode = rdma.OpRDMAWrite
		e.c.Bytes = uint32(w.Len)
	} else {
		e.c.Text = s.String()
	}
	q.send.push(e)
	if s != rdma.StatusSuccess && s != rdma.StatusWRFlushErr {
		q.toError()
	}
}

func (q *fakeQP) PostWrite(w *rdma.Write) error {
	f := q.f
	f.mu.Lock()
	defer f.mu.Unlock()
	switch q.state {
	case qpClosed:
		return fmt.Errorf("fake rdma: post send on destroyed qp %#x", q.num)
	case qpInit:
		return fmt.Errorf("fake rdma: post send on qp %#x before it is connected", q.num)
	}
	if q.outstanding >= q.maxSend {
		return fmt.Errorf("fake rdma: post send on qp %#x: send queue full (%d)", q.num, q.maxSend)
	}
	q.outstanding++
	if q.state == qpError {
		q.complete(w, rdma.StatusWRFlushErr)
		return nil
	}
	lm, ok := w.Local.(*fakeMR)
	if w.Len > 0 && (!ok || lm.closed || w.Offset < 0 || w.Offset+w.Len > len(lm.buf)) {
		q.complete(w, rdma.StatusLocProtErr)
		return nil
	}
	p, ok := f.qps[q.peer]
	if !ok || p.dead || p.state == qpClosed || p.state == qpError {
		q.complete(w, rdma.StatusRetryExcErr)
		return nil
	}
	var dst []byte
	if w.Len > 0 {
		rm, ok := f.mrs[w.RKey]
		if !ok || rm.dev != p.dev || rm.access&rdma.RemoteWrite == 0 ||
			w.RemoteAddr < rm.addr || w.RemoteAddr-rm.addr > uint64(len(rm.buf)) ||
			uint64(w.Len) > uint64(len(rm.buf))-(w.RemoteAddr-rm.addr) {
			q.complete(w, rdma.StatusRemAccessErr)
			return nil
		}
		dst = rm.buf[w.RemoteAddr-rm.addr:]
	}
	if w.Imm && len(p.recvs) == 0 {
		q.complete(w, rdma.StatusRNRRetryExcErr)
		return nil
	}
	if w.Len > 0 {
		placeBytes(dst[:w.Len], lm.buf[w.Offset:w.Offset+w.Len])
	}
	if w.Imm {
		id := p.recvs[0]
		p.recvs = append(p.recvs[:0], p.recvs[1:]...)
		p.recv.push(fakeEntry{c: rdma.Completion{ID: id, Opcode: rdma.OpRecvRDMAWithImm, Imm: w.ImmData, Bytes: uint32(w.Len), QPN: p.num}})
	}
	q.complete(w, rdma.StatusSuccess)
	return nil
}

func (q *fakeQP) Close() error {
	q.f.mu.Lock()
	defer q.f.mu.Unlock()
	q.state = qpClosed
	delete(q.f.qps, q.num)
	return nil
}

// placeBytes copies src to dst as a NIC would: aligned 8-byte words are
// read and written whole (atomically), so an LL slot's {data, flag} words,
// which the executors access atomically, never tear and never race.
func placeBytes(dst, src []byte) {
	if len(dst)%8 != 0 || !mem.Aligned(dst, 8) || !mem.Aligned(src, 8) {
		copy(dst, src)
		return
	}
	d, s := mem.Slice[atomic.Uint64](dst), mem.Slice[atomic.Uint64](src)
	for i := range d {
		d[i].Store(s[i].Load())
	}
}
