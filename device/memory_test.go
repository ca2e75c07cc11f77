package device

import (
	"errors"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// TestSyncBounded: a sync that ends in time is waited for without stop; one
// that does not is stopped once the timeout passes, then waited for.
func TestSyncBounded(t *testing.T) {
	boom := errors.New("boom")
	stopped := false
	err := SyncBounded(func() error { return boom }, time.Hour, func() { stopped = true })
	require.ErrorIs(t, err, boom)
	assert.False(t, stopped)

	release := make(chan struct{})
	err = SyncBounded(func() error { <-release; return nil }, time.Millisecond, func() { close(release) })
	require.NoError(t, err)

	err = SyncBounded(func() error { return nil }, 0, func() { t.Error("stop called without a timeout") })
	require.NoError(t, err)
}
