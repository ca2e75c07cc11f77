package transport

import (
	"encoding/binary"
	"sync/atomic"

	"github.com/ringo-ccl/ringo/internal/mem"
)

// The host LL protocol ("LL8"): every 8-byte word of an LL slot carries
// 4 data bytes and a 32-bit flag, written together by one atomic 64-bit
// store, so a reader that sees the flag of the current step also sees its
// data — no fence and no tail counter. The flag of FIFO step s is
// s mod (2^32−1) + 1, never 0, so the zeroed memory of a fresh connection
// never matches, whatever step the connection starts from.
//
// A slot is never cleared: a word left over from an earlier use of the slot
// carries that use's flag. Flags wrap after 2^32−1 steps, so a word not
// rewritten for that long could alias a future flag. As NCCL does, the writer
// of 8 consecutive steps every 2^31 steps (LLCleanDue) rewrites its whole slot
// with the current flag, so no word is ever older than 2^31 + NSteps steps.

// LLFlag returns the flag of FIFO step step.
func LLFlag(step uint64) uint32 { return uint32(step%(1<<32-1)) + 1 }

// LLCleanDue reports whether the writer of step must refresh its whole slot.
func LLCleanDue(step uint64) bool { return step&0x7ffffff8 == 0x7ffffff8 }

// LLWords returns the words needed to carry n data bytes.
func LLWords(n int) int { return (n + 3) / 4 }

func llWord(data uint32, flag uint32) uint64 { return uint64(flag)<<32 | uint64(data) }

// LLWrite stores data into slot with flag, 4 bytes per word, and, when
// clean is set, fills the rest of the slot with flagged zero words.
// len(data) must not exceed 4×len(slot). The data's whole words are
// stored by one 8-byte store of release order each (mem.StoreHalves): a
// reader checks every word's flag, so no word needs to wait for the ones
// before it to reach the cache, as an atomic store's XCHG would (2 ranks'
// forced-LL all-reduce of 128 KiB between processes: 235–315 µs with
// XCHGs, 43–74 without; BENCHMARKS.md, issue 25).
func LLWrite(slot []atomic.Uint64, data []byte, flag uint32, clean bool) {
	full := len(data) / 4
	mem.StoreHalves(slot[:full], data[:4*full], flag)
	next := full
	if rem := data[4*full:]; len(rem) > 0 {
		var last [4]byte
		copy(last[:], rem)
		slot[full].Store(llWord(binary.LittleEndian.Uint32(last[:]), flag))
		next++
	}
	if clean {
		for i := next; i < len(slot); i++ {
			slot[i].Store(llWord(0, flag))
		}
	}
}

// LLRead waits for the words carrying len(dst) bytes to hold flag and copies
// their data into dst. A writer stores a slot's words in order, so LLRead
// waits on the last word first, then finds the others already in place
// (each is still checked). bell is the connection's data bell.
func LLRead(slot []atomic.Uint64, dst []byte, flag uint32, w *Waiter, bell Bell) error {
	words := LLWords(len(dst))
	if words == 0 {
		return nil
	}
	if _, err := w.WaitFlag(&slot[words-1], flag, bell); err != nil {
		return err
	}
	for i := range words {
		v := slot[i].Load()
		if uint32(v>>32) != flag { // not there yet: rarely, the writer stores in order
			var err error
			if v, err = w.WaitFlag(&slot[i], flag, bell); err != nil {
				return err
			}
		}
		if 4*i+4 <= len(dst) {
			binary.LittleEndian.PutUint32(dst[4*i:], uint32(v))
		} else {
			var last [4]byte
			binary.LittleEndian.PutUint32(last[:], uint32(v))
			copy(dst[4*i:], last[:])
		}
	}
	return nil
}
