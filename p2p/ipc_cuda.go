//go:build cuda

package p2p

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"os"

	"github.com/ringo-ccl/ringo/internal/cuda"
	"github.com/ringo-ccl/ringo/transport"
)

// regionShare is how a rank shares its connections' region.
type regionShare struct {
	Pid    int    `json:"pid"`
	Addr   uint64 `json:"addr"`   // for ranks of the same process
	Handle []byte `json:"handle"` // CUDA IPC handle, for the others
}

// shareIPC places this rank's connections in its GPU's memory and maps its
// ring neighbours' through CUDA IPC. It returns the three regions' bases as
// this GPU sees them and what releases them.
func shareIPC(ctx context.Context, ex transport.Exchanger, dev *cuda.Device, l Layout, prev, next int) (self, prevBase, nextBase uint64, cleanup func() error, err error) {
	region, err := dev.Alloc(l.Bytes())
	if err != nil {
		return 0, 0, 0, nil, err
	}
	var opened []cuda.Ptr
	cleanup = func() error {
		var errs []error
		for _, p := range opened {
			errs = append(errs, dev.CloseIPC(p))
		}
		return errors.Join(append(errs, dev.Free(region))...)
	}
	fail := func(err error) (uint64, uint64, uint64, func() error, error) {
		cleanup()
		return 0, 0, 0, nil, err
	}
	if err := dev.Memset(region, 0, l.Bytes()); err != nil {
		return fail(err)
	}
	h, err := dev.ExportIPC(region)
	if err != nil {
		return fail(err)
	}
	// Ranks in this process (nccl-tests' -g 2, say) use the region's
	// address itself: a process cannot open its own IPC handles.
	mine := regionShare{Pid: os.Getpid(), Addr: uint64(region), Handle: h[:]}
	blob, _ := json.Marshal(mine)
	blobs, err := ex.AllGather(ctx, blob)
	if err != nil {
		return fail(fmt.Errorf("exchanging IPC handles: %w", err))
	}
	bases := map[int]uint64{ex.Rank(): uint64(region)}
	for _, r := range []int{prev, next} {
		if _, ok := bases[r]; ok {
			continue
		}
		var sh regionShare
		if err := json.Unmarshal(blobs[r], &sh); err != nil {
			return fail(fmt.Errorf("rank %d sent malformed connection handles: %v", r, err))
		}
		if sh.Pid == mine.Pid {
			bases[r] = sh.Addr
			continue
		}
		var hr cuda.IPCHandle
		if len(sh.Handle) != len(hr) {
			return fail(fmt.Errorf("rank %d sent a %d-byte IPC handle", r, len(sh.Handle)))
		}
		copy(hr[:], sh.Handle)
		p, err := dev.OpenIPC(hr)
		if err != nil {
			return fail(fmt.Errorf("mapping rank %d's connections: %w", r, err))
		}
		opened = append(opened, p)
		bases[r] = uint64(p)
	}
	if err := ex.Barrier(ctx); err != nil {
		return fail(err)
	}
	return bases[ex.Rank()], bases[prev], bases[next], cleanup, nil
}
