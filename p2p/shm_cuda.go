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

// shareShm places this rank's region of a round, size bytes (none when 0),
// in a /dev/shm segment named after tag that the peers it talks to map;
// every process registers its mappings with CUDA, so the kernels read and
// write host memory directly. The segment's name goes away once everyone
// has mapped it. It returns where each region is, as this GPU sees it, and
// what releases them.
func shareShm(ctx context.Context, ex transport.Exchanger, tag string, dev *cuda.Device, size int64, peers []int) (Place, func() error, error) {
	rank := ex.Rank()
	name := shm.SegmentName(tag, rank)
	var segs []*sys.Segment
	var registered [][]byte
	cleanup := func() error {
		var errs []error
		for _, m := range registered {
			errs = append(errs, dev.UnregisterHost(m))
		}
		for _, sg := range segs {
			errs = append(errs, sg.Close())
		}
		return errors.Join(errs...)
	}
	fail := func(err error) (Place, func() error, error) {
		for r := range ex.Size() {
			sys.Unlink(shm.SegmentName(tag, r))
		}
		cleanup()
		return nil, nil, err
	}
	maps := map[int][]byte{}
	if size > 0 {
		own, err := sys.CreateSegment(name, int(size))
		if err != nil {
			return fail(err)
		}
		segs, maps[rank] = append(segs, own), own.Mem
	}
	// Peers' sizes: a segment is mapped whole.
	blobs, err := ex.AllGather(ctx, fmt.Appendf(nil, "%d", size))
	if err != nil {
		return fail(err)
	}
	for _, r := range peers {
		var sz int
		if _, err := fmt.Sscanf(string(blobs[r]), "%d", &sz); err != nil || sz <= 0 {
			return fail(fmt.Errorf("rank %d sent a malformed region size %q", r, blobs[r]))
		}
		sg, err := sys.OpenSegment(shm.SegmentName(tag, r), sz)
		if err != nil {
			return fail(fmt.Errorf("mapping rank %d's connections: %w", r, err))
		}
		segs = append(segs, sg)
		maps[r] = sg.Mem
	}
	if err := ex.Barrier(ctx); err != nil {
		return fail(err)
	}
	if size > 0 {
		if err := sys.Unlink(name); err != nil {
			return fail(err)
		}
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
	return func(q int) uint64 { return bases[q] }, cleanup, nil
}
