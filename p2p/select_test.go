package p2p

import (
	"testing"

	"github.com/stretchr/testify/assert"
)

// TestChoose: NCCL's order — peer access on one host, then shared memory
// unless it is off, then the network — and LL128's host-memory fact.
func TestChoose(t *testing.T) {
	for _, tc := range []struct {
		name                    string
		n                       int
		allP2P, oneHost, shmOff bool
		want                    Transport
		hostMemory              bool
	}{
		{"one rank", 1, true, true, false, None, false},
		{"one rank, nothing reachable", 1, false, false, true, None, false},
		{"peer access on one host", 4, true, true, false, IPC, false},
		{"peer access, shm off", 4, true, true, true, IPC, false},
		{"no peer access", 4, false, true, false, SHM, true},
		{"no peer access, shm off", 4, false, true, true, Net, true},
		{"two hosts", 4, true, false, false, Net, true},
	} {
		t.Run(tc.name, func(t *testing.T) {
			c := choose(tc.n, tc.allP2P, tc.oneHost, tc.shmOff)
			assert.Equal(t, tc.want, c.Transport)
			assert.Equal(t, tc.hostMemory, c.HostMemory)
		})
	}
}
