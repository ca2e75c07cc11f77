//go:build cuda

package p2p

import (
	"context"
	"errors"
	"fmt"

	"github.com/ringo-ccl/ringo/internal/cuda"
	"github.com/ringo-ccl/ringo/internal/sys"
	"github.com/ringo-ccl/ringo/shm"
	"github.com/ringo-ccl/ringo/transport"
)

// shareShm places this rank's connections in a /dev/shm segment that its
// neighbours map; every process registers its mappings with CUDA, so the
// kernels read and write host memory directly. The segment's name goes
// away once everyone has mapped it.
func shareShm(ctx context.Context, ex transport.Exchanger, tag string, dev *cuda.Device, l Layout, prev, next int) (self, prevBase, nextBase uint64, cleanup func() error, err error) {
	rank := ex.Rank()
	size := int(l.Bytes())
	name := shm.SegmentName(tag+"g", rank)
	var segs []*sys.Segment
	var registered [][]byte
	cleanup = func() error {
		var errs []error
		for _, m := range registered {
			errs = append(errs, dev.UnregisterHost(m))
		}
		for _, sg := range segs {
			errs = append(errs, sg.Close())
		}
		return errors.Join(errs...)
	}
	fail := func(err error) (uint64, uint64, uint64, func() error, error) {
		for r := range ex.Size() {
			sys.Unlink(shm.SegmentName(tag+"g", r))
		}
		cleanup()
		return 0, 0, 0, nil, err
	}
	own, err := sys.CreateSegment(name, size)
	if err != nil {
		return fail(err)
	}
	segs = append(segs, own)
	if err := ex.Barrier(ctx); err != nil {
		return fail(err)
	}
	maps := map[int][]byte{rank: own.Mem}
	for _, r := range []int{prev, next} {
		if _, ok := maps[r]; ok {
			continue
		}
		sg, err := sys.OpenSegment(shm.SegmentName(tag+"g", r), size)
		if err != nil {
			return fail(fmt.Errorf("mapping rank %d's connections: %w", r, err))
		}
		segs = append(segs, sg)
		maps[r] = sg.Mem
	}
	if err := ex.Barrier(ctx); err != nil {
		return fail(err)
	}
	if err := sys.Unlink(name); err != nil {
		return fail(err)
	}
	bases := map[int]uint64{}
	for r, m := range maps {
		p, err := dev.RegisterHost(m)
		if err != nil {
			return fail(err)
		}
		registered = append(registered, m)
		bases[r] = uint64(p)
	}
	return bases[rank], bases[prev], bases[next], cleanup, nil
}
