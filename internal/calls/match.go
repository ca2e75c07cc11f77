package calls

import (
	"fmt"
	"sync"

	"github.com/ringo-ccl/ringo/internal/errs"
)

// Matcher pairs the sends and receives of a communicator's ranks that live
// in this process as their calls come, in order per pair of ranks, as NCCL
// matches them, and refuses a pair whose sizes differ: a receive of other
// bytes than its send would take the wrong bytes, or wait for bytes that
// never come. Ranks in other processes are not seen here. The zero
// Matcher sees every rank.
type Matcher struct {
	mu     sync.Mutex
	local  []bool                // which ranks live here (nil: all)
	queues map[[2]int]*pairQueue // by (sender, receiver)
}

// pairQueue holds the sizes of one pair's messages that are not matched
// yet: a sender's sends or a receiver's receives, never both.
type pairQueue struct {
	sends, recvs []int64
	matched      int
}

// NewMatcher returns a Matcher of the ranks local says live here.
func NewMatcher(local []bool) *Matcher { return &Matcher{local: local} }

// Local reports whether the matcher sees rank q.
func (m *Matcher) Local(q int) bool {
	return m.local == nil || (q >= 0 && q < len(m.local) && m.local[q])
}

// Match records rank's messages of a call, matches them with the peers'
// already recorded, and returns an error naming both ranks, the message
// and both sizes at the first pair whose sizes differ.
func (m *Matcher) Match(rank int, msgs []Msg) error {
	m.mu.Lock()
	defer m.mu.Unlock()
	for i := range msgs {
		msg := &msgs[i]
		if msg.Peer == rank || !m.Local(msg.Peer) {
			continue
		}
		key := [2]int{rank, msg.Peer}
		if !msg.Send {
			key = [2]int{msg.Peer, rank}
		}
		if m.queues == nil {
			m.queues = map[[2]int]*pairQueue{}
		}
		q := m.queues[key]
		if q == nil {
			q = &pairQueue{}
			m.queues[key] = q
		}
		mine, theirs := &q.sends, &q.recvs
		if !msg.Send {
			mine, theirs = &q.recvs, &q.sends
		}
		if len(*theirs) == 0 {
			*mine = append(*mine, msg.Bytes())
			continue
		}
		sent, recvd := msg.Bytes(), (*theirs)[0]
		if !msg.Send {
			sent, recvd = recvd, sent
		}
		*theirs = (*theirs)[:copy(*theirs, (*theirs)[1:])] // popped in place: appends reuse the array
		q.matched++
		if sent != recvd {
			return fmt.Errorf("%w: rank %d's send #%d to rank %d is %d bytes, and rank %d's receive that matches it takes %d", errs.ErrInvalidArgument, key[0], q.matched, key[1], sent, key[1], recvd)
		}
	}
	return nil
}
