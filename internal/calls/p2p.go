package calls

import (
	"cmp"
	"fmt"
	"math"
	"slices"

	"github.com/ringo-ccl/ringo/internal/mem"
	"github.com/ringo-ccl/ringo/reduce"
)

// Msg is one message of a point-to-point call (Args.Coll SendRecvs): Count
// elements of Type to or from rank Peer, in host buffer Buf — or, in a
// device call (Args.Device), at device address Dev.
type Msg struct {
	Send  bool
	Peer  int
	Count int64
	Type  reduce.DataType
	Buf   []byte
	Dev   uintptr
}

func (m *Msg) String() string {
	if m.Send {
		return fmt.Sprintf("send to rank %d", m.Peer)
	}
	return fmt.Sprintf("recv from rank %d", m.Peer)
}

// Bytes returns the bytes the message moves.
func (m *Msg) Bytes() int64 { return m.Count * int64(m.Type.Size()) }

// checkP2P checks a point-to-point call's messages on rank of size ranks:
// each one's datatype, peer, count and buffer (present when the count is
// not zero, long enough, aligned to its type); that its sends to itself
// and receives from itself match one to one with the same bytes; and that
// no receive writes memory another message uses (checkRecvOverlap).
func (a *Args) checkP2P(rank, size int, dev DeviceCheck) error {
	var self [2][]int // indexes of the sends to and receives from itself
	for i := range a.Msgs {
		m := &a.Msgs[i]
		switch {
		case !m.Type.Valid():
			return fmt.Errorf("message %d (%v): invalid datatype %d", i, m, m.Type)
		case m.Peer < 0 || m.Peer >= size:
			return fmt.Errorf("message %d (%v): peer %d outside [0, %d)", i, m, m.Peer, size)
		case m.Count < 0:
			return fmt.Errorf("message %d (%v): count %d is negative", i, m, m.Count)
		case m.Count > math.MaxInt64/int64(m.Type.Size()):
			return fmt.Errorf("message %d (%v): count %d of %v overflows", i, m, m.Count, m.Type)
		}
		var err error
		switch {
		case !a.Device:
			err = checkHost(m.Buf, m.Bytes(), m.Type)
		case m.Bytes() > 0:
			err = dev.Ptr(m.Dev, m.Bytes(), a.Stream)
		}
		if err != nil {
			return fmt.Errorf("message %d (%v): %v", i, m, err)
		}
		if m.Peer == rank {
			k := 1
			if m.Send {
				k = 0
			}
			self[k] = append(self[k], i)
		}
	}
	sends, recvs := self[0], self[1]
	for k := range max(len(sends), len(recvs)) {
		switch {
		case k >= len(recvs):
			return fmt.Errorf("message %d, rank %d's send %d to itself (%d bytes), has no matching receive from itself", sends[k], rank, k, a.Msgs[sends[k]].Bytes())
		case k >= len(sends):
			return fmt.Errorf("message %d, rank %d's receive %d from itself (%d bytes), has no matching send to itself", recvs[k], rank, k, a.Msgs[recvs[k]].Bytes())
		case a.Msgs[sends[k]].Bytes() != a.Msgs[recvs[k]].Bytes():
			return fmt.Errorf("rank %d's send %d to itself (message %d) has %d bytes, its receive %d from itself (message %d) %d",
				rank, k, sends[k], a.Msgs[sends[k]].Bytes(), k, recvs[k], a.Msgs[recvs[k]].Bytes())
		}
	}
	return a.checkRecvOverlap()
}

// checkRecvOverlap refuses a receive into memory that another receive
// writes or a send reads: point-to-point calls are never in place (a
// block received in one round may be sent in a later one).
func (a *Args) checkRecvOverlap() error {
	var small [16]int // a group of up to 16 messages sorts without an allocation
	idx := small[:0]
	for i, m := range a.Msgs {
		if m.Count > 0 {
			idx = append(idx, i)
		}
	}
	addr := func(i int) uintptr {
		if a.Device {
			return a.Msgs[i].Dev
		}
		return mem.Addr(a.Msgs[i].Buf)
	}
	slices.SortStableFunc(idx, func(x, y int) int { return cmp.Compare(addr(x), addr(y)) })
	last := [2]int{-1, -1} // the send and the receive seen so far that reach furthest
	for _, i := range idx {
		for k, j := range last {
			if j < 0 || addr(j)+uintptr(a.Msgs[j].Bytes()) <= addr(i) || (k == 0 && a.Msgs[i].Send) {
				continue
			}
			p, q := min(i, j), max(i, j)
			return fmt.Errorf("message %d (%v) and message %d (%v) overlap, and one receives into it (point-to-point calls are never in place)",
				p, &a.Msgs[p], q, &a.Msgs[q])
		}
		k := 1
		if a.Msgs[i].Send {
			k = 0
		}
		if j := last[k]; j < 0 || addr(i)+uintptr(a.Msgs[i].Bytes()) > addr(j)+uintptr(a.Msgs[j].Bytes()) {
			last[k] = i
		}
	}
	return nil
}
