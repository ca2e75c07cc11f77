//go:build ibverbs

package verbs

/*
#cgo LDFLAGS: -libverbs
#include <errno.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>
#include <arpa/inet.h>
#include <infiniband/verbs.h>

// The helpers below exist because the verbs calls they wrap are static
// inline functions or macros in verbs.h, or take structs that are easier to
// fill on the C stack than from Go.

static int ringo_query_port(struct ibv_context *ctx, uint8_t port, struct ibv_port_attr *attr) {
	memset(attr, 0, sizeof *attr);
	return ibv_query_port(ctx, port, attr);
}

static int ringo_query_gid(struct ibv_context *ctx, uint8_t port, uint32_t index,
                           uint8_t *gid, uint32_t *type) {
	struct ibv_gid_entry e;
	memset(&e, 0, sizeof e);
	int rc = ibv_query_gid_ex(ctx, port, index, &e, 0);
	if (rc != 0) {
		// Older kernels lack the extended query: fall back to the plain one.
		if (rc == EOPNOTSUPP || rc == ENOSYS) {
			union ibv_gid g;
			if (ibv_query_gid(ctx, port, (int)index, &g) != 0) {
				return errno ? errno : EINVAL;
			}
			memcpy(gid, g.raw, 16);
			*type = IBV_GID_TYPE_IB;
			return 0;
		}
		return rc;
	}
	memcpy(gid, e.gid.raw, 16);
	*type = e.gid_type;
	return 0;
}

static struct ibv_mr *ringo_reg_mr(struct ibv_pd *pd, uint64_t addr, size_t len, int access) {
	return ibv_reg_mr(pd, (void *)(uintptr_t)addr, len, access);
}

static struct ibv_qp *ringo_create_qp(struct ibv_pd *pd, struct ibv_cq *scq, struct ibv_cq *rcq,
                                      uint32_t max_send, uint32_t max_recv) {
	struct ibv_qp_init_attr a;
	memset(&a, 0, sizeof a);
	a.send_cq = scq;
	a.recv_cq = rcq;
	a.qp_type = IBV_QPT_RC;
	a.cap.max_send_wr = max_send;
	a.cap.max_recv_wr = max_recv;
	a.cap.max_send_sge = 1;
	a.cap.max_recv_sge = 1;
	a.cap.max_inline_data = 0;
	return ibv_create_qp(pd, &a);
}

static int ringo_qp_init(struct ibv_qp *qp, uint8_t port, int access) {
	struct ibv_qp_attr a;
	memset(&a, 0, sizeof a);
	a.qp_state = IBV_QPS_INIT;
	a.pkey_index = 0;
	a.port_num = port;
	a.qp_access_flags = access;
	return ibv_modify_qp(qp, &a, IBV_QP_STATE | IBV_QP_PKEY_INDEX | IBV_QP_PORT | IBV_QP_ACCESS_FLAGS);
}

static int ringo_qp_rtr(struct ibv_qp *qp, uint8_t port, uint32_t dest_qpn, uint32_t rq_psn, int mtu,
                        uint16_t dlid, int global, const uint8_t *dgid, uint8_t sgid_index,
                        uint8_t sl, uint8_t tc, uint8_t min_rnr_timer) {
	struct ibv_qp_attr a;
	memset(&a, 0, sizeof a);
	a.qp_state = IBV_QPS_RTR;
	a.path_mtu = (enum ibv_mtu)mtu;
	a.dest_qp_num = dest_qpn;
	a.rq_psn = rq_psn;
	a.max_dest_rd_atomic = 1;
	a.min_rnr_timer = min_rnr_timer;
	a.ah_attr.is_global = global ? 1 : 0;
	a.ah_attr.dlid = dlid;
	a.ah_attr.sl = sl;
	a.ah_attr.src_path_bits = 0;
	a.ah_attr.port_num = port;
	if (global) {
		memcpy(a.ah_attr.grh.dgid.raw, dgid, 16);
		a.ah_attr.grh.flow_label = 0;
		a.ah_attr.grh.sgid_index = sgid_index;
		a.ah_attr.grh.hop_limit = 255;
		a.ah_attr.grh.traffic_class = tc;
	}
	return ibv_modify_qp(qp, &a, IBV_QP_STATE | IBV_QP_AV | IBV_QP_PATH_MTU | IBV_QP_DEST_QPN |
	                              IBV_QP_RQ_PSN | IBV_QP_MAX_DEST_RD_ATOMIC | IBV_QP_MIN_RNR_TIMER);
}

static int ringo_qp_rts(struct ibv_qp *qp, uint32_t sq_psn, uint8_t timeout, uint8_t retry_cnt, uint8_t rnr_retry) {
	struct ibv_qp_attr a;
	memset(&a, 0, sizeof a);
	a.qp_state = IBV_QPS_RTS;
	a.timeout = timeout;
	a.retry_cnt = retry_cnt;
	a.rnr_retry = rnr_retry;
	a.sq_psn = sq_psn;
	a.max_rd_atomic = 1;
	return ibv_modify_qp(qp, &a, IBV_QP_STATE | IBV_QP_TIMEOUT | IBV_QP_RETRY_CNT | IBV_QP_RNR_RETRY |
	                              IBV_QP_SQ_PSN | IBV_QP_MAX_QP_RD_ATOMIC);
}

static int ringo_qp_err(struct ibv_qp *qp) {
	struct ibv_qp_attr a;
	memset(&a, 0, sizeof a);
	a.qp_state = IBV_QPS_ERR;
	return ibv_modify_qp(qp, &a, IBV_QP_STATE);
}

static int ringo_post_write(struct ibv_qp *qp, uint64_t wr_id, uint64_t laddr, uint32_t len, uint32_t lkey,
                            uint64_t raddr, uint32_t rkey, int with_imm, uint32_t imm, int signaled) {
	struct ibv_sge sge;
	struct ibv_send_wr wr, *bad = NULL;
	memset(&wr, 0, sizeof wr);
	sge.addr = laddr;
	sge.length = len;
	sge.lkey = lkey;
	wr.wr_id = wr_id;
	wr.sg_list = len ? &sge : NULL;
	wr.num_sge = len ? 1 : 0;
	wr.opcode = with_imm ? IBV_WR_RDMA_WRITE_WITH_IMM : IBV_WR_RDMA_WRITE;
	wr.send_flags = signaled ? IBV_SEND_SIGNALED : 0;
	wr.imm_data = htonl(imm);
	wr.wr.rdma.remote_addr = raddr;
	wr.wr.rdma.rkey = rkey;
	return ibv_post_send(qp, &wr, &bad);
}

static int ringo_post_recv(struct ibv_qp *qp, uint64_t wr_id) {
	struct ibv_recv_wr wr, *bad = NULL;
	memset(&wr, 0, sizeof wr);
	wr.wr_id = wr_id;
	wr.sg_list = NULL;
	wr.num_sge = 0;
	return ibv_post_recv(qp, &wr, &bad);
}

typedef struct {
	uint64_t wr_id;
	uint32_t status, opcode, imm, byte_len, qp_num, vendor_err;
} ringo_wc;

static int ringo_poll(struct ibv_cq *cq, int n, struct ibv_wc *wcs, ringo_wc *out) {
	int got = ibv_poll_cq(cq, n, wcs);
	for (int i = 0; i < got; i++) {
		out[i].wr_id = wcs[i].wr_id;
		out[i].status = wcs[i].status;
		out[i].opcode = wcs[i].opcode;
		out[i].imm = (wcs[i].wc_flags & IBV_WC_WITH_IMM) ? ntohl(wcs[i].imm_data) : 0;
		out[i].byte_len = wcs[i].byte_len;
		out[i].qp_num = wcs[i].qp_num;
		out[i].vendor_err = wcs[i].vendor_err;
	}
	return got;
}
*/
import "C"

import (
	"errors"
	"fmt"
	"syscall"
	"unsafe"
)

// errnoOr returns err when it is a non-zero errno, else a generic error for
// a call that failed without setting errno.
func errnoOr(err error, what string) error {
	var en syscall.Errno
	if errors.As(err, &en) && en != 0 {
		return fmt.Errorf("%s: %w", what, err)
	}
	return fmt.Errorf("%s failed", what)
}

func rcErr(rc C.int, what string) error {
	if rc == 0 {
		return nil
	}
	if rc < 0 {
		rc = -rc
	}
	return fmt.Errorf("%s: %w", what, syscall.Errno(rc))
}

// DeviceNames lists the RDMA devices libibverbs sees, in its order.
func DeviceNames() ([]string, error) {
	var n C.int
	list, err := C.ibv_get_device_list(&n)
	if list == nil {
		return nil, errnoOr(err, "ibv_get_device_list")
	}
	defer C.ibv_free_device_list(list)
	devs := unsafe.Slice(list, int(n))
	names := make([]string, 0, len(devs))
	for _, d := range devs {
		names = append(names, C.GoString(C.ibv_get_device_name(d)))
	}
	return names, nil
}

// Context is an open device.
type Context struct {
	name string
	ctx  *C.struct_ibv_context
}

// Open opens the RDMA device called name.
func Open(name string) (*Context, error) {
	var n C.int
	list, err := C.ibv_get_device_list(&n)
	if list == nil {
		return nil, errnoOr(err, "ibv_get_device_list")
	}
	defer C.ibv_free_device_list(list)
	var found []string
	for _, d := range unsafe.Slice(list, int(n)) {
		dn := C.GoString(C.ibv_get_device_name(d))
		if dn != name {
			found = append(found, dn)
			continue
		}
		ctx, err := C.ibv_open_device(d)
		if ctx == nil {
			return nil, errnoOr(err, "ibv_open_device "+name)
		}
		return &Context{name: name, ctx: ctx}, nil
	}
	return nil, fmt.Errorf("no RDMA device %q (libibverbs lists %v)", name, found)
}

// Name is the device's name.
func (c *Context) Name() string { return c.name }

// Close closes the device. Every object made from it must be destroyed first.
func (c *Context) Close() error {
	if c.ctx == nil {
		return nil
	}
	rc := C.ibv_close_device(c.ctx)
	c.ctx = nil
	return rcErr(rc, "ibv_close_device "+c.name)
}

// QueryPort returns the attributes of port (1-based).
func (c *Context) QueryPort(port int) (PortAttr, error) {
	var a C.struct_ibv_port_attr
	if rc := C.ringo_query_port(c.ctx, C.uint8_t(port), &a); rc != 0 {
		return PortAttr{}, rcErr(rc, fmt.Sprintf("ibv_query_port %s:%d", c.name, port))
	}
	return PortAttr{
		State:     PortState(a.state),
		LID:       uint16(a.lid),
		LinkLayer: LinkLayer(a.link_layer),
		ActiveMTU: MTU(a.active_mtu),
		GIDTblLen: int(a.gid_tbl_len),
	}, nil
}

// QueryGID returns entry index of port's GID table.
func (c *Context) QueryGID(port, index int) (GIDEntry, error) {
	var gid [16]C.uint8_t
	var typ C.uint32_t
	if rc := C.ringo_query_gid(c.ctx, C.uint8_t(port), C.uint32_t(index), &gid[0], &typ); rc != 0 {
		return GIDEntry{}, rcErr(rc, fmt.Sprintf("ibv_query_gid_ex %s:%d index %d", c.name, port, index))
	}
	e := GIDEntry{Index: index, Type: GIDType(typ)}
	for i := range gid {
		e.GID[i] = byte(gid[i])
	}
	return e, nil
}

// GIDs returns the populated entries of port's GID table (the first
// tableLen, from PortAttr.GIDTblLen); empty entries are left out.
func (c *Context) GIDs(port, tableLen int) ([]GIDEntry, error) {
	var out []GIDEntry
	for i := 0; i < tableLen; i++ {
		e, err := c.QueryGID(port, i)
		if err != nil {
			if errors.Is(err, syscall.ENODATA) || errors.Is(err, syscall.EINVAL) {
				continue
			}
			return out, err
		}
		out = append(out, e)
	}
	return out, nil
}

// PD is a protection domain.
type PD struct {
	c  *Context
	pd *C.struct_ibv_pd
}

// AllocPD allocates a protection domain.
func (c *Context) AllocPD() (*PD, error) {
	pd, err := C.ibv_alloc_pd(c.ctx)
	if pd == nil {
		return nil, errnoOr(err, "ibv_alloc_pd "+c.name)
	}
	return &PD{c: c, pd: pd}, nil
}

// Dealloc frees the protection domain.
func (p *PD) Dealloc() error {
	if p.pd == nil {
		return nil
	}
	rc := C.ibv_dealloc_pd(p.pd)
	p.pd = nil
	return rcErr(rc, "ibv_dealloc_pd")
}

// MR is a registered memory region.
type MR struct {
	mr   *C.struct_ibv_mr
	Addr uint64 // the region's address (its iova for a dma-buf region)
	Len  int
	LKey uint32
	RKey uint32
}

func newMR(mr *C.struct_ibv_mr, addr uint64, n int) *MR {
	return &MR{mr: mr, Addr: addr, Len: n, LKey: uint32(mr.lkey), RKey: uint32(mr.rkey)}
}

// RegMR registers n bytes at addr: host memory, or GPU memory where
// nvidia-peermem is loaded. The caller keeps the memory alive and unmoved
// until Dereg.
func (p *PD) RegMR(addr uintptr, n int, access Access) (*MR, error) {
	mr, err := C.ringo_reg_mr(p.pd, C.uint64_t(addr), C.size_t(n), C.int(access))
	if mr == nil {
		return nil, errnoOr(err, fmt.Sprintf("ibv_reg_mr %#x+%d", addr, n))
	}
	return newMR(mr, uint64(addr), n), nil
}

// RegHost registers host memory b. The caller keeps b alive until Dereg
// (Go's collector does not move heap memory).
func (p *PD) RegHost(b []byte, access Access) (*MR, error) {
	if len(b) == 0 {
		return nil, fmt.Errorf("ibv_reg_mr: empty buffer")
	}
	return p.RegMR(uintptr(unsafe.Pointer(unsafe.SliceData(b))), len(b), access)
}

// RegDmabuf registers n bytes starting offset bytes into the dma-buf fd,
// addressed by the NIC as iova. The fd may be closed once this returns.
func (p *PD) RegDmabuf(fd int, offset uint64, n int, iova uint64, access Access) (*MR, error) {
	mr, err := C.ibv_reg_dmabuf_mr(p.pd, C.uint64_t(offset), C.size_t(n), C.uint64_t(iova), C.int(fd), C.int(access))
	if mr == nil {
		return nil, errnoOr(err, fmt.Sprintf("ibv_reg_dmabuf_mr fd %d offset %d len %d", fd, offset, n))
	}
	return newMR(mr, iova, n), nil
}

// Dereg deregisters the region.
func (m *MR) Dereg() error {
	if m.mr == nil {
		return nil
	}
	rc := C.ibv_dereg_mr(m.mr)
	m.mr = nil
	return rcErr(rc, "ibv_dereg_mr")
}

// CQ is a completion queue with C-side arrays for polling.
type CQ struct {
	cq  *C.struct_ibv_cq
	wcs *C.struct_ibv_wc
	out *C.ringo_wc
	max int
}

// pollBatch is the most completions one Poll returns.
const pollBatch = 16

// CreateCQ creates a completion queue of at least depth entries.
func (c *Context) CreateCQ(depth int) (*CQ, error) {
	cq, err := C.ibv_create_cq(c.ctx, C.int(depth), nil, nil, 0)
	if cq == nil {
		return nil, errnoOr(err, fmt.Sprintf("ibv_create_cq depth %d", depth))
	}
	q := &CQ{cq: cq, max: pollBatch}
	q.wcs = (*C.struct_ibv_wc)(C.calloc(C.size_t(pollBatch), C.size_t(unsafe.Sizeof(C.struct_ibv_wc{}))))
	q.out = (*C.ringo_wc)(C.calloc(C.size_t(pollBatch), C.size_t(unsafe.Sizeof(C.ringo_wc{}))))
	if q.wcs == nil || q.out == nil {
		q.Destroy()
		return nil, fmt.Errorf("ibv_create_cq: out of memory for the poll arrays")
	}
	return q, nil
}

// Poll fills out with up to len(out) completions (at most 16 per call) and
// returns how many. It allocates only for a failed completion's text.
func (q *CQ) Poll(out []Completion) (int, error) {
	n := min(len(out), q.max)
	if n == 0 {
		return 0, nil
	}
	got := int(C.ringo_poll(q.cq, C.int(n), q.wcs, q.out))
	if got < 0 {
		return 0, fmt.Errorf("ibv_poll_cq: error %d", got)
	}
	src := unsafe.Slice(q.out, q.max)
	for i := 0; i < got; i++ {
		w := &src[i]
		out[i] = Completion{
			WRID:      uint64(w.wr_id),
			Status:    int(w.status),
			Opcode:    Opcode(w.opcode),
			Imm:       uint32(w.imm),
			ByteLen:   uint32(w.byte_len),
			QPNum:     uint32(w.qp_num),
			VendorErr: uint32(w.vendor_err),
		}
		if w.status != 0 {
			out[i].StatusText = StatusString(int(w.status))
		}
	}
	return got, nil
}

// StatusString is ibv_wc_status_str.
func StatusString(status int) string {
	return C.GoString(C.ibv_wc_status_str(C.enum_ibv_wc_status(status)))
}

// Destroy destroys the queue. No poller may be using it.
func (q *CQ) Destroy() error {
	var err error
	if q.cq != nil {
		err = rcErr(C.ibv_destroy_cq(q.cq), "ibv_destroy_cq")
		q.cq = nil
	}
	C.free(unsafe.Pointer(q.wcs))
	C.free(unsafe.Pointer(q.out))
	q.wcs, q.out = nil, nil
	return err
}

// QP is a reliable-connected queue pair.
type QP struct {
	qp  *C.struct_ibv_qp
	Num uint32
}

// CreateQP creates an RC queue pair in the RESET state.
func (p *PD) CreateQP(send, recv *CQ, maxSend, maxRecv int) (*QP, error) {
	qp, err := C.ringo_create_qp(p.pd, send.cq, recv.cq, C.uint32_t(maxSend), C.uint32_t(maxRecv))
	if qp == nil {
		return nil, errnoOr(err, fmt.Sprintf("ibv_create_qp RC send %d recv %d", maxSend, maxRecv))
	}
	return &QP{qp: qp, Num: uint32(qp.qp_num)}, nil
}

// Init moves the queue pair to INIT on port with the given remote access.
// Receives may be posted from INIT on.
func (q *QP) Init(port int, access Access) error {
	return rcErr(C.ringo_qp_init(q.qp, C.uint8_t(port), C.int(access)), fmt.Sprintf("qp %#x to INIT", q.Num))
}

// Connect moves the queue pair from INIT through RTR to RTS, joined to the
// remote queue pair p describes.
func (q *QP) Connect(p QPParams) error {
	global := C.int(0)
	if p.Global {
		global = 1
	}
	gid := p.RemoteGID
	rc := C.ringo_qp_rtr(q.qp, C.uint8_t(p.Port), C.uint32_t(p.RemoteQPN), C.uint32_t(p.RemotePSN), C.int(p.MTU),
		C.uint16_t(p.RemoteLID), global, (*C.uint8_t)(unsafe.Pointer(&gid[0])), C.uint8_t(p.SGIDIndex),
		C.uint8_t(p.SL), C.uint8_t(p.TC), C.uint8_t(p.MinRNRTime))
	if rc != 0 {
		return rcErr(rc, fmt.Sprintf("qp %#x to RTR (remote qp %#x, lid %d, mtu %v)", q.Num, p.RemoteQPN, p.RemoteLID, p.MTU))
	}
	rc = C.ringo_qp_rts(q.qp, C.uint32_t(p.LocalPSN), C.uint8_t(p.Timeout), C.uint8_t(p.RetryCnt), C.uint8_t(p.RNRRetry))
	return rcErr(rc, fmt.Sprintf("qp %#x to RTS", q.Num))
}

// ToError moves the queue pair to ERR: outstanding work completes with
// flush errors.
func (q *QP) ToError() error {
	return rcErr(C.ringo_qp_err(q.qp), fmt.Sprintf("qp %#x to ERR", q.Num))
}

// errPost is returned by PostWrite and PostRecv; the errno is in the
// wrapped error. Building it allocates, but only on failure.
func postErr(rc C.int, what string, q *QP) error {
	return fmt.Errorf("%s on qp %#x: %w", what, q.Num, syscall.Errno(rc))
}

// PostWrite posts an RDMA WRITE (or, withImm, a WRITE WITH IMM carrying
// imm) of n bytes from laddr (lkey) to raddr (rkey). A zero-length write
// carries no scatter entry.
func (q *QP) PostWrite(wrID, laddr uint64, n uint32, lkey uint32, raddr uint64, rkey uint32, withImm bool, imm uint32, signaled bool) error {
	wi, sig := C.int(0), C.int(0)
	if withImm {
		wi = 1
	}
	if signaled {
		sig = 1
	}
	rc := C.ringo_post_write(q.qp, C.uint64_t(wrID), C.uint64_t(laddr), C.uint32_t(n), C.uint32_t(lkey),
		C.uint64_t(raddr), C.uint32_t(rkey), wi, C.uint32_t(imm), sig)
	if rc != 0 {
		return postErr(rc, "ibv_post_send", q)
	}
	return nil
}

// PostRecv posts a zero-length receive (for WRITE WITH IMM completions).
func (q *QP) PostRecv(wrID uint64) error {
	if rc := C.ringo_post_recv(q.qp, C.uint64_t(wrID)); rc != 0 {
		return postErr(rc, "ibv_post_recv", q)
	}
	return nil
}

// Destroy destroys the queue pair.
func (q *QP) Destroy() error {
	if q.qp == nil {
		return nil
	}
	rc := C.ibv_destroy_qp(q.qp)
	q.qp = nil
	return rcErr(rc, "ibv_destroy_qp")
}
