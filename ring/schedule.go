package ring

import (
	"encoding/json"
	"fmt"
	"io"
	"strings"
)

// The schedule format: every rank's plan of one collective as a versioned
// JSON document, the form in which plans are shown (ringo plan --show),
// simulated (ringo sim) and written by hand or by other tools. Its fields
// are those of Spec, Plan, Channel and Step, with enums by name:
//
//	{"format": "ringo-schedule", "version": 2,
//	 "collective": "allreduce", "variant": "ring", "ring": [0, 1], "root": 0,
//	 "count": 1024, "elt_size": 4, "proto": "Simple", "buff_size": 4194304, "channels": 1,
//	 "ranks": [{"rank": 0, "channels": [{"offset": 0, "count": 1024, "steps": [
//	     {"op": "send", "chunk": 1, "recv": -1, "send": 1, "in": 512, "out": 512, "count": 512, "slice": 256},
//	     …]}]},
//	   …]}
//
// A step's counts and offsets are in elements; "recv" and "send" are the
// ranks it receives from and sends to (-1: none), any rank but itself;
// "slice" is the elements of each of the plan's slices. A sendRecv step
// (the point-to-point primitive, which may appear in any schedule) has
// "recv_count" too, the elements its receive half takes into the output at
// "out" (its "count" is what it sends from "in"); no other step has it.
// A point-to-point schedule ("collective": "sendrecv", count 0: every
// rank's NewP2P plan of one group) gives each rank's messages beside its
// channels, "sends" and "recvs" ({"peer", "off", "count"} each, in issue
// order), which Plans checks the delivery of. Version 1, still
// read, is the same document whose steps name only the channel's ring
// neighbours (its executors connected no others); Plans holds a version-1
// document to that. The derived geometry (slot and slice sizes)
// follows from the spec fields, as in Plan.Build. Schedule.Plans checks a
// document completely — fields, then Verify over all ranks — so a schedule
// that would deadlock or compute a wrong result is refused, not run.
const (
	ScheduleFormat  = "ringo-schedule"
	ScheduleVersion = 2
)

// MaxScheduleElems bounds the elements, all ranks' buffers together, of a
// schedule that Plans accepts: Verify tracks every element.
const MaxScheduleElems = 1 << 26

// Schedule is the schedule format's document.
type Schedule struct {
	Format     string         `json:"format"`
	Version    int            `json:"version"`
	Collective string         `json:"collective"`
	Variant    string         `json:"variant"`
	Ring       []int          `json:"ring"`
	Root       int            `json:"root"`
	Count      int64          `json:"count"`
	EltSize    int            `json:"elt_size"`
	Proto      string         `json:"proto"`
	BuffSize   int            `json:"buff_size"`
	Channels   int            `json:"channels"`
	Ranks      []RankSchedule `json:"ranks"`
}

// RankSchedule is one rank's program.
type RankSchedule struct {
	Rank     int               `json:"rank"`
	Channels []ChannelSchedule `json:"channels"`
	// A point-to-point schedule's messages (P2PSpec's).
	Sends []Xfer `json:"sends,omitempty"`
	Recvs []Xfer `json:"recvs,omitempty"`
}

// ChannelSchedule is one rank's program on one channel.
type ChannelSchedule struct {
	Offset int64          `json:"offset"`
	Count  int64          `json:"count"`
	Steps  []StepSchedule `json:"steps"`
}

// StepSchedule is one primitive call.
type StepSchedule struct {
	Op    string `json:"op"`
	Chunk int32  `json:"chunk"`
	Recv  int32  `json:"recv"`
	Send  int32  `json:"send"`
	In    int64  `json:"in"`
	Out   int64  `json:"out"`
	Count int64  `json:"count"`
	Slice int64  `json:"slice"`
	// RecvCount is a sendRecv step's receive count (Step.RecvCount).
	RecvCount int64 `json:"recv_count,omitempty"`
}

// NewSchedule returns the schedule of plans, plans[r] being rank r's plan of
// one collective.
func NewSchedule(plans []*Plan) (*Schedule, error) {
	if len(plans) == 0 {
		return nil, fmt.Errorf("schedule: no plans")
	}
	s0 := plans[0].Spec
	d := &Schedule{
		Format: ScheduleFormat, Version: ScheduleVersion,
		Collective: s0.Coll.String(), Variant: s0.Variant.String(), Ring: append([]int(nil), s0.Ring.Order...),
		Root: s0.Root, Count: s0.Count, EltSize: s0.EltSize, Proto: s0.Proto.String(), BuffSize: s0.BuffSize,
		Channels: s0.Channels,
	}
	for r, p := range plans {
		s := p.Spec
		s.Rank = s0.Rank
		if s.Coll != s0.Coll || s.Variant != s0.Variant || !sameOrder(s.Ring, s0.Ring) || s.Count != s0.Count ||
			s.EltSize != s0.EltSize || s.Proto != s0.Proto || s.BuffSize != s0.BuffSize || s.Channels != s0.Channels ||
			(s.Coll.Rooted() && s.Root != s0.Root) || p.Spec.Rank != r {
			return nil, fmt.Errorf("schedule: plans[%d] is not rank %d's plan of rank 0's collective", r, r)
		}
		rs := RankSchedule{Rank: r}
		if p.P2P != nil {
			rs.Sends, rs.Recvs = append([]Xfer{}, p.P2P.Sends...), append([]Xfer{}, p.P2P.Recvs...)
		}
		for c, ch := range p.Channels {
			cs := ChannelSchedule{Offset: ch.Offset, Count: ch.Count, Steps: make([]StepSchedule, 0, len(ch.Steps))}
			for i, st := range ch.Steps {
				if st.Tile > 0 {
					return nil, fmt.Errorf("schedule: rank %d channel %d step %d goes in tiles (P2PSpec.Stripe), which a schedule does not carry", r, c, i)
				}
				cs.Steps = append(cs.Steps, StepSchedule{Op: st.Prim.String(), Chunk: st.Chunk, Recv: st.RecvPeer,
					Send: st.SendPeer, In: st.InOff, Out: st.OutOff, Count: st.Count, Slice: st.SliceLen, RecvCount: st.RecvCount})
			}
			rs.Channels = append(rs.Channels, cs)
		}
		d.Ranks = append(d.Ranks, rs)
	}
	return d, nil
}

// Plans returns every rank's plan of the schedule, after checking it: the
// format and version, every name and field, and then, symbolically, that the
// ranks' programs together run to completion and compute the collective
// (Verify).
func (d *Schedule) Plans() ([]*Plan, error) {
	bad := func(format string, a ...any) ([]*Plan, error) {
		return nil, fmt.Errorf("schedule: %s", fmt.Sprintf(format, a...))
	}
	if d.Format != ScheduleFormat || d.Version < 1 || d.Version > ScheduleVersion {
		return bad("format %q version %d, want %q version 1 to %d", d.Format, d.Version, ScheduleFormat, ScheduleVersion)
	}
	coll, err := ParseCollective(d.Collective)
	if err != nil {
		return bad("collective: %v", err)
	}
	proto, err := ParseProtocol(d.Proto)
	if err != nil {
		return bad("proto: %v", err)
	}
	variant, err := ParseVariant(d.Variant)
	if err != nil {
		return bad("%v", err)
	}
	spec := Spec{Coll: coll, Ring: Ring{Order: append([]int(nil), d.Ring...)}, Root: d.Root, Count: d.Count,
		EltSize: d.EltSize, Channels: d.Channels, Proto: proto, BuffSize: d.BuffSize, Variant: variant}
	if n := int64(len(d.Ring)); d.Count < 0 || d.Count > MaxScheduleElems/max(n*n, 1) {
		return bad("count %d on %d ranks: more than Verify checks (%d elements in all)", d.Count, n, int64(MaxScheduleElems))
	}
	if len(d.Ranks) != spec.Ring.Size() {
		return bad("%d rank programs for a ring of %d", len(d.Ranks), spec.Ring.Size())
	}
	plans := make([]*Plan, len(d.Ranks))
	for r, rs := range d.Ranks {
		if rs.Rank != r {
			return bad("ranks[%d] is rank %d's program", r, rs.Rank)
		}
		spec.Rank = r
		p, err := schedulePlan(spec, rs)
		if err != nil {
			return bad("%v", err)
		}
		if len(rs.Channels) != spec.Channels {
			return bad("rank %d has %d channels, the schedule %d", r, len(rs.Channels), spec.Channels)
		}
		for c, cs := range rs.Channels {
			ch := &p.Channels[c]
			ch.Offset, ch.Count, ch.Steps = cs.Offset, cs.Count, ch.Steps[:0]
			for i, ss := range cs.Steps {
				prim, err := parseName(ss.Op, numPrims)
				if err != nil {
					return bad("rank %d channel %d step %d: op: %v", r, c, i, err)
				}
				if !peerOK(ss.Recv, prim.Recvs(), len(d.Ranks)) || !peerOK(ss.Send, prim.Sends(), len(d.Ranks)) {
					return bad("rank %d channel %d step %d: %v with recv %d, send %d", r, c, i, prim, ss.Recv, ss.Send)
				}
				if prev, next := Neighbours(spec.Ring, variant, c, r); d.Version == 1 &&
					((prim.Recvs() && int(ss.Recv) != prev) || (prim.Sends() && int(ss.Send) != next)) {
					return bad("rank %d channel %d step %d: a version-1 schedule names only ring neighbours (%d, %d), not recv %d, send %d",
						r, c, i, prev, next, ss.Recv, ss.Send)
				}
				if ss.Count < 0 || ss.RecvCount < 0 || ss.In < 0 || ss.Out < 0 || ss.Slice < 0 || (max(ss.Count, ss.RecvCount) > 0 && ss.Slice == 0) {
					return bad("rank %d channel %d step %d: negative offset or count, or no slice length", r, c, i)
				}
				if ss.RecvCount != 0 && prim != SendRecv {
					return bad("rank %d channel %d step %d: recv_count on a %v (sendRecv's only)", r, c, i, prim)
				}
				ch.Steps = append(ch.Steps, Step{Prim: prim, Chunk: ss.Chunk, RecvPeer: ss.Recv, SendPeer: ss.Send,
					InOff: ss.In, OutOff: ss.Out, Count: ss.Count, SliceLen: ss.Slice, RecvCount: ss.RecvCount})
			}
		}
		plans[r] = p
	}
	if err := Verify(plans); err != nil {
		return bad("%v", err)
	}
	return plans, nil
}

// schedulePlan returns the plan whose geometry a rank's program of a
// schedule takes: New's for a collective, NewP2P's (from the rank's
// messages, bounded as counts are) for a point-to-point schedule.
func schedulePlan(spec Spec, rs RankSchedule) (*Plan, error) {
	if !spec.Coll.P2P() {
		if len(rs.Sends)+len(rs.Recvs) > 0 {
			return nil, fmt.Errorf("rank %d: sends and recvs in a schedule of %v (sendrecv's only)", rs.Rank, spec.Coll)
		}
		return New(spec)
	}
	ps := P2PSpec{Rank: spec.Rank, Size: spec.Ring.Size(), Sends: rs.Sends, Recvs: rs.Recvs, EltSize: spec.EltSize,
		Channels: spec.Channels, Proto: spec.Proto, BuffSize: spec.BuffSize}
	if spec.Count != 0 || !sameOrder(spec.Ring, Identity(ps.Size)) {
		return nil, fmt.Errorf("a sendrecv schedule has count 0 and the identity ring, not count %d and ring %v", spec.Count, spec.Ring.Order)
	}
	if err := ps.Validate(); err != nil {
		return nil, err
	}
	if ps.InputLen() > MaxScheduleElems/int64(ps.Size) || ps.OutputLen() > MaxScheduleElems/int64(ps.Size) {
		return nil, fmt.Errorf("rank %d's messages reach element %d: more than Verify checks (%d elements in all)",
			rs.Rank, max(ps.InputLen(), ps.OutputLen()), int64(MaxScheduleElems))
	}
	return NewP2P(ps)
}

// peerOK: a step names a peer in range exactly when it uses one.
func peerOK(peer int32, uses bool, n int) bool {
	if !uses {
		return peer == -1
	}
	return peer >= 0 && int(peer) < n
}

// ReadSchedule decodes a schedule document, refusing unknown fields.
func ReadSchedule(r io.Reader) (*Schedule, error) {
	dec := json.NewDecoder(r)
	dec.DisallowUnknownFields()
	var d Schedule
	if err := dec.Decode(&d); err != nil {
		return nil, fmt.Errorf("schedule: %w", err)
	}
	return &d, nil
}

// Write encodes the schedule as JSON, one step per line.
func (d *Schedule) Write(w io.Writer) error {
	ringJSON, _ := json.Marshal(d.Ring)
	var b strings.Builder
	fmt.Fprintf(&b, "{\"format\": %q, \"version\": %d,\n \"collective\": %q, \"variant\": %q, \"ring\": %s, \"root\": %d,\n",
		d.Format, d.Version, d.Collective, d.Variant, ringJSON, d.Root)
	fmt.Fprintf(&b, " \"count\": %d, \"elt_size\": %d, \"proto\": %q, \"buff_size\": %d, \"channels\": %d,\n \"ranks\": [",
		d.Count, d.EltSize, d.Proto, d.BuffSize, d.Channels)
	for r, rs := range d.Ranks {
		fmt.Fprintf(&b, "%s\n  {\"rank\": %d, ", comma(r), rs.Rank)
		for _, l := range []struct {
			name string
			xs   []Xfer
		}{{"sends", rs.Sends}, {"recvs", rs.Recvs}} {
			if len(l.xs) > 0 {
				xb, err := json.Marshal(l.xs)
				if err != nil {
					return err
				}
				fmt.Fprintf(&b, "%q: %s,\n   ", l.name, xb)
			}
		}
		b.WriteString("\"channels\": [")
		for c, cs := range rs.Channels {
			fmt.Fprintf(&b, "%s\n   {\"offset\": %d, \"count\": %d, \"steps\": [", comma(c), cs.Offset, cs.Count)
			for i, st := range cs.Steps {
				sb, err := json.Marshal(st)
				if err != nil {
					return err
				}
				fmt.Fprintf(&b, "%s\n    %s", comma(i), sb)
			}
			b.WriteString("]}")
		}
		b.WriteString("]}")
	}
	b.WriteString("\n ]\n}\n")
	_, err := io.WriteString(w, b.String())
	return err
}

func comma(i int) string {
	if i == 0 {
		return ""
	}
	return ","
}

// enum is what parseName reads: the generated String of Collective,
// Protocol and Prim.
type enum interface {
	~uint8
	String() string
}

// parseName returns the value of E, below n, whose String is s
// (case-insensitive).
func parseName[E enum](s string, n E) (E, error) {
	var names []string
	for v := E(0); v < n; v++ {
		if strings.EqualFold(v.String(), s) {
			return v, nil
		}
		names = append(names, v.String())
	}
	return 0, fmt.Errorf("unknown name %q (valid: %s)", s, strings.Join(names, ", "))
}
