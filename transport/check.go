package transport

import (
	"hash/crc32"

	"github.com/ringo-ccl/ringo/internal/env"
)

// Check mode: RINGO_CHECK=1 makes the senders of every wire (sockets,
// package rdma) checksum each post's data, which the receivers verify
// before handing the data on.

// envCheck is RINGO_CHECK, 0 or 1.
var envCheck = env.Var{Name: "CHECK"}

// dataTable is the data checksum's polynomial (Castagnoli).
var dataTable = crc32.MakeTable(crc32.Castagnoli)

// CheckData reports whether RINGO_CHECK=1 asks senders to checksum the data
// of every post; a value other than 0 or 1 is an error naming it (the
// communicator's init reads it first). It reads the environment on each
// call, so a sender reads it once, when it is made. Safe for concurrent
// use.
func CheckData() (bool, error) { return envCheck.Flag() }

// SumData is CheckData for a sender (of any wire): a bad value, which
// failed the communicator's init, counts as 0.
func SumData() bool {
	on, _ := CheckData()
	return on
}

// DataSum is the checksum of a post's data that senders put in its header:
// CRC-32C (Castagnoli, hardware-accelerated). It does not allocate and is
// safe for concurrent use.
func DataSum(b []byte) uint32 { return crc32.Checksum(b, dataTable) }
