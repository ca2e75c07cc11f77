//go:build ibverbs

package rdma

import (
	"errors"
	"fmt"
	"math/rand/v2"

	"github.com/ringo-ccl/ringo/internal/verbs"
)

// Verbs is the Provider over libibverbs (package internal/verbs), with
// the environment's settings.
type Verbs struct {
	Params
}

var _ Provider = (*Verbs)(nil)

// NewVerbs returns the verbs provider configured from the environment
// (ParamsFromEnv, whose errors it returns).
func NewVerbs() (*Verbs, error) {
	p, err := ParamsFromEnv()
	if err != nil {
		return nil, err
	}
	return &Verbs{p}, nil
}

type verbsDevice struct {
	v    *Verbs
	ctx  *verbs.Context
	pd   *verbs.PD
	port int
	addr PortAddr
}

// Open opens port of device name; the port must be ACTIVE.
func (v *Verbs) Open(name string, port int) (Device, error) {
	ctx, err := verbs.Open(name)
	if err != nil {
		return nil, err
	}
	d := &verbsDevice{v: v, ctx: ctx, port: port}
	if err := d.setup(); err != nil {
		d.Close()
		return nil, fmt.Errorf("rdma %s:%d: %w", name, port, err)
	}
	return d, nil
}

func (d *verbsDevice) setup() error {
	attr, err := d.ctx.QueryPort(d.port)
	if err != nil {
		return err
	}
	if attr.State != verbs.PortActive {
		return fmt.Errorf("port is %v, not ACTIVE", attr.State)
	}
	d.addr = PortAddr{LID: attr.LID, MTU: MTU(attr.ActiveMTU), GIDIndex: -1}
	vg, err := d.ctx.GIDs(d.port, attr.GIDTblLen)
	if err != nil {
		return err
	}
	gids := make([]GIDEntry, len(vg))
	for i, e := range vg {
		gids[i] = GIDEntry{Index: e.Index, GID: e.GID, Type: GIDType(e.Type)}
	}
	if attr.LinkLayer == verbs.LinkEthernet || d.v.GIDIndex >= 0 {
		g, err := PickGID(gids, d.v.GIDIndex)
		if err != nil {
			return fmt.Errorf("%v link: %w", attr.LinkLayer, err)
		}
		d.addr.GID, d.addr.GIDIndex, d.addr.Global = g.GID, g.Index, true
	}
	d.pd, err = d.ctx.AllocPD()
	return err
}

func (d *verbsDevice) Name() string   { return d.ctx.Name() }
func (d *verbsDevice) Port() int      { return d.port }
func (d *verbsDevice) Addr() PortAddr { return d.addr }

func (d *verbsDevice) Close() error {
	var errs []error
	if d.pd != nil {
		errs = append(errs, d.pd.Dealloc())
		d.pd = nil
	}
	return errors.Join(append(errs, d.ctx.Close())...)
}

type verbsMR struct{ mr *verbs.MR }

func (m verbsMR) Addr() uint64 { return m.mr.Addr }
func (m verbsMR) Len() int     { return m.mr.Len }
func (m verbsMR) LKey() uint32 { return m.mr.LKey }
func (m verbsMR) RKey() uint32 { return m.mr.RKey }
func (m verbsMR) Close() error { return m.mr.Dereg() }

func wrapMR(mr *verbs.MR, err error) (MR, error) {
	if err != nil {
		return nil, err
	}
	return verbsMR{mr}, nil
}

func (d *verbsDevice) RegHost(b []byte, access Access) (MR, error) {
	return wrapMR(d.pd.RegHost(b, verbs.Access(access)))
}

func (d *verbsDevice) RegAddr(addr uint64, n int, access Access) (MR, error) {
	return wrapMR(d.pd.RegMR(uintptr(addr), n, verbs.Access(access)))
}

func (d *verbsDevice) RegDmabuf(fd int, offset uint64, n int, iova uint64, access Access) (MR, error) {
	return wrapMR(d.pd.RegDmabuf(fd, offset, n, iova, verbs.Access(access)))
}

type verbsCQ struct {
	cq  *verbs.CQ
	buf [16]verbs.Completion
}

func (d *verbsDevice) CreateCQ(depth int) (CQ, error) {
	cq, err := d.ctx.CreateCQ(depth)
	if err != nil {
		return nil, err
	}
	return &verbsCQ{cq: cq}, nil
}

func (q *verbsCQ) Poll(out []Completion) (int, error) {
	n, err := q.cq.Poll(q.buf[:min(len(out), len(q.buf))])
	for i, c := range q.buf[:n] {
		out[i] = Completion{ID: c.WRID, Status: Status(c.Status), Text: c.StatusText,
			Opcode: Opcode(c.Opcode), Imm: c.Imm, Bytes: c.ByteLen, QPN: c.QPNum}
	}
	return n, err
}

func (q *verbsCQ) Close() error { return q.cq.Destroy() }

type verbsQP struct {
	d   *verbsDevice
	qp  *verbs.QP
	psn uint32
}

// CreateQP creates an RC queue pair and moves it to INIT.
func (d *verbsDevice) CreateQP(send, recv CQ, maxSend, maxRecv int) (QP, error) {
	s, ok1 := send.(*verbsCQ)
	r, ok2 := recv.(*verbsCQ)
	if !ok1 || !ok2 {
		return nil, errors.New("rdma: completion queues from another provider")
	}
	qp, err := d.pd.CreateQP(s.cq, r.cq, maxSend, maxRecv)
	if err != nil {
		return nil, err
	}
	if err := qp.Init(d.port, verbs.AccessLocalWrite|verbs.AccessRemoteWrite); err != nil {
		qp.Destroy()
		return nil, err
	}
	return &verbsQP{d: d, qp: qp, psn: rand.Uint32() & 0xffffff}, nil
}

func (q *verbsQP) Num() uint32 { return q.qp.Num }
func (q *verbsQP) PSN() uint32 { return q.psn }

func (q *verbsQP) Connect(r Remote) error {
	v, local := q.d.v, q.d.addr
	return q.qp.Connect(verbs.QPParams{
		Port: uint8(q.d.port), RemoteQPN: r.QPN, RemotePSN: r.PSN, LocalPSN: q.psn,
		RemoteLID: r.Addr.LID, RemoteGID: r.Addr.GID, Global: local.Global, SGIDIndex: uint8(max(local.GIDIndex, 0)),
		MTU: verbs.MTU(r.Addr.MTU), SL: v.SL, TC: v.TC, Timeout: v.Timeout, RetryCnt: v.RetryCnt,
		RNRRetry: 7, MinRNRTime: 12,
	})
}

func (q *verbsQP) PostWrite(w *Write) error {
	var laddr uint64
	var lkey uint32
	if w.Len > 0 {
		m, ok := w.Local.(verbsMR)
		if !ok {
			return errors.New("rdma: write from a region of another provider")
		}
		laddr, lkey = m.mr.Addr+uint64(w.Offset), m.mr.LKey
	}
	return q.qp.PostWrite(w.ID, laddr, uint32(w.Len), lkey, w.RemoteAddr, w.RKey, w.Imm, w.ImmData, w.Signaled)
}

func (q *verbsQP) PostRecv(id uint64) error { return q.qp.PostRecv(id) }
func (q *verbsQP) Fail() error              { return q.qp.ToError() }
func (q *verbsQP) Close() error             { return q.qp.Destroy() }
