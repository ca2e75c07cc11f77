package bench

import (
	"context"
	"fmt"

	"github.com/ringo-ccl/ringo"
	"github.com/ringo-ccl/ringo/internal/mem"
)

// layout places one collective's buffers: which buffer holds the input
// and the output (0: the send buffer, 1: the receive buffer — in-place
// calls keep both in the receive buffer), and their byte ranges.
type layout struct {
	coll             Coll
	typ              ringo.DataType
	op               ringo.Op
	count            int64
	root             int
	inBuf, outBuf    int
	inOff, inLen     int64
	outOff, outLen   int64
	inPlace          bool
	unalignedElement int64
	p2p              p2pCall // a point-to-point collective's call on the target's buffers (target.bind); nil for a ring collective
}

// target is where a rank's buffers live and how its collectives run: host
// memory through Comm.Do, or GPU memory through Comm.DoDevice and a stream.
// The harness reads and writes data only in the host buffers; a GPU target
// copies them to and from the device around a check.
type target interface {
	buffers() [2][]byte             // host send and receive buffers
	bind(l *layout)                 // makes a point-to-point layout's call on the buffers (l.p2p)
	run(l *layout) error            // one collective (enqueued, for a GPU)
	sync() error                    // wait for every enqueued collective
	upload(l *layout) error         // host → where the collective reads
	download(l *layout) error       // where the collective writes → host
	setContext(ctx context.Context) // the context of the calls from now on
	close() error
}

// hostTarget runs collectives over host memory.
type hostTarget struct {
	ctx    context.Context
	c      *ringo.Comm
	bufs   [2][]byte
	shared bool            // bufs are HostAlloc's
	wins   []*ringo.Window // their windows (Options.Windows)
}

func newHostTarget(ctx context.Context, c *ringo.Comm, bytes int64) *hostTarget {
	return &hostTarget{ctx: ctx, c: c, bufs: [2][]byte{mem.Alloc(int(bytes), 64), mem.Alloc(int(bytes), 64)}}
}

// newHostTargetFor is newHostTarget, or with windows both buffers
// HostAlloc's and registered as windows (every rank does it, in the same
// order).
func newHostTargetFor(ctx context.Context, c *ringo.Comm, bytes int64, windows bool) (*hostTarget, error) {
	if !windows {
		return newHostTarget(ctx, c, bytes), nil
	}
	h := &hostTarget{ctx: ctx, c: c, shared: true}
	for i := range h.bufs {
		b, err := ringo.HostAlloc[byte](int(max(bytes, 1)))
		if err != nil {
			h.close()
			return nil, err
		}
		h.bufs[i] = b[:bytes]
	}
	for i, b := range h.bufs {
		w, err := ringo.RegisterHostWindow(ctx, c, b[:cap(b)])
		if err != nil {
			h.close()
			return nil, fmt.Errorf("bench: registering buffer %d as a window: %w", i, err)
		}
		h.wins = append(h.wins, w)
	}
	return h, nil
}

func (h *hostTarget) buffers() [2][]byte { return h.bufs }

func (h *hostTarget) bind(l *layout) {
	l.p2p = elemCallsOf[l.typ].host(h.c, l, h.in(l), h.out(l))
}

func (h *hostTarget) run(l *layout) error {
	if l.p2p != nil {
		return l.p2p(h.ctx)
	}
	coll, _ := l.coll.Ring()
	return h.c.Do(h.ctx, ringo.Call{Coll: coll, Count: l.count, Type: l.typ, Op: l.op, Root: l.root, Send: h.in(l), Recv: h.out(l)})
}

// in and out are l's input and output.
func (h *hostTarget) in(l *layout) []byte  { return h.bufs[l.inBuf][l.inOff : l.inOff+l.inLen] }
func (h *hostTarget) out(l *layout) []byte { return h.bufs[l.outBuf][l.outOff : l.outOff+l.outLen] }

func (h *hostTarget) sync() error            { return nil }
func (h *hostTarget) upload(*layout) error   { return nil }
func (h *hostTarget) download(*layout) error { return nil }
func (h *hostTarget) close() error {
	for _, w := range h.wins {
		w.Deregister()
	}
	if h.shared {
		for _, b := range h.bufs {
			if cap(b) > 0 {
				ringo.HostFree(b[:cap(b)])
			}
		}
	}
	return nil
}

func (h *hostTarget) setContext(ctx context.Context) { h.ctx = ctx }

// gpuTarget runs collectives over GPU memory on one stream.
type gpuTarget struct {
	ctx    context.Context
	c      *ringo.Comm
	stream ringo.Stream
	bufs   [2][]byte              // host staging
	dev    [2]ringo.DevPtr[uint8] // device buffers
	wins   []*ringo.Window        // the device buffers' windows (Options.Windows)
}

// newGPUTarget allocates c's two device buffers of bytes, registered as
// windows when windows is set (every rank does it, in the same order).
func newGPUTarget(ctx context.Context, c *ringo.Comm, bytes int64, windows bool) (*gpuTarget, error) {
	g := &gpuTarget{ctx: ctx, c: c, bufs: [2][]byte{mem.Alloc(int(bytes), 64), mem.Alloc(int(bytes), 64)}}
	var err error
	if g.stream, err = ringo.NewStream(c.GPU()); err != nil {
		return nil, err
	}
	for i := range g.dev {
		if g.dev[i], err = ringo.DeviceAlloc[uint8](c.GPU(), int(bytes)); err != nil {
			g.close()
			return nil, err
		}
	}
	for i := range g.dev {
		if !windows {
			break
		}
		w, err := c.RegisterWindow(ctx, g.dev[i].Addr(), int64(g.dev[i].Len()))
		if err != nil {
			g.close()
			return nil, fmt.Errorf("bench: registering buffer %d as a window: %w", i, err)
		}
		g.wins = append(g.wins, w)
	}
	return g, nil
}

func (g *gpuTarget) buffers() [2][]byte { return g.bufs }

func (g *gpuTarget) bind(l *layout) {
	l.p2p = elemCallsOf[l.typ].device(g.c, l, g.in(l), g.out(l), g.stream)
}

func (g *gpuTarget) run(l *layout) error {
	if l.p2p != nil {
		return l.p2p(g.ctx)
	}
	coll, _ := l.coll.Ring()
	call := ringo.DeviceCall{Coll: coll, Count: l.count, Type: l.typ, Op: l.op, Root: l.root, Send: g.in(l), Recv: g.out(l)}
	return g.c.DoDevice(g.ctx, call, g.stream)
}

// in and out are the addresses of l's input and output.
func (g *gpuTarget) in(l *layout) uintptr  { return g.dev[l.inBuf].Addr() + uintptr(l.inOff) }
func (g *gpuTarget) out(l *layout) uintptr { return g.dev[l.outBuf].Addr() + uintptr(l.outOff) }

func (g *gpuTarget) sync() error { return g.c.Wait(g.ctx, g.stream) }

// grapher is a target whose calls CUDA graphs can capture (the GPU's).
type grapher interface {
	capture(calls func() error) (*ringo.Graph, error) // what calls enqueues, as a graph
	launch(g *ringo.Graph) error                      // a replay of g, enqueued
}

func (g *gpuTarget) capture(calls func() error) (*ringo.Graph, error) {
	return ringo.CaptureGraph(g.stream, calls)
}

func (g *gpuTarget) launch(gr *ringo.Graph) error { return gr.Launch(g.stream) }

func (g *gpuTarget) setContext(ctx context.Context) { g.ctx = ctx }

// upload copies both host buffers' used ranges: the input and the poisoned
// output.
func (g *gpuTarget) upload(l *layout) error {
	for i := range g.bufs {
		end := int64(0)
		if l.inBuf == i {
			end = max(end, l.inOff+l.inLen)
		}
		if l.outBuf == i {
			end = max(end, l.outOff+l.outLen)
		}
		if end == 0 {
			continue
		}
		if err := g.dev[i].CopyFrom(g.bufs[i][:end]); err != nil {
			return fmt.Errorf("uploading check data: %w", err)
		}
	}
	return nil
}

func (g *gpuTarget) download(l *layout) error {
	end := l.outOff + l.outLen
	if err := g.dev[l.outBuf].CopyTo(g.bufs[l.outBuf][:end]); err != nil {
		return fmt.Errorf("downloading results: %w", err)
	}
	return nil
}

func (g *gpuTarget) close() error {
	for _, w := range g.wins {
		w.Deregister()
	}
	for _, d := range g.dev {
		if d.Len() > 0 {
			d.Free()
		}
	}
	return g.stream.Close()
}
