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

// TestArgsCheckP2P: a point-to-point call's messages on rank 1 of 3; every
// refusal wraps ErrInvalidArgument and names the message and what is wrong.
func TestArgsCheckP2P(t *testing.T) {
	buf := make([]byte, 64)
	send := func(peer int, count int64, b []byte) Msg {
		return Msg{Send: true, Peer: peer, Count: count, Type: reduce.Float32, Buf: b}
	}
	recv := func(peer int, count int64, b []byte) Msg {
		return Msg{Peer: peer, Count: count, Type: reduce.Float32, Buf: b}
	}
	for _, tc := range []struct {
		name string
		msgs []Msg
		want string // "": accepted
	}{
		{"send and receive", []Msg{send(0, 8, buf[:32]), recv(2, 8, buf[32:])}, ""},
		{"sends share memory", []Msg{send(0, 16, buf), send(2, 16, buf)}, ""},
		{"self pair", []Msg{send(1, 4, buf[:16]), recv(1, 4, buf[16:32])}, ""},
		{"empty with nil", []Msg{send(0, 0, nil)}, ""},
		{"nil buffer", []Msg{send(0, 0, nil), recv(2, 4, nil)}, "message 1 (recv from rank 2): buffer is nil"},
		{"short buffer", []Msg{send(2, 17, buf)}, "message 0 (send to rank 2): buffer has 64 bytes, need 68"},
		{"misaligned", []Msg{recv(0, 2, buf[1:9])}, "buffer is not aligned to 4-byte float"},
		{"invalid type", []Msg{{Peer: 0, Count: 1, Type: 42, Buf: buf}}, "message 0 (recv from rank 0): invalid datatype 42"},
		{"peer", []Msg{send(3, 1, buf)}, "peer 3 outside [0, 3)"},
		{"negative count", []Msg{recv(0, -1, buf)}, "count -1 is negative"},
		{"overflow", []Msg{recv(0, 1<<62, buf)}, "overflows"},
		{"self alone", []Msg{send(1, 4, buf)}, "rank 1's send 0 to itself (16 bytes), has no matching receive"},
		{"receive into a send", []Msg{recv(0, 4, buf[8:24]), send(2, 4, buf[:16])}, "message 0 (recv from rank 0) and message 1 (send to rank 2) overlap"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			a := Args{Coll: ring.SendRecvs, Name: "sendrecv", Msgs: tc.msgs}
			err := a.Check(1, 3, nil, nil)
			if tc.want == "" {
				require.NoError(t, err)
				return
			}
			require.ErrorIs(t, err, errs.ErrInvalidArgument)
			assert.Contains(t, err.Error(), tc.want)
			assert.Contains(t, err.Error(), "sendrecv rank 1")
		})
	}
	a := Args{Coll: ring.AllReduce, Count: 1, Type: reduce.Float32, Host: [2][]byte{buf, buf}, Msgs: []Msg{send(0, 1, buf)}}
	assert.ErrorContains(t, a.Check(1, 3, &reduce.Cache{}, nil), "messages in a call of allreduce")
}
