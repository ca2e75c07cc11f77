package sys

import (
	"context"
	"net"
	"os"
	"sync"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
	"golang.org/x/sys/unix"
)

// lendPipe lends a pipe's write end and returns the read end.
func lendPipe(t *testing.T) (*Lender, *os.File) {
	t.Helper()
	r, w, err := os.Pipe()
	require.NoError(t, err)
	t.Cleanup(func() { r.Close() })
	fd, err := unix.Dup(int(w.Fd()))
	require.NoError(t, err)
	w.Close()
	l, err := Lend(fd)
	require.NoError(t, err)
	return l, r
}

// TestLendBorrow: borrowers, several at once, get a descriptor of the
// lent pipe: what they write through it comes out of the read end.
func TestLendBorrow(t *testing.T) {
	l, r := lendPipe(t)
	const borrowers = 4
	var wg sync.WaitGroup
	errs := make([]error, borrowers)
	for i := range borrowers {
		wg.Add(1)
		go func() {
			defer wg.Done()
			fd, err := Borrow(context.Background(), l.Addr())
			if err != nil {
				errs[i] = err
				return
			}
			defer unix.Close(fd)
			_, errs[i] = unix.Write(fd, []byte{byte('a' + i)})
		}()
	}
	wg.Wait()
	for i, err := range errs {
		require.NoError(t, err, "borrower %d", i)
	}
	require.NoError(t, l.Close())
	got := make([]byte, 16)
	n, err := r.Read(got)
	require.NoError(t, err)
	assert.ElementsMatch(t, []byte("abcd"), got[:n])
}

// TestBorrowRefused: a wrong secret gets no descriptor, and neither does
// anyone once the lender is closed; a borrower that connects and says
// nothing holds up neither another borrower nor Close.
func TestBorrowRefused(t *testing.T) {
	l, _ := lendPipe(t)
	bad := l.Addr()
	bad.Secret[0] ^= 1
	_, err := Borrow(context.Background(), bad)
	require.Error(t, err)
	assert.Contains(t, err.Error(), "it refused")

	mute, err := net.DialUnix("unix", nil, &net.UnixAddr{Name: l.Addr().socket(), Net: "unix"})
	require.NoError(t, err)
	defer mute.Close()
	fd, err := Borrow(context.Background(), l.Addr()) // served beside the mute one
	require.NoError(t, err)
	unix.Close(fd)
	require.NoError(t, l.Close())

	_, err = Borrow(context.Background(), l.Addr())
	require.Error(t, err)
	assert.Contains(t, err.Error(), "borrowing a file descriptor")
}

// TestBorrowNothing: no lender under that name.
func TestBorrowNothing(t *testing.T) {
	var a ServiceAddr
	a.Name[0] = 0xfe
	_, err := Borrow(context.Background(), a)
	require.Error(t, err)
	assert.Contains(t, err.Error(), "borrowing a file descriptor")
}

// TestServiceCall: a request reaches the handler and its answer comes
// back; a request longer than the service takes, or with a wrong secret,
// gets none.
func TestServiceCall(t *testing.T) {
	s, err := Serve(8, func(req []byte) ([]byte, int) { return append([]byte("got "), req...), -1 })
	require.NoError(t, err)
	defer s.Close()
	resp, fd, err := Call(context.Background(), s.Addr(), []byte("map 3"), 64)
	require.NoError(t, err)
	assert.Equal(t, -1, fd)
	assert.Equal(t, "got map 3", string(resp))

	_, _, err = Call(context.Background(), s.Addr(), []byte("a request of 24 bytes..."), 64)
	assert.ErrorContains(t, err, "it refused")
	bad := s.Addr()
	bad.Secret[3] ^= 0x80
	_, _, err = Call(context.Background(), bad, nil, 64)
	assert.ErrorContains(t, err, "it refused")
	_, _, err = Call(context.Background(), s.Addr(), []byte("map 3"), 4)
	assert.ErrorContains(t, err, "a response of 9 bytes, at most 4 expected")
}
