package shm

import (
	"bytes"
	"context"
	"crypto/rand"
	"encoding/binary"
	"errors"
	"fmt"
	"math"
	"os"
	"runtime"
	"time"

	"github.com/ringo-ccl/ringo/internal/errs"
	"github.com/ringo-ccl/ringo/internal/mem"
	"github.com/ringo-ccl/ringo/internal/sys"
	"github.com/ringo-ccl/ringo/transport"
)

// Attach is cross-memory attach among the processes of a communicator that
// all share this host: a rank copies a peer's buffer straight into its own
// memory (process_vm_readv(2)), one copy where a FIFO takes two
// (host.RunDirect). Every rank holds every peer by a pidfd; a read is
// trusted only if the peer had not exited by the time it ended (Check), so
// nothing read from a stranger that took a dead peer's pid is used.
type Attach struct {
	rank  int
	procs []*sys.Process // by rank; nil at rank
}

// ErrNoAttach is NewAttach's answer where some rank cannot or should not
// read its peers' memory: the kernel forbids it (ptrace policy, a seccomp
// filter, other pid namespaces), the rank turned it off, or it measured
// the kernel's copy too slow to pay (AttachAuto). The communicator then
// moves everything through its FIFOs.
var ErrNoAttach = errors.New("shm: cross-memory attach unavailable")

// AttachMode is RINGO_CMA: whether ranks read each other's buffers.
type AttachMode int

const (
	// AttachAuto reads them where the kernel allows it and its copy
	// pays: process_vm_readv must move at least half of what a copy in
	// this process moves, since it stands in for the FIFOs' two copies
	// (calibrate). On the 2-core development VM it moved 10 GB/s
	// against 37–50 GB/s, and the FIFOs won at every size.
	AttachAuto AttachMode = iota
	AttachOff             // RINGO_CMA=0: never
	AttachOn              // RINGO_CMA=1: wherever the kernel allows it
)

// probeBytes is the random probe each rank announces and its peers read.
const probeBytes = 32

// NewAttach sets up cross-memory attach for rank ex.Rank(). Every rank of
// ex calls it at once; all must be on this host. Each announces its pid
// and the address and contents of a random probe; each reads every peer's
// probe and compares it with what the peer announced, which proves the pid
// names that peer in this pid namespace and the kernel lets this process
// read it; under AttachAuto it then times the kernel's copy (calibrate);
// then the ranks agree. Where any rank cannot or should not (mode), every
// rank gets an error wrapping ErrNoAttach that says why; other errors are
// the exchange's.
func NewAttach(ctx context.Context, ex transport.Exchanger, mode AttachMode) (a *Attach, err error) {
	n, rank := ex.Size(), ex.Rank()
	probe := make([]byte, probeBytes)
	if _, err := rand.Read(probe); err != nil {
		return nil, fmt.Errorf("shm: drawing the attach probe: %w", err)
	}
	announce := binary.LittleEndian.AppendUint64(nil, uint64(os.Getpid()))
	announce = binary.LittleEndian.AppendUint64(announce, uint64(mem.Addr(probe)))
	announce = append(announce, probe...)
	blobs, err := ex.AllGather(ctx, announce)
	if err != nil {
		return nil, fmt.Errorf("shm: exchanging pids: %w", err)
	}
	a = &Attach{rank: rank, procs: make([]*sys.Process, n)}
	defer func() {
		if err != nil {
			a.Close()
			a = nil
		}
	}()
	why := ""
	if mode == AttachOff {
		why = "turned off (RINGO_CMA=0)"
	}
	got := make([]byte, probeBytes)
	for q := range n {
		if q == rank || why != "" {
			continue
		}
		b := blobs[q]
		if len(b) != 16+probeBytes {
			return a, fmt.Errorf("shm: rank %d announced %d bytes for attach, expected %d", q, len(b), 16+probeBytes)
		}
		pid, addr := int(binary.LittleEndian.Uint64(b)), uintptr(binary.LittleEndian.Uint64(b[8:]))
		p, err := sys.OpenProcess(pid)
		if err != nil {
			why = fmt.Sprintf("rank %d (pid %d): %v", q, pid, err)
			continue
		}
		a.procs[q] = p
		switch err := p.Read(got, addr); {
		case err != nil:
			why = fmt.Sprintf("rank %d: %v", q, err)
		case !bytes.Equal(got, b[16:]):
			why = fmt.Sprintf("rank %d: pid %d is another process here (another pid namespace?)", q, pid)
		}
	}
	if why == "" && mode == AttachAuto {
		why = calibrate()
	}
	verdict := []byte{1}
	if why != "" {
		verdict = append([]byte{0}, why...)
	}
	verdicts, err := ex.AllGather(ctx, verdict)
	runtime.KeepAlive(probe) // read by the peers until every rank has answered
	if err != nil {
		return a, fmt.Errorf("shm: agreeing on attach: %w", err)
	}
	for q, v := range verdicts {
		if len(v) == 0 || len(v) > 1024 {
			return a, fmt.Errorf("shm: rank %d answered %d bytes for attach", q, len(v))
		}
		if v[0] != 1 {
			return a, fmt.Errorf("%w: rank %d: %s", ErrNoAttach, q, v[1:])
		}
	}
	return a, nil
}

// calibrateBytes is what calibrate copies each way: large enough for the
// kernel's per-call cost not to matter, small enough to stay in cache.
const calibrateBytes = 1 << 20

// calibrate returns why the kernel's copy does not pay here, or "": the
// best of a few process_vm_readv calls reading calibrateBytes (from this
// process: the probe proved the peers readable, and the copy is the same
// kernel path) must take at most twice the best of as many plain copies.
func calibrate() string {
	src, dst := make([]byte, calibrateBytes), make([]byte, calibrateBytes)
	best := func(f func() error) (time.Duration, error) {
		b := time.Duration(math.MaxInt64)
		for range 5 {
			t := time.Now()
			if err := f(); err != nil {
				return 0, err
			}
			b = min(b, time.Since(t))
		}
		return b, nil
	}
	cp, _ := best(func() error { copy(dst, src); return nil })
	self, err := sys.OpenProcess(os.Getpid())
	if err != nil {
		return fmt.Sprintf("timing process_vm_readv: %v", err)
	}
	defer self.Close()
	cma, err := best(func() error { return self.Read(dst, mem.Addr(src)) })
	switch {
	case err != nil:
		return fmt.Sprintf("timing process_vm_readv: %v", err)
	case cma > 2*cp:
		gbs := func(d time.Duration) float64 { return calibrateBytes / d.Seconds() / 1e9 }
		return fmt.Sprintf("process_vm_readv moves %.1f GB/s here against %.1f GB/s for a copy, too slow to beat the FIFOs' two copies (RINGO_CMA=1 uses it anyway)", gbs(cma), gbs(cp))
	}
	return ""
}

// Read copies len(dst) bytes at addr in rank q's memory into dst. What it
// read is q's only if Check(q) passes after it. A read that fails because
// q has exited, or is exiting, is errs.ErrPeerLost.
func (a *Attach) Read(q int, dst []byte, addr uintptr) error {
	err := a.procs[q].Read(dst, addr)
	if err != nil && (errors.Is(err, sys.ErrGone) || a.procs[q].Exited()) {
		return fmt.Errorf("rank %d lost: %w: %w", q, errs.ErrPeerLost, err)
	}
	return err
}

// Check returns errs.ErrPeerLost if rank q has exited: what was read from
// its pid may then be another process's.
func (a *Attach) Check(q int) error {
	if p := a.procs[q]; p.Exited() {
		return fmt.Errorf("rank %d lost: %w: pid %d has exited", q, errs.ErrPeerLost, p.Pid())
	}
	return nil
}

// Close releases the pidfds. The Attach must not be used afterwards.
func (a *Attach) Close() error {
	var errs []error
	for _, p := range a.procs {
		if p != nil {
			errs = append(errs, p.Close())
		}
	}
	a.procs = nil
	return errors.Join(errs...)
}
