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
	variant := fs.String("variant", "ring", "plan generator: ring, oneshot")
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
		plans, err = planAll(*coll, *ranks, *order, *size, *elt, *channels, *proto, *buff, *variant, *root)
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

// planAll plans the collective for every rank.
func planAll(coll string, n int, order, size string, elt, channels int, proto string, buff int, variant string, root int) ([]*ring.Plan, error) {
	c, err := ring.ParseCollective(coll)
	if err != nil {
		return nil, fmt.Errorf("-coll: %w", err)
	}
	p, err := ring.ParseProtocol(proto)
	if err != nil {
		return nil, fmt.Errorf("-proto: %w", err)
	}
	v, err := ring.ParseVariant(variant)
	if err != nil {
		return nil, fmt.Errorf("-variant: %w", err)
	}
	bytes, err := parseSize(size)
	if err != nil {
		return nil, fmt.Errorf("-b: %w", err)
	}
	r := ring.Identity(max(n, 0))
	if order != "" {
		o, err := intList(order)
		if err != nil {
			return nil, fmt.Errorf("-ring: %w", err)
		}
		r = ring.Ring{Order: o}
	}
	if elt < 1 {
		return nil, errors.New("-elt must be at least 1")
	}
	if buff == 0 {
		buff = gpuFIFO(p)
	}
	count := bytes / int64(elt)
	if c == ring.AllGather || c == ring.ReduceScatter {
		count /= int64(max(r.Size(), 1)) // -b counts the larger buffer
	}
	s := ring.Spec{Coll: c, Ring: r, Root: root, Count: count, EltSize: elt, Channels: channels, Proto: p, BuffSize: buff, Variant: v}
	plans := make([]*ring.Plan, r.Size())
	for rk := range plans {
		s.Rank = rk
		if plans[rk], err = ring.New(s); err != nil {
			return nil, err
		}
	}
	if len(plans) == 0 {
		return nil, fmt.Errorf("-ranks %d: need at least 1", n)
	}
	return plans, nil
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
