package ringo_test

import (
	"context"
	"fmt"
	"slices"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/ringo-ccl/ringo"
)

// TestProcessesPointToPoint: ranks in separate processes run all-to-all,
// all-to-allv (unequal counts, zeros), gather, scatter, a group of sends
// and receives and a lone Send and Recv — connecting each pair they need
// on first use, the two ranks alone — then every ring collective on the
// same communicator, through shared memory and through sockets.
func TestProcessesPointToPoint(t *testing.T) {
	for name, env := range map[string][]string{
		"shm":     nil,
		"sockets": {"NCCL_SHM_DISABLE=1", "NCCL_SOCKET_IFNAME=lo"},
	} {
		t.Run(name, func(t *testing.T) {
			id, kids := startRanksEnv(t, 3, func(int) string { return "p2p" }, func(int) []string { return env })
			for r, k := range kids {
				require.NoError(t, waitExit(t, k, 90*time.Second), "rank %d; stderr: %s", r, k.stderr.String())
			}
			noLeftovers(t, id)
		})
	}
}

// TestProcessesP2PSizesDiffer: with RINGO_CHECK=1, a receive of other
// bytes than its send, between ranks of two processes, fails the receiver
// naming both ranks and both sizes, over shared memory and sockets.
func TestProcessesP2PSizesDiffer(t *testing.T) {
	for name, env := range map[string][]string{
		"shm":     {"RINGO_CHECK=1"},
		"sockets": {"RINGO_CHECK=1", "NCCL_SHM_DISABLE=1", "NCCL_SOCKET_IFNAME=lo"},
	} {
		t.Run(name, func(t *testing.T) {
			_, kids := startRanksEnv(t, 2, func(int) string { return "p2p-mismatch" }, func(int) []string { return env })
			_ = waitExit(t, kids[0], 90*time.Second) // its send may be done before the receive comes
			err := waitExit(t, kids[1], 90*time.Second)
			require.Error(t, err)
			assert.Contains(t, kids[1].stderr.String(), "rank 0's send to rank 1 is 400 bytes, and rank 1's receive that matches it takes 240 (RINGO_CHECK=1)")
		})
	}
}

// checkP2PProcs is a rank process's part of TestProcessesPointToPoint:
// each call at a small size and at one of several FIFOs, then a group of
// sends and receives around the ring and a lone Send and Recv between two
// ranks, values checked exactly.
func checkP2PProcs(ctx context.Context, c *ringo.Comm) error {
	n, rank := c.Size(), c.Rank()
	val := func(r, i int) int32 { return int32(r<<20 | i) }
	block := func(r, off, count int) []int32 {
		out := make([]int32, count)
		for i := range out {
			out[i] = val(r, off+i)
		}
		return out
	}
	check := func(what string, got, want []int32) error {
		if !slices.Equal(got, want) {
			return fmt.Errorf("%s: got %v…, want %v…", what, got[:min(len(got), 4)], want[:min(len(want), 4)])
		}
		return nil
	}
	for _, count := range []int{3, 1<<18 + 5} {
		send, recv := block(rank, 0, n*count), make([]int32, n*count)
		if err := ringo.AllToAll(ctx, c, send, recv); err != nil {
			return err
		}
		for p := range n {
			if err := check(fmt.Sprintf("alltoall %d block %d", count, p), recv[p*count:(p+1)*count], block(p, rank*count, count)); err != nil {
				return err
			}
		}
		root := n - 1
		var all []int32
		if rank == root {
			all = make([]int32, n*count)
		}
		if err := ringo.Gather(ctx, c, block(rank, 0, count), all, root); err != nil {
			return err
		}
		for p := range all[:len(all)/max(count, 1)] {
			if err := check(fmt.Sprintf("gather %d block %d", count, p), all[p*count:(p+1)*count], block(p, 0, count)); err != nil {
				return err
			}
		}
		part := make([]int32, count)
		var from []int32
		if rank == 0 {
			from = block(0, 0, n*count)
		}
		if err := ringo.Scatter(ctx, c, from, part, 0); err != nil {
			return err
		}
		if err := check(fmt.Sprintf("scatter %d", count), part, block(0, rank*count, count)); err != nil {
			return err
		}
		// all-to-allv: a sends (a+2b)·count/4 mod … elements to b, zeros among them
		cnt := func(a, b int) int { return (a + 2*b) % 3 * count / 2 }
		var sc, sd, rc, rd []int
		so, ro := 0, 0
		for p := range n {
			sc, sd, rc, rd = append(sc, cnt(rank, p)), append(sd, so), append(rc, cnt(p, rank)), append(rd, ro)
			so, ro = so+cnt(rank, p), ro+cnt(p, rank)
		}
		vrecv := make([]int32, ro)
		if err := ringo.AllToAllV(ctx, c, block(rank, 0, so), sc, sd, vrecv, rc, rd); err != nil {
			return err
		}
		for p := range n {
			// p's block for this rank starts where p's sends to lower ranks end
			off := 0
			for q := range rank {
				off += cnt(p, q)
			}
			if err := check(fmt.Sprintf("alltoallv %d from %d", count, p), vrecv[rd[p]:rd[p]+rc[p]], block(p, off, rc[p])); err != nil {
				return err
			}
		}
	}
	// A group around the ring, and a lone Send from rank 0 to the last
	// rank that the others take no part in: connections made by two ranks
	// alone.
	const count = 1<<16 + 3
	got := make([]int32, count)
	next, prev := (rank+1)%n, (rank+n-1)%n
	if err := ringo.SendRecv(ctx, ringo.SendOp(c, block(rank, 0, count), next), ringo.RecvOp(c, got, prev)); err != nil {
		return err
	}
	if err := check("sendrecv around the ring", got, block(prev, 0, count)); err != nil {
		return err
	}
	switch rank {
	case 0:
		return ringo.Send(ctx, c, block(0, 7, count), n-1)
	case n - 1:
		if err := ringo.Recv(ctx, c, got, 0); err != nil {
			return err
		}
		return check("recv from rank 0", got, block(0, 7, count))
	}
	return nil
}
