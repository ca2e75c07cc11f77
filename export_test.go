package ringo

import (
	"slices"

	"github.com/ringo-ccl/ringo/internal/group"
	"github.com/ringo-ccl/ringo/kernels"
	"github.com/ringo-ccl/ringo/ring"
)

// Internals the external tests check (the export_test.go idiom).
var P2PChannels = p2pChannels

// Lose marks c's rank lost in its in-process communicator, as the
// bootstrap marks a rank whose process died (group.World.Lose): the ranks
// of one process cannot die alone, so the shrink tests make one lost so.
func Lose(c *Comm) { c.group.(*group.World).Lose(c.rank, "marked lost by the test") }

// SimpleFIFO returns the Simple FIFO of each of c's connections in bytes.
func SimpleFIFO(c *Comm) int { return c.cfg.Sizes.Simple }

// Tag returns what names the shared-memory segments of c, a rank in its
// own process, for the tests' check that none is left.
func Tag(c *Comm) string { return c.group.(*group.Procs).Tag }

// ReadsPeers returns in how many shots an all-reduce of bytes on c reads
// the peers' inputs directly (device.Rank.LaunchDirect); 0: the ring.
func ReadsPeers(c *Comm, bytes int64) int { return int(DirectKindOf(c, CollAllReduce, bytes)) }

// DirectKindOf returns the direct kernel a call of coll moving bytes a
// rank runs on c (kernels.NotDirect: the ring).
func DirectKindOf(c *Comm, coll Collective, bytes int64) kernels.DirectKind {
	if c.gpu == nil || c.gpu.reads == nil {
		return kernels.NotDirect
	}
	return c.cfg.Direct(coll, bytes, c.size)
}

// ReadFrom returns where a direct all-reduce on c reads its input of bytes
// at addr (kernels.DirectRaw, DirectStaged, or DirectWindow plus a slot).
func ReadFrom(c *Comm, addr uintptr, bytes int64) uint64 {
	how, _ := c.gpu.reads.Source(addr, bytes)
	return how
}

// BoardCrowded reports whether c's board takes the paths of a host whose
// ranks outnumber its cores (host.RunTwoShot).
func BoardCrowded(c *Comm) bool { return c.boardCrowded }

// Attached reports whether c's collectives may read its peers' buffers
// (shm.Attach, host.RunDirect).
func Attached(c *Comm) bool { return c.attach != nil }

// WindowedCalls returns how many of c's calls ran on host windows
// (host.RunWindowed).
func WindowedCalls(c *Comm) uint64 { return c.windowedCalls }

// TiledP2PPlans counts the rank's point-to-point plans, as its cache holds
// them, with a step in tiles (ring.Step.Tile).
func TiledP2PPlans(c *Comm) int {
	n := 0
	for _, ps := range c.p2ps.plans {
		for _, p := range ps {
			if slices.ContainsFunc(p.Channels, func(ch ring.Channel) bool {
				return slices.ContainsFunc(ch.Steps, func(st ring.Step) bool { return st.Tile > 0 })
			}) {
				n++
			}
		}
	}
	return n
}
