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

// TestCheckSchedule: a schedule's plans against an all-gather call on rank
// 1 of 3 ranks whose connections have 2 channels and 64 KiB FIFOs; every
// refusal wraps ErrInvalidArgument and says what does not match.
func TestCheckSchedule(t *testing.T) {
	spec := ring.Spec{Coll: ring.AllGather, Ring: ring.Identity(3), Count: 100, EltSize: 4, Channels: 2, Proto: ring.Simple, BuffSize: 32 << 10}
	plans := func(edit func(*ring.Spec)) []*ring.Plan {
		ps := make([]*ring.Plan, 3)
		for r := range ps {
			s := spec
			s.Rank = r
			edit(&s)
			p, err := ring.New(s)
			require.NoError(t, err)
			ps[r] = p
		}
		return ps
	}
	buff := func(ring.Protocol) int { return 64 << 10 }
	call := Args{Coll: ring.AllGather, Count: 100, Type: reduce.Float32}
	require.NoError(t, call.CheckSchedule(plans(func(*ring.Spec) {}), 1, 3, 2, buff))
	for _, tc := range []struct {
		name  string
		plans []*ring.Plan
		call  Args
		want  string
	}{
		{"too few plans", plans(func(*ring.Spec) {})[:2], call, "a schedule of 2 plans for a communicator of 3 ranks"},
		{"another count", plans(func(*ring.Spec) {}), Args{Coll: ring.AllGather, Count: 99, Type: reduce.Float32}, "is not the schedule's"},
		{"another type", plans(func(*ring.Spec) {}), Args{Coll: ring.AllGather, Count: 100, Type: reduce.Float64}, "moves 4-byte elements"},
		{"too many channels", plans(func(s *ring.Spec) { s.Channels = 4 }), call, "do not fit this communicator's connections (2 channels"},
		{"larger FIFOs", plans(func(s *ring.Spec) { s.BuffSize = 128 << 10 }), call, "FIFOs of 65536 bytes"},
		{"LL128", plans(func(s *ring.Spec) { s.Proto = ring.LL128 }), call, "do not fit"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			err := tc.call.CheckSchedule(tc.plans, 1, 3, 2, buff)
			require.ErrorIs(t, err, errs.ErrInvalidArgument)
			assert.ErrorContains(t, err, tc.want)
		})
	}
	swapped := plans(func(*ring.Spec) {})
	swapped[1] = swapped[0]
	assert.ErrorContains(t, call.CheckSchedule(swapped, 1, 3, 2, buff), "plans[1] is rank 0's plan")
}
