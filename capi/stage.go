package main

import (
	"cmp"
	"slices"
)

// ringo refuses a receive into memory that another message of the same
// launch uses: its sends and receives run concurrently, so the result would
// depend on timing. NCCL accepts them, and programs use them: NCCL's own
// in-place ncclGather and ncclScatter send the root's block to itself at
// its place, and nccl-tests runs every test in place too (sendrecv_perf
// then sends and receives the same buffer; alltoall_perf's blocks are sent
// from where they are received), ignoring the results where NCCL leaves
// them undefined. planStage makes such a launch one ringo runs, with
// results defined as if every send had read its buffer before any receive
// wrote:
//
//   - the k-th send of a rank to itself and its k-th receive from itself
//     that have the same address and bytes move nothing: both are dropped;
//   - any other receive overlapping another message is received into
//     scratch memory, allocated on the launch's stream, and copied to its
//     buffer on that stream after the launch.

// stageAlign aligns each receive's place in the scratch memory.
const stageAlign = 256

// stagePlan is one communicator's messages as ringo gets them.
type stagePlan struct {
	msgs    []p2pMsg    // what remains; staged receives' addr is an offset into scratch until apply
	staged  []int       // the indexes in msgs of the receives into scratch
	copies  []stageCopy // after the launch, in msgs' order
	scratch int64       // bytes of scratch memory needed (0: none)
}

// stageCopy copies n bytes at offset off of the scratch memory to dst.
type stageCopy struct {
	dst uintptr
	off int64
	n   int64
}

// planStage plans msgs, the messages of rank rank of one launch.
func planStage(msgs []p2pMsg, rank int) stagePlan {
	msgs = dropSelfCopies(msgs, rank)
	var p stagePlan
	p.msgs = msgs
	for _, i := range overlappingRecvs(msgs) {
		m := &msgs[i]
		off := (p.scratch + stageAlign - 1) / stageAlign * stageAlign
		p.copies = append(p.copies, stageCopy{dst: m.addr, off: off, n: m.bytes()})
		p.staged = append(p.staged, i)
		m.addr = uintptr(off)
		p.scratch = off + m.bytes()
	}
	return p
}

// apply points the staged receives of msgs (p.msgs) into scratch memory at
// base.
func (p *stagePlan) apply(msgs []p2pMsg, base uintptr) {
	for _, i := range p.staged {
		msgs[i].addr += base
	}
}

// dropSelfCopies returns msgs without the pairs of a send to rank itself
// and its matching receive (the k-th of each) that have the same address
// and bytes; msgs itself when there are none.
func dropSelfCopies(msgs []p2pMsg, rank int) []p2pMsg {
	var smallSends, smallRecvs [4]int
	sends, recvs := smallSends[:0], smallRecvs[:0]
	for i := range msgs {
		if m := &msgs[i]; m.peer == rank {
			if m.send {
				sends = append(sends, i)
			} else {
				recvs = append(recvs, i)
			}
		}
	}
	var drop map[int]bool
	for k := range min(len(sends), len(recvs)) {
		s, r := &msgs[sends[k]], &msgs[recvs[k]]
		if s.addr == r.addr && s.bytes() == r.bytes() {
			if drop == nil {
				drop = map[int]bool{}
			}
			drop[sends[k]], drop[recvs[k]] = true, true
		}
	}
	if drop == nil {
		return msgs
	}
	out := make([]p2pMsg, 0, len(msgs)-len(drop))
	for i, m := range msgs {
		if !drop[i] {
			out = append(out, m)
		}
	}
	return out
}

// overlappingRecvs returns, in increasing order, the indexes of the
// receives of msgs whose memory overlaps another message's (a send's or a
// receive's; messages of no bytes have none).
func overlappingRecvs(msgs []p2pMsg) []int {
	var small [16]int // a call of a few messages sorts without an allocation
	idx := small[:0]
	for i := range msgs {
		if msgs[i].bytes() > 0 {
			idx = append(idx, i)
		}
	}
	slices.SortFunc(idx, func(a, b int) int { return cmp.Compare(msgs[a].addr, msgs[b].addr) })
	var hit map[int]bool
	for x, i := range idx {
		end := msgs[i].addr + uintptr(msgs[i].bytes())
		for _, j := range idx[x+1:] {
			if msgs[j].addr >= end {
				break
			}
			for _, k := range [2]int{i, j} {
				if !msgs[k].send {
					if hit == nil {
						hit = map[int]bool{}
					}
					hit[k] = true
				}
			}
		}
	}
	out := make([]int, 0, len(hit))
	for i := range msgs {
		if hit[i] {
			out = append(out, i)
		}
	}
	return out
}
