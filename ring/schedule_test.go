package ring

import (
	"bytes"
	"strings"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// TestScheduleRoundTrip: every collective's and variant's plans survive the
// schedule format unchanged, and the document reads back.
func TestScheduleRoundTrip(t *testing.T) {
	specs := []Spec{
		{Coll: AllReduce, Ring: Ring{Order: []int{2, 0, 1}}, Count: 1000, EltSize: 4, Channels: 2, Proto: Simple, BuffSize: 8 * 512},
		{Coll: AllReduce, Ring: Identity(2), Count: 999, EltSize: 2, Channels: 3, Proto: LL, BuffSize: 8 * 256, Variant: OneShot},
		{Coll: ReduceScatter, Ring: Identity(4), Count: 77, EltSize: 8, Channels: 1, Proto: LL128, BuffSize: 8 * 1024},
		{Coll: Broadcast, Ring: Identity(3), Root: 2, Count: 500, EltSize: 1, Channels: 2, Proto: Simple, BuffSize: 8 * 64},
	}
	for _, s := range specs {
		plans := plansFor(t, s)
		d, err := NewSchedule(plans)
		if err != nil {
			t.Fatal(err)
		}
		var buf bytes.Buffer
		if err := d.Write(&buf); err != nil {
			t.Fatal(err)
		}
		if lines := strings.Count(buf.String(), `"op"`); lines != strings.Count(buf.String(), "\n    {") {
			t.Errorf("%d steps on %d step lines", lines, strings.Count(buf.String(), "\n    {"))
		}
		back, err := ReadSchedule(&buf)
		if err != nil {
			t.Fatalf("%v\n%s", err, buf.String())
		}
		got, err := back.Plans()
		if err != nil {
			t.Fatal(err)
		}
		for r := range plans {
			if !samePlan(got[r], plans[r]) {
				t.Fatalf("%+v rank %d: plan changed through the schedule", s, r)
			}
		}
	}
}

func samePlan(a, b *Plan) bool {
	if a.Spec.Rank != b.Spec.Rank || len(a.Channels) != len(b.Channels) || a.SlotBytes != b.SlotBytes || a.SlicesPerStep != b.SlicesPerStep {
		return false
	}
	for c := range a.Channels {
		x, y := a.Channels[c], b.Channels[c]
		if x.Offset != y.Offset || x.Count != y.Count || len(x.Steps) != len(y.Steps) {
			return false
		}
		for i := range x.Steps {
			if x.Steps[i] != y.Steps[i] {
				return false
			}
		}
	}
	return true
}

// TestScheduleRefusesBadDocuments: a schedule that does not parse, names
// nothing, or would hang or compute a wrong result is an error saying what
// is wrong.
func TestScheduleRefusesBadDocuments(t *testing.T) {
	good := func() *Schedule {
		d, err := NewSchedule(plansFor(t, Spec{Coll: AllReduce, Ring: Identity(3), Count: 100, EltSize: 4, Channels: 1, Proto: Simple, BuffSize: 8 * 512}))
		if err != nil {
			t.Fatal(err)
		}
		return d
	}
	cases := []struct {
		name string
		mod  func(d *Schedule)
		want string
	}{
		{"version", func(d *Schedule) { d.Version = 3 }, "version 3"},
		{"version 0", func(d *Schedule) { d.Version = 0 }, "version 0"},
		{"collective", func(d *Schedule) { d.Collective = "alltoall" }, `unknown name "alltoall"`},
		{"proto", func(d *Schedule) { d.Proto = "LL64" }, `proto: unknown name "LL64"`},
		{"variant", func(d *Schedule) { d.Variant = "tree" }, "unknown variant"},
		{"ranks", func(d *Schedule) { d.Ranks = d.Ranks[:2] }, "2 rank programs for a ring of 3"},
		{"rank order", func(d *Schedule) { d.Ranks[0].Rank = 1 }, "ranks[0] is rank 1's"},
		{"channels", func(d *Schedule) { d.Ranks[1].Channels = nil }, "rank 1 has 0 channels"},
		{"op", func(d *Schedule) { d.Ranks[0].Channels[0].Steps[0].Op = "jump" }, `step 0: op: unknown name "jump"`},
		{"peer", func(d *Schedule) { d.Ranks[0].Channels[0].Steps[0].Send = 7 }, "send with recv -1, send 7"},
		{"negative", func(d *Schedule) { d.Ranks[0].Channels[0].Steps[1].Count = -5 }, "negative offset or count"},
		{"wrong data", func(d *Schedule) { d.Ranks[2].Channels[0].Steps[0].In += 4 }, "schedule: verify"},
		{"deadlock", func(d *Schedule) {
			st := d.Ranks[1].Channels[0].Steps
			d.Ranks[1].Channels[0].Steps = st[1:]
		}, "schedule: verify"},
		{"spec", func(d *Schedule) { d.Channels = 0 }, "0 channels"},
	}
	for _, c := range cases {
		d := good()
		c.mod(d)
		if _, err := d.Plans(); err == nil || !strings.Contains(err.Error(), c.want) {
			t.Errorf("%s: got %v, want an error containing %q", c.name, err, c.want)
		}
	}
	if _, err := ReadSchedule(strings.NewReader(`{"format": "ringo-schedule", "extra": 1}`)); err == nil || !strings.Contains(err.Error(), "unknown field") {
		t.Errorf("unknown field: %v", err)
	}
	if _, err := NewSchedule(nil); err == nil {
		t.Error("a schedule of no plans")
	}
}

// FuzzSchedule: no document makes ReadSchedule or Plans panic or hang, and
// what Plans accepts is what the document says and runs: its plans Verify
// clean, make the same document again (names in their canonical spelling),
// and that document, written and read back, gives the same plans.
func FuzzSchedule(f *testing.F) {
	for _, s := range []Spec{
		{Coll: AllReduce, Ring: Identity(2), Count: 10, EltSize: 4, Channels: 1, Proto: LL, BuffSize: 8 * 256, Variant: OneShot},
		{Coll: AllGather, Ring: Identity(3), Count: 9, EltSize: 2, Channels: 2, Proto: Simple, BuffSize: 8 * 64},
		{Coll: Broadcast, Ring: Ring{Order: []int{1, 2, 0}}, Root: 2, Count: 33, EltSize: 1, Channels: 2, Proto: Simple, BuffSize: 8 * 64},
	} {
		d, err := NewSchedule(plansFor(f, s))
		require.NoError(f, err)
		var buf bytes.Buffer
		require.NoError(f, d.Write(&buf))
		f.Add(buf.Bytes())
		// The same, its names spelled otherwise.
		d.Collective, d.Proto, d.Variant = strings.ToUpper(d.Collective), strings.ToLower(d.Proto), " "+strings.ToUpper(d.Variant)
		d.Ranks[0].Channels[0].Steps[0].Op = strings.ToUpper(d.Ranks[0].Channels[0].Steps[0].Op)
		_, err = d.Plans()
		require.NoError(f, err, "a seed must reach the checks")
		buf.Reset()
		d.Write(&buf)
		f.Add(buf.Bytes())
	}
	f.Fuzz(func(t *testing.T, b []byte) {
		d, err := ReadSchedule(bytes.NewReader(b))
		if err != nil || d.Count > 1<<16 || len(d.Ring) > 16 {
			return
		}
		plans, err := d.Plans()
		if err != nil {
			return
		}
		require.Len(t, plans, len(d.Ranks))
		require.NoError(t, Verify(plans), "Plans returned plans that Verify faults")

		again, err := NewSchedule(plans)
		require.NoError(t, err, "Plans returned plans that make no schedule")
		var want, got bytes.Buffer
		require.NoError(t, canonical(t, d).Write(&want))
		require.NoError(t, again.Write(&got))
		require.Equal(t, want.String(), got.String(), "the plans are not what the document says")

		back, err := ReadSchedule(&got)
		require.NoError(t, err)
		plans2, err := back.Plans()
		require.NoError(t, err, "a schedule made from accepted plans is refused")
		for r := range plans {
			assert.True(t, samePlan(plans[r], plans2[r]), "rank %d: the plan changed through the schedule", r)
		}
	})
}

// canonical returns a copy of d, which Plans accepted, with its names as
// NewSchedule writes them.
func canonical(t *testing.T, d *Schedule) *Schedule {
	t.Helper()
	c := *d
	coll, err := ParseCollective(d.Collective)
	require.NoError(t, err)
	proto, err := ParseProtocol(d.Proto)
	require.NoError(t, err)
	variant, err := ParseVariant(d.Variant)
	require.NoError(t, err)
	c.Collective, c.Proto, c.Variant = coll.String(), proto.String(), variant.String()
	c.Ranks = make([]RankSchedule, len(d.Ranks))
	for r, rs := range d.Ranks {
		c.Ranks[r] = RankSchedule{Rank: rs.Rank, Channels: make([]ChannelSchedule, len(rs.Channels))}
		for ch, cs := range rs.Channels {
			steps := make([]StepSchedule, len(cs.Steps))
			for i, st := range cs.Steps {
				prim, err := parseName(st.Op, numPrims)
				require.NoError(t, err)
				st.Op = prim.String()
				steps[i] = st
			}
			c.Ranks[r].Channels[ch] = ChannelSchedule{Offset: cs.Offset, Count: cs.Count, Steps: steps}
		}
	}
	return &c
}
