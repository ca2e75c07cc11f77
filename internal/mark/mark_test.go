package mark

import (
	"encoding/json"
	"errors"
	"os"
	"path/filepath"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/ringo-ccl/ringo/reduce"
	"github.com/ringo-ccl/ringo/ring"
	"github.com/ringo-ccl/ringo/trace"
)

// TestMarks: with neither the trace nor NVTX on, a rank has no marks and
// marking costs nothing; with a trace, each call is one event naming its
// type, op and error.
func TestMarks(t *testing.T) {
	var none *Marks
	none.Start(ring.AllReduce, 8, reduce.Float32, reduce.OpSum)
	none.End(1, nil)
	assert.Nil(t, New(0, nil))

	path := filepath.Join(t.TempDir(), "trace.json")
	ms := New(3, trace.New(path))
	require.NotNil(t, ms)
	ms.Start(ring.AllReduce, 8, reduce.Float32, reduce.OpSum)
	ms.End(1, errors.New("boom"))
	require.NoError(t, ms.trace.Write())
	b, err := os.ReadFile(path)
	require.NoError(t, err)
	assert.True(t, json.Valid(b))
	assert.Contains(t, string(b), `"what":"float sum: boom"`)
}
