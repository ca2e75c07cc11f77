package shm

import (
	"context"
	"os/exec"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/ringo-ccl/ringo/internal/errs"
	"github.com/ringo-ccl/ringo/internal/mem"
	"github.com/ringo-ccl/ringo/internal/sys"
	"github.com/ringo-ccl/ringo/transport/exchangetest"
)

// TestAttachModes: with RINGO_CMA=1 every rank reads a peer's memory (ranks
// as goroutines: through this process's own pid); a rank that turns it off
// turns it off for all, each told which rank and why; automatic either
// attaches or says why not, never fails otherwise.
func TestAttachModes(t *testing.T) {
	f := exchangetest.New(3)
	as := make([]*Attach, 3)
	for r, err := range f.Each(func(r int) (err error) {
		as[r], err = NewAttach(context.Background(), f.Rank(r), AttachOn)
		return err
	}) {
		require.NoError(t, err, "rank %d", r)
	}
	src, dst := []byte("the peer's bytes"), make([]byte, 16)
	require.NoError(t, as[0].Read(2, dst, mem.Addr(src)))
	assert.Equal(t, src, dst)
	require.NoError(t, as[0].Check(2))
	for _, a := range as {
		require.NoError(t, a.Close())
	}

	for r, err := range f.Each(func(r int) error {
		mode := AttachOn
		if r == 1 {
			mode = AttachOff
		}
		a, err := NewAttach(context.Background(), f.Rank(r), mode)
		assert.Nil(t, a)
		return err
	}) {
		require.ErrorIs(t, err, ErrNoAttach, "rank %d", r)
		assert.Contains(t, err.Error(), "rank 1: turned off (RINGO_CMA=0)", "rank %d", r)
	}

	for r, err := range f.Each(func(r int) error {
		a, err := NewAttach(context.Background(), f.Rank(r), AttachAuto)
		if a != nil {
			a.Close()
		}
		return err
	}) {
		if err != nil {
			require.ErrorIs(t, err, ErrNoAttach, "rank %d", r)
		}
	}
}

// TestAttachBadAnnouncement: a peer whose announcement is not a pid, an
// address and a probe fails setup, named.
func TestAttachBadAnnouncement(t *testing.T) {
	f := exchangetest.New(2)
	errors := f.Each(func(r int) error {
		if r == 1 {
			_, err := f.Rank(r).AllGather(context.Background(), []byte("short"))
			return err
		}
		_, err := NewAttach(context.Background(), f.Rank(r), AttachOn)
		return err
	})
	require.Error(t, errors[0])
	assert.NotErrorIs(t, errors[0], ErrNoAttach)
	assert.Contains(t, errors[0].Error(), "rank 1 announced 5 bytes for attach, expected 48")
}

// TestAttachPeerExited: once a peer has exited, a read from its pid fails
// and Check fails, both as a lost peer naming the pid — whoever holds the
// pid now.
func TestAttachPeerExited(t *testing.T) {
	cmd := exec.Command("sleep", "60")
	require.NoError(t, cmd.Start())
	p, err := sys.OpenProcess(cmd.Process.Pid)
	require.NoError(t, err)
	a := &Attach{rank: 0, procs: []*sys.Process{nil, p}}
	defer a.Close()
	require.NoError(t, a.Check(1))
	require.NoError(t, cmd.Process.Kill())
	_ = cmd.Wait()
	err = a.Check(1)
	require.ErrorIs(t, err, errs.ErrPeerLost)
	assert.Contains(t, err.Error(), "rank 1 lost: peer lost: pid")
	assert.Contains(t, err.Error(), "has exited")
	err = a.Read(1, make([]byte, 8), 0x10000)
	require.ErrorIs(t, err, errs.ErrPeerLost)
	assert.Contains(t, err.Error(), "rank 1 lost: peer lost: process_vm_readv from pid")
}
