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

// regionShare is how a rank shares its region of a round.
type regionShare struct {
	Pid    int    `json:"pid"`
	Addr   uint64 `json:"addr"`   // for ranks of the same process
	Handle []byte `json:"handle"` // CUDA IPC handle, for the others
}

// shareIPC places this rank's region of a round, size bytes (none when 0),
// in its GPU's memory and maps the regions of the peers it talks to
// through CUDA IPC. It returns where each region is, as this GPU sees it,
// and what releases them.
func shareIPC(ctx context.Context, ex transport.Exchanger, dev *cuda.Device, size int64, peers []int) (Place, func() error, error) {
	var region cuda.Ptr
	var opened []cuda.Ptr
	cleanup := func() error {
		var errs []error
		for _, p := range opened {
			errs = append(errs, dev.CloseIPC(p))
		}
		if region != 0 {
			errs = append(errs, dev.Free(region))
		}
		return errors.Join(errs...)
	}
	fail := func(err error) (Place, func() error, error) {
		cleanup()
		return nil, nil, err
	}
	mine := regionShare{Pid: os.Getpid()}
	if size > 0 {
		var err error
		if region, err = dev.AllocZeroed(size, size); err != nil {
			return fail(err)
		}
		h, err := dev.ExportIPC(region)
		if err != nil {
			return fail(err)
		}
		// Ranks in this process (nccl-tests' -g 2, say) use the region's
		// address itself: a process cannot open its own IPC handles.
		mine.Addr, mine.Handle = uint64(region), h[:]
	}
	blob, _ := json.Marshal(mine)
	blobs, err := ex.AllGather(ctx, blob)
	if err != nil {
		return fail(fmt.Errorf("exchanging IPC handles: %w", err))
	}
	bases := map[int]uint64{ex.Rank(): uint64(region)}
	for _, r := range peers {
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
	return func(q int) uint64 { return bases[q] }, cleanup, nil
}
