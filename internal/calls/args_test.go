package calls

import (
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/ringo-ccl/ringo/internal/errs"
	"github.com/ringo-ccl/ringo/reduce"
	"github.com/ringo-ccl/ringo/ring"
)

// TestArgsCheck: a host call's arguments against rank 1 of 4 ranks; every
// refusal wraps ErrInvalidArgument and says what is wrong.
func TestArgsCheck(t *testing.T) {
	buf := make([]byte, 64)
	f32 := func(coll ring.Collective, count int64, send, recv []byte) Args {
		return Args{Coll: coll, Count: count, Type: reduce.Float32, Host: [2][]byte{send, recv}}
	}
	for _, tc := range []struct {
		name string
		args Args
		want string // "": accepted
	}{
		{"all-reduce in place", f32(ring.AllReduce, 16, buf, buf), ""},
		{"reduce-scatter in place", f32(ring.ReduceScatter, 4, buf, buf[16:32]), ""},
		{"all-gather in place", f32(ring.AllGather, 4, buf[16:32], buf), ""},
		{"overlap not in place", f32(ring.AllReduce, 8, buf[:32], buf[4:36]), "overlap without being in place"},
		{"short recv", f32(ring.AllReduce, 16, buf, make([]byte, 8)), "recv buffer has 8 bytes, need 64"},
		{"nil send", f32(ring.AllReduce, 16, nil, buf), "send buffer is nil"},
		{"broadcast non-root ignores send", Args{Coll: ring.Broadcast, Count: 16, Type: reduce.Float32, Host: [2][]byte{nil, buf}}, ""},
		{"root out of range", Args{Coll: ring.Reduce, Count: 1, Type: reduce.Float32, Root: 4, Host: [2][]byte{buf, buf}}, "root 4 outside [0, 4)"},
		{"negative count", f32(ring.AllReduce, -1, buf, buf), "count -1 is negative"},
		{"unknown collective", f32(ring.Collective(99), 1, buf, buf), "unknown collective"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			var funcs reduce.Cache
			err := tc.args.Check(1, 4, &funcs, nil)
			if tc.want == "" {
				require.NoError(t, err)
				return
			}
			require.ErrorIs(t, err, errs.ErrInvalidArgument)
			assert.ErrorContains(t, err, tc.want)
		})
	}
}
