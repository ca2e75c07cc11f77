//go:build !ibverbs

package verbs

import (
	"fmt"

	"github.com/ringo-ccl/ringo/internal/errs"
)

// errNoVerbs is what every call returns in a build without the ibverbs tag.
var errNoVerbs = fmt.Errorf("ibverbs: %w: built without the ibverbs tag", errs.ErrNotSupported)

// DeviceNames reports that this build has no verbs.
func DeviceNames() ([]string, error) { return nil, errNoVerbs }

// Context is an open device; this build cannot open one.
type Context struct{}

// Open reports that this build has no verbs.
func Open(name string) (*Context, error) { return nil, errNoVerbs }

func (c *Context) Name() string                         { return "" }
func (c *Context) Close() error                         { return errNoVerbs }
func (c *Context) QueryPort(port int) (PortAttr, error) { return PortAttr{}, errNoVerbs }
func (c *Context) QueryGID(port, index int) (GIDEntry, error) {
	return GIDEntry{}, errNoVerbs
}
func (c *Context) GIDs(port, tableLen int) ([]GIDEntry, error) { return nil, errNoVerbs }
func (c *Context) AllocPD() (*PD, error)                       { return nil, errNoVerbs }
func (c *Context) CreateCQ(depth int) (*CQ, error)             { return nil, errNoVerbs }

// PD is a protection domain; this build cannot make one.
type PD struct{}

func (p *PD) Dealloc() error                                        { return errNoVerbs }
func (p *PD) RegMR(addr uintptr, n int, access Access) (*MR, error) { return nil, errNoVerbs }
func (p *PD) RegHost(b []byte, access Access) (*MR, error)          { return nil, errNoVerbs }
func (p *PD) RegDmabuf(fd int, offset uint64, n int, iova uint64, access Access) (*MR, error) {
	return nil, errNoVerbs
}
func (p *PD) CreateQP(send, recv *CQ, maxSend, maxRecv int) (*QP, error) { return nil, errNoVerbs }

// MR is a registered memory region; this build cannot make one.
type MR struct {
	Addr       uint64
	Len        int
	LKey, RKey uint32
}

func (m *MR) Dereg() error { return errNoVerbs }

// CQ is a completion queue; this build cannot make one.
type CQ struct{}

func (q *CQ) Poll(out []Completion) (int, error) { return 0, errNoVerbs }
func (q *CQ) Destroy() error                     { return errNoVerbs }

// StatusString names a completion status; this build has no table.
func StatusString(status int) string { return fmt.Sprintf("completion status %d", status) }

// QP is a queue pair; this build cannot make one.
type QP struct{ Num uint32 }

func (q *QP) Init(port int, access Access) error { return errNoVerbs }
func (q *QP) Connect(p QPParams) error           { return errNoVerbs }
func (q *QP) ToError() error                     { return errNoVerbs }
func (q *QP) PostWrite(wrID, laddr uint64, n uint32, lkey uint32, raddr uint64, rkey uint32, withImm bool, imm uint32, signaled bool) error {
	return errNoVerbs
}
func (q *QP) PostRecv(wrID uint64) error { return errNoVerbs }
func (q *QP) Destroy() error             { return errNoVerbs }
