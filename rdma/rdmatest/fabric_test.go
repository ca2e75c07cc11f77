package rdmatest

import (
	"strings"
	"testing"

	"github.com/ringo-ccl/ringo/internal/mem"
	"github.com/ringo-ccl/ringo/rdma"
)

// fakeEnds are two connected fake queue pairs with a registered buffer each.
type fakeEnds struct {
	f                *Fabric
	a, b             rdma.QP
	aCQ, bSCQ, bRCQ  rdma.CQ
	aSCQ             rdma.CQ
	aBuf, bBuf       []byte
	aMR, bMR, bROnly rdma.MR
}

func newFakeEnds(t *testing.T) *fakeEnds {
	t.Helper()
	e := &fakeEnds{f: NewFabric(), aBuf: mem.Alloc(256, 64), bBuf: mem.Alloc(256, 64)}
	da, _ := e.f.Open("a", 1)
	db, _ := e.f.Open("b", 1)
	must := func(err error) {
		t.Helper()
		if err != nil {
			t.Fatal(err)
		}
	}
	var err error
	e.aMR, err = da.RegHost(e.aBuf, rdma.LocalWrite)
	must(err)
	e.bMR, err = db.RegHost(e.bBuf[:128], rdma.LocalWrite|rdma.RemoteWrite)
	must(err)
	e.bROnly, err = db.RegHost(e.bBuf[128:], rdma.LocalWrite)
	must(err)
	e.aSCQ, _ = da.CreateCQ(8)
	e.aCQ, _ = da.CreateCQ(8)
	e.bSCQ, _ = db.CreateCQ(8)
	e.bRCQ, _ = db.CreateCQ(8)
	e.a, err = da.CreateQP(e.aSCQ, e.aCQ, 4, 4)
	must(err)
	e.b, err = db.CreateQP(e.bSCQ, e.bRCQ, 4, 4)
	must(err)
	must(e.a.Connect(rdma.Remote{QPN: e.b.Num(), PSN: e.b.PSN(), Addr: db.Addr()}))
	must(e.b.Connect(rdma.Remote{QPN: e.a.Num(), PSN: e.a.PSN(), Addr: da.Addr()}))
	return e
}

func pollAll(t *testing.T, cq rdma.CQ) []rdma.Completion {
	t.Helper()
	buf := make([]rdma.Completion, 16)
	n, err := cq.Poll(buf)
	if err != nil {
		t.Fatal(err)
	}
	return buf[:n]
}

func TestFakeWrite(t *testing.T) {
	e := newFakeEnds(t)
	copy(e.aBuf, "hello, rdma")
	w := rdma.Write{ID: 1, Local: e.aMR, Offset: 0, Len: 11, RemoteAddr: e.bMR.Addr() + 5, RKey: e.bMR.RKey(), Signaled: true}
	if err := e.a.PostWrite(&w); err != nil {
		t.Fatal(err)
	}
	if got := string(e.bBuf[5:16]); got != "hello, rdma" {
		t.Fatalf("peer memory holds %q", got)
	}
	c := pollAll(t, e.aSCQ)
	if len(c) != 1 || c[0].ID != 1 || c[0].Status != rdma.StatusSuccess || c[0].Opcode != rdma.OpRDMAWrite {
		t.Fatalf("completions %+v", c)
	}
	if c := pollAll(t, e.bRCQ); len(c) != 0 {
		t.Fatalf("a plain write completed at the peer: %+v", c)
	}
}

func TestFakeWriteImm(t *testing.T) {
	e := newFakeEnds(t)
	w := rdma.Write{ID: 2, Local: e.aMR, Len: 4, RemoteAddr: e.bMR.Addr(), RKey: e.bMR.RKey(), Imm: true, ImmData: 77}
	// No receive posted: RNR, and the queue pair is in error.
	if err := e.a.PostWrite(&w); err != nil {
		t.Fatal(err)
	}
	c := pollAll(t, e.aSCQ)
	if len(c) != 1 || c[0].Status != rdma.StatusRNRRetryExcErr || c[0].Text != "RNR retry counter exceeded" {
		t.Fatalf("write with imm and no receive: %+v", c)
	}
	e = newFakeEnds(t)
	for id := uint64(10); id < 13; id++ {
		if err := e.b.PostRecv(id); err != nil {
			t.Fatal(err)
		}
	}
	for i := uint32(0); i < 3; i++ {
		w := rdma.Write{ID: uint64(i), Local: e.aMR, Len: 1, RemoteAddr: e.bMR.Addr() + uint64(i), RKey: e.bMR.RKey(), Imm: true, ImmData: 100 + i}
		if err := e.a.PostWrite(&w); err != nil {
			t.Fatal(err)
		}
	}
	c = pollAll(t, e.bRCQ)
	if len(c) != 3 {
		t.Fatalf("%d receive completions, want 3", len(c))
	}
	for i, c := range c { // in order, each consuming the oldest receive
		if c.ID != uint64(10+i) || c.Imm != uint32(100+i) || c.Opcode != rdma.OpRecvRDMAWithImm || c.Bytes != 1 {
			t.Errorf("completion %d: %+v", i, c)
		}
	}
}

func TestFakeRemoteAccessChecks(t *testing.T) {
	for _, c := range []struct {
		name  string
		write func(e *fakeEnds) rdma.Write
		want  rdma.Status
	}{
		{"bad rkey", func(e *fakeEnds) rdma.Write {
			return rdma.Write{Local: e.aMR, Len: 4, RemoteAddr: e.bMR.Addr(), RKey: e.bMR.RKey() + 100}
		}, rdma.StatusRemAccessErr},
		{"own rkey", func(e *fakeEnds) rdma.Write { // a key of the writer's own device
			return rdma.Write{Local: e.aMR, Len: 4, RemoteAddr: e.aMR.Addr(), RKey: e.aMR.RKey()}
		}, rdma.StatusRemAccessErr},
		{"past the end", func(e *fakeEnds) rdma.Write {
			return rdma.Write{Local: e.aMR, Len: 4, RemoteAddr: e.bMR.Addr() + 126, RKey: e.bMR.RKey()}
		}, rdma.StatusRemAccessErr},
		{"before the start", func(e *fakeEnds) rdma.Write {
			return rdma.Write{Local: e.aMR, Len: 4, RemoteAddr: e.bMR.Addr() - 1, RKey: e.bMR.RKey()}
		}, rdma.StatusRemAccessErr},
		{"no remote write access", func(e *fakeEnds) rdma.Write {
			return rdma.Write{Local: e.aMR, Len: 4, RemoteAddr: e.bROnly.Addr(), RKey: e.bROnly.RKey()}
		}, rdma.StatusRemAccessErr},
		{"local overrun", func(e *fakeEnds) rdma.Write {
			return rdma.Write{Local: e.aMR, Offset: 250, Len: 8, RemoteAddr: e.bMR.Addr(), RKey: e.bMR.RKey()}
		}, rdma.StatusLocProtErr},
	} {
		t.Run(c.name, func(t *testing.T) {
			e := newFakeEnds(t)
			copy(e.aBuf, "XXXXXXXX")
			w := c.write(e)
			if err := e.a.PostWrite(&w); err != nil {
				t.Fatal(err)
			}
			got := pollAll(t, e.aSCQ) // failures complete even unsignaled
			if len(got) != 1 || got[0].Status != c.want {
				t.Fatalf("completions %+v, want status %v", got, c.want)
			}
			if strings.Contains(string(e.bBuf), "X") {
				t.Fatalf("a failed write changed the peer's memory")
			}
			// The queue pair is now in error: later work is flushed.
			w2 := rdma.Write{ID: 9, Local: e.aMR, Len: 1, RemoteAddr: e.bMR.Addr(), RKey: e.bMR.RKey()}
			if err := e.a.PostWrite(&w2); err != nil {
				t.Fatal(err)
			}
			if got := pollAll(t, e.aSCQ); len(got) != 1 || got[0].ID != 9 || got[0].Status != rdma.StatusWRFlushErr {
				t.Fatalf("after the error: %+v", got)
			}
		})
	}
}

func TestFakeFailFlushes(t *testing.T) {
	e := newFakeEnds(t)
	e.b.PostRecv(1)
	e.b.PostRecv(2)
	if err := e.b.Fail(); err != nil {
		t.Fatal(err)
	}
	got := pollAll(t, e.bRCQ)
	if len(got) != 2 || got[0].Status != rdma.StatusWRFlushErr || got[1].ID != 2 {
		t.Fatalf("flushed receives: %+v", got)
	}
	// Writing to a peer in error: no answer, retries exhausted.
	w := rdma.Write{ID: 3, Local: e.aMR, Len: 1, RemoteAddr: e.bMR.Addr(), RKey: e.bMR.RKey()}
	e.a.PostWrite(&w)
	if got := pollAll(t, e.aSCQ); len(got) != 1 || got[0].Status != rdma.StatusRetryExcErr {
		t.Fatalf("write to a peer in error: %+v", got)
	}
}

func TestFakeSendQueueDepth(t *testing.T) {
	e := newFakeEnds(t) // 4 send work requests
	w := rdma.Write{Local: e.aMR, Len: 1, RemoteAddr: e.bMR.Addr(), RKey: e.bMR.RKey()}
	for i := 0; i < 3; i++ {
		if err := e.a.PostWrite(&w); err != nil {
			t.Fatal(err)
		}
	}
	w.Signaled = true
	if err := e.a.PostWrite(&w); err != nil {
		t.Fatal(err)
	}
	if err := e.a.PostWrite(&w); err == nil || !strings.Contains(err.Error(), "send queue full") {
		t.Fatalf("a fifth write on a 4-deep queue: %v", err)
	}
	pollAll(t, e.aSCQ) // the signaled completion reclaims all four
	if err := e.a.PostWrite(&w); err != nil {
		t.Fatalf("after reclaiming: %v", err)
	}
}

func TestFakeConnectChecks(t *testing.T) {
	f := NewFabric()
	d, _ := f.Open("a", 1)
	cq, _ := d.CreateCQ(4)
	q, _ := d.CreateQP(cq, cq, 2, 2)
	w := rdma.Write{Len: 0}
	if err := q.PostWrite(&w); err == nil {
		t.Errorf("posting before connecting succeeded")
	}
	if err := q.Connect(rdma.Remote{QPN: 0xdead}); err == nil {
		t.Errorf("connecting to a missing qp succeeded")
	}
	if _, err := f.Open("a", 0); err == nil {
		t.Errorf("port 0 opened")
	}
}
