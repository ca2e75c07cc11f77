package main

import (
	"errors"
	"flag"
	"fmt"
	"io"
	"os"
	"text/tabwriter"

	"github.com/ringo-ccl/ringo/ring"
)

// planMain prints the plan of a collective — every rank's steps per
// channel — as a table or, with -json, in the schedule format
// (ring.Schedule); with -schedule it reads such a document instead, checks
// it, and prints it the same way.
func planMain(args []string) error {
	fs := flag.NewFlagSet("plan", flag.ContinueOnError)
	coll := fs.String("coll", "allreduce", "collective")
	ranks := fs.Int("ranks", 2, "ranks (the ring 0…n−1 unless -ring)")
	order := fs.String("ring", "", "ring order, e.g. 0,2,1,3")
	size := fs.String("b", "1M", "bytes of the collective's larger buffer (as ringo bench counts them)")
	elt := fs.Int("elt", 4, "element size in bytes")
	channels := fs.Int("channels", 1, "channels")
	proto := fs.String("proto", "Simple", "protocol: LL, LL128, Simple")
	buff := fs.Int("buffsize", 0, "FIFO bytes per connection (0: the GPU path's default for the protocol)")
	variant := fs.String("variant", "ring", "plan generator: ring, oneshot, bidirectional, bf16wire, fp32wire, hierarchical")
	group := fs.Int("group", 0, "hierarchical: ranks per group (0: the default for the rank count)")
	phase := fs.Int("phase", 0, "hierarchical: show only this phase (1 reduce-scatter, 2 all-reduce, 3 all-gather; -json needs one)")
	root := fs.Int("root", 0, "root of broadcast and reduce")
	rank := fs.Int("rank", -1, "show only this rank's steps in the table (-1: all)")
	asJSON := fs.Bool("json", false, "write the schedule document")
	fs.Bool("show", true, "print the plan (the default; kept for ringo plan --show)")
	from := fs.String("schedule", "", "read this schedule document instead of planning")
	fs.SetOutput(os.Stderr)
	if err := fs.Parse(args); err != nil {
		return err
	}
	var plans []*ring.Plan
	var err error
	if *from != "" {
		plans, err = readSchedule(*from)
	} else {
		var s ring.Spec
		if s, err = planSpec(*coll, *ranks, *order, *size, *elt, *channels, *proto, *buff, *variant, *root); err != nil {
			return err
		}
		if s.Variant == ring.Hierarchical {
			return showHierarchy(os.Stdout, s, *group, *phase, *rank, *asJSON)
		}
		plans, err = planRanks(s)
	}
	if err != nil {
		return err
	}
	if *rank < -1 || *rank >= len(plans) {
		return fmt.Errorf("-rank %d: the plan has ranks 0…%d", *rank, len(plans)-1)
	}
	if *asJSON {
		d, err := ring.NewSchedule(plans)
		if err != nil {
			return err
		}
		return d.Write(os.Stdout)
	}
	return showPlans(os.Stdout, plans, *rank)
}

func readSchedule(path string) ([]*ring.Plan, error) {
	f, err := os.Open(path)
	if err != nil {
		return nil, err
	}
	defer f.Close()
	d, err := ring.ReadSchedule(f)
	if err != nil {
		return nil, fmt.Errorf("%s: %w", path, err)
	}
	plans, err := d.Plans()
	if err != nil {
		return nil, fmt.Errorf("%s: %w", path, err)
	}
	return plans, nil
}

// planSpec reads ringo plan's flags into a spec (Rank 0).
func planSpec(coll string, n int, order, size string, elt, channels int, proto string, buff int, variant string, root int) (ring.Spec, error) {
	c, err := ring.ParseCollective(coll)
	if err != nil {
		return ring.Spec{}, fmt.Errorf("-coll: %w", err)
	}
	p, err := ring.ParseProtocol(proto)
	if err != nil {
		return ring.Spec{}, fmt.Errorf("-proto: %w", err)
	}
	v, err := ring.ParseVariant(variant)
	if err != nil {
		return ring.Spec{}, fmt.Errorf("-variant: %w", err)
	}
	bytes, err := parseSize(size)
	if err != nil {
		return ring.Spec{}, fmt.Errorf("-b: %w", err)
	}
	r := ring.Identity(max(n, 0))
	if order != "" {
		o, err := intList(order)
		if err != nil {
			return ring.Spec{}, fmt.Errorf("-ring: %w", err)
		}
		r = ring.Ring{Order: o}
	}
	if elt < 1 {
		return ring.Spec{}, errors.New("-elt must be at least 1")
	}
	if r.Size() == 0 {
		return ring.Spec{}, fmt.Errorf("-ranks %d: need at least 1", n)
	}
	if buff == 0 {
		buff = gpuFIFO(p)
	}
	count := bytes / int64(elt)
	if c == ring.AllGather || c == ring.ReduceScatter {
		count /= int64(max(r.Size(), 1)) // -b counts the larger buffer
	}
	return ring.Spec{Coll: c, Ring: r, Root: root, Count: count, EltSize: elt, Channels: channels, Proto: p, BuffSize: buff, Variant: v}, nil
}

// planRanks plans s for every rank of its ring.
func planRanks(s ring.Spec) ([]*ring.Plan, error) {
	plans := make([]*ring.Plan, s.Ring.Size())
	for rk := range plans {
		s.Rank = rk
		var err error
		if plans[rk], err = ring.New(s); err != nil {
			return nil, err
		}
	}
	return plans, nil
}

// showHierarchy prints the hierarchical variant's three phases for an
// all-reduce spec s (or one of them; -json needs one), each with the
// groups or columns that run it.
func showHierarchy(w io.Writer, s ring.Spec, group, phase, rank int, asJSON bool) error {
	if s.Coll != ring.AllReduce {
		return fmt.Errorf("-variant hierarchical: an all-reduce, not a %v", s.Coll)
	}
	if group == 0 {
		group = ring.DefaultGroupSize(s.Ring.Size())
	}
	h, err := ring.NewHierarchy(s.Ring, group)
	if err != nil {
		return fmt.Errorf("-group: %w", err)
	}
	if phase < 0 || phase > 3 || (asJSON && phase == 0) {
		return fmt.Errorf("-phase %d: 1, 2 or 3 (0: all, not with -json)", phase)
	}
	names := [3]string{"reduce-scatter inside each group", "all-reduce along each column", "all-gather inside each group"}
	for i, ps := range h.Phases(s) {
		if phase != 0 && phase != i+1 {
			continue
		}
		plans, err := planRanks(ps)
		if err != nil {
			return err
		}
		if asJSON {
			d, err := ring.NewSchedule(plans)
			if err != nil {
				return err
			}
			return d.Write(w)
		}
		who := fmt.Sprintf("groups %v", h.Groups)
		if i == 1 {
			who = fmt.Sprintf("columns %v", h.Columns)
		}
		fmt.Fprintf(w, "# phase %d of 3: %s; its ranks are positions in each of the %s; tail of %d elements on the flat ring\n",
			i+1, names[i], who, s.Count%int64(group))
		if rank >= len(plans) {
			return fmt.Errorf("-rank %d: the phase has ranks 0…%d", rank, len(plans)-1)
		}
		if err := showPlans(w, plans, rank); err != nil {
			return err
		}
	}
	return nil
}

// showPlans prints the plans as a table, one step a line.
func showPlans(w io.Writer, plans []*ring.Plan, only int) error {
	s := plans[0].Spec
	p := plans[0]
	fmt.Fprintf(w, "# %v, variant %v, %d ranks (ring %v), count %d × %d B, %d channels, %v, FIFO %d B: slots of %d B carrying %d, %d slices × %d slots per step\n",
		s.Coll, s.Variant, s.Ring.Size(), s.Ring.Order, s.Count, s.EltSize, s.Channels, s.Proto, s.BuffSize,
		p.SlotBytes, p.SlotPayload, p.SlicesPerStep, p.SlotsPerSlice)
	tw := tabwriter.NewWriter(w, 0, 0, 2, ' ', tabwriter.AlignRight)
	fmt.Fprintln(tw, "rank\tchannel\tstep\top\tchunk\trecv\tsend\tin\tout\tcount\tslice\t")
	for r, pl := range plans {
		if only >= 0 && r != only {
			continue
		}
		for c, ch := range pl.Channels {
			for i, st := range ch.Steps {
				fmt.Fprintf(tw, "%d\t%d\t%d\t%v\t%d\t%s\t%s\t%d\t%d\t%d\t%d\t\n", r, c, i, st.Prim, st.Chunk,
					peer(st.RecvPeer), peer(st.SendPeer), st.InOff, st.OutOff, st.Count, st.SliceLen)
			}
		}
	}
	return tw.Flush()
}

func peer(p int32) string {
	if p < 0 {
		return "-"
	}
	return fmt.Sprint(p)
}
