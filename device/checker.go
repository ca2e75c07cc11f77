package device

import "fmt"

// Checker checks a rank's call arguments against its GPU, remembering what
// it already established so that a steady stream of calls skips the driver
// queries: allocations known to be the GPU's memory, and the last stream
// known to be its context's. (A best effort: memory freed and reallocated
// on another GPU at the same address would pass; NCCL checks nothing of
// this.) Its methods must not be called concurrently.
type Checker struct {
	dev        int
	known      [8]span
	nextKnown  int
	lastStream uintptr
	streamOK   bool
}

// span is an allocation's address range.
type span struct{ base, size uintptr }

// NewChecker returns the checker of a rank on GPU dev.
func NewChecker(dev int) *Checker { return &Checker{dev: dev} }

// Ptr verifies that [p, p+n) lies in memory of the rank's GPU, querying
// the driver only for allocations it has not seen. A buffer of a call on
// stream h while h is being captured into a graph passes unverified when
// the driver cannot place it: memory that the capture itself allocated
// (cuMemAllocAsync, as the C ABI's scratch for receives in place) exists
// only when the graph runs.
func (c *Checker) Ptr(p uintptr, n int64, h uintptr) error {
	for _, k := range c.known {
		if k.size > 0 && p >= k.base && uint64(p-k.base)+uint64(n) <= uint64(k.size) {
			return nil
		}
	}
	base, size, err := CheckPtr(c.dev, p, n)
	if err != nil {
		if capturing, cerr := StreamCapturing(c.dev, h); cerr == nil && capturing {
			return nil
		}
		return err
	}
	c.known[c.nextKnown] = span{base, size}
	c.nextKnown = (c.nextKnown + 1) % len(c.known)
	return nil
}

// Stream verifies that stream h of GPU dev belongs to the rank's GPU's
// context.
func (c *Checker) Stream(dev int, h uintptr) error {
	if dev != c.dev {
		return fmt.Errorf("stream of GPU %d given to a rank on GPU %d", dev, c.dev)
	}
	if c.streamOK && h == c.lastStream {
		return nil
	}
	ok, err := StreamOwned(c.dev, h)
	if err != nil || !ok {
		return fmt.Errorf("stream %#x does not belong to GPU %d's primary context (%v)", h, c.dev, err)
	}
	c.lastStream, c.streamOK = h, true
	return nil
}
