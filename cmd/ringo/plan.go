package main

import (
	"context"
	"errors"
	"flag"
	"fmt"
	"io"
	"os"
	"text/tabwriter"
	"time"

	"github.com/ringo-ccl/ringo"
	"github.com/ringo-ccl/ringo/bench"
	"github.com/ringo-ccl/ringo/ring"
)

// planMain prints the plan of a collective — every rank's steps per
// channel — as a table or, with -json, in the schedule format
// (ring.Schedule); with -schedule it reads such a document instead, checks
// it, and prints it the same way. With -run it runs the plans instead, on
// the host executor (Comm.RunSchedule), and checks what they compute.
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
	run := fs.Bool("run", false, "run the plans on a communicator of this process (every rank's executor, connections made as the steps need them) and check the result")
	gpus := fs.String("gpus", "", "with -run: run on these GPUs, one rank each (e.g. 0,0,0,0; default: the host executor)")
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
	if *run {
		var on []int
		if *gpus != "" {
			if on, err = parseGPUs(*gpus); err != nil {
				return err
			}
		}
		return runPlans(os.Stdout, plans, on)
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

// showPlans prints the plans as a table, one step a line (a sendRecv's
// count as sent/received).
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
				count := fmt.Sprint(st.Count)
				if st.Prim == ring.SendRecv { // sent/received
					count = fmt.Sprintf("%d/%d", st.Count, st.RecvCount)
				}
				fmt.Fprintf(tw, "%d\t%d\t%d\t%v\t%d\t%s\t%s\t%d\t%d\t%s\t%d\t\n", r, c, i, st.Prim, st.Chunk,
					peer(st.RecvPeer), peer(st.SendPeer), st.InOff, st.OutOff, count, st.SliceLen)
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

// runPlans runs every rank's plan of one collective on an in-process
// communicator whose connections fit them — host ranks, or rank r on GPU
// gpus[r] when gpus is given — with integer-valued inputs of the plans'
// element size (summed, where the collective reduces), and checks every
// rank's output against the collective's definition.
func runPlans(w io.Writer, plans []*ring.Plan, gpus []int) error {
	spec := plans[0].Spec
	n := len(plans)
	dt, ok := map[int]ringo.DataType{1: ringo.TypeUint8, 2: ringo.TypeFloat16, 4: ringo.TypeInt32, 8: ringo.TypeInt64}[spec.EltSize]
	if !ok || spec.Variant.Precision() {
		return fmt.Errorf("-run: plans of %d-byte elements (variant %v): no exact type to run them with", spec.EltSize, spec.Variant)
	}
	cfg := &ringo.Config{Channels: spec.Channels, Protocol: spec.Proto.String(), Ring: spec.Ring.Order}
	if spec.Proto == ring.LL {
		cfg.LLBuffSize = spec.BuffSize
	} else {
		cfg.BuffSize = spec.BuffSize
	}
	if gpus != nil && len(gpus) != n {
		return fmt.Errorf("-run: %d GPUs for a schedule of %d ranks", len(gpus), n)
	}
	var comms []*ringo.Comm
	var err error
	if gpus != nil {
		comms, err = ringo.NewLocalGPUs(gpus, cfg)
	} else {
		comms, err = ringo.NewLocal(n, cfg)
	}
	if err != nil {
		return fmt.Errorf("-run: %w", err)
	}
	defer func() {
		for _, c := range comms {
			c.Close()
		}
	}()
	in, out := spec.InputLen(), spec.OutputLen()
	elt := int64(spec.EltSize)
	// Small values: the sums of up to 23 ranks stay exact in every type.
	val := func(rank int, i int64) float64 { return float64((rank*7 + int(i)*3) % 11) }
	if n > 23 {
		return fmt.Errorf("-run: %d ranks; at most 23 (their sums must stay exact in %v)", n, dt)
	}
	sends, recvs := make([][]byte, n), make([][]byte, n)
	for r := range n {
		sends[r], recvs[r] = make([]byte, in*elt), make([]byte, out*elt)
		for i := range in {
			bench.Put(dt, sends[r], i, val(r, i))
		}
	}
	ctx, cancel := context.WithTimeout(context.Background(), time.Minute)
	defer cancel()
	errc := make(chan error, n)
	start := time.Now()
	for r, c := range comms {
		go func() {
			call := ringo.Call{Coll: spec.Coll, Count: spec.Count, Type: dt, Op: ringo.OpSum, Root: spec.Root, Send: sends[r], Recv: recvs[r]}
			if gpus == nil {
				errc <- c.RunSchedule(ctx, plans, call)
			} else {
				errc <- runOnGPU(ctx, c, plans, call)
			}
		}()
	}
	for range n {
		if err := <-errc; err != nil {
			return fmt.Errorf("-run: %w", err)
		}
	}
	took := time.Since(start)
	wrong := 0
	for r := range n {
		if spec.Coll == ring.Reduce && r != spec.Root {
			continue
		}
		for i := range out {
			var want float64
			switch spec.Coll {
			case ring.AllReduce, ring.Reduce:
				for q := range n {
					want += val(q, i)
				}
			case ring.ReduceScatter:
				for q := range n {
					want += val(q, int64(r)*spec.Count+i)
				}
			case ring.AllGather:
				want = val(int(i/spec.Count), i%spec.Count)
			case ring.Broadcast:
				want = val(spec.Root, i)
			}
			if got := bench.Get(dt, recvs[r], i); got != want {
				if wrong == 0 {
					fmt.Fprintf(w, "rank %d element %d: %v, want %v\n", r, i, got, want)
				}
				wrong++
			}
		}
	}
	fmt.Fprintf(w, "%v of %d elements on %d ranks (%v, %d channels, %v): %d wrong, %v\n",
		spec.Coll, spec.Count, n, spec.Proto, spec.Channels, dt, wrong, took.Round(time.Microsecond))
	if wrong > 0 {
		return fmt.Errorf("-run: %d wrong elements", wrong)
	}
	return nil
}

// runOnGPU runs rank c's plan of a schedule on its GPU: call's buffers
// copied to GPU memory and back.
func runOnGPU(ctx context.Context, c *ringo.Comm, plans []*ring.Plan, call ringo.Call) error {
	bufs := make([]ringo.DevPtr[uint8], 2)
	for i, b := range [][]byte{call.Send, call.Recv} {
		p, err := ringo.DeviceAlloc[uint8](c.GPU(), max(len(b), 1))
		if err != nil {
			return err
		}
		defer p.Free()
		if err := p.Slice(0, len(b)).CopyFrom(b); err != nil {
			return err
		}
		bufs[i] = p
	}
	s, err := ringo.NewStream(c.GPU()) // ranks sharing a GPU run their kernels side by side
	if err != nil {
		return err
	}
	defer s.Close()
	dc := ringo.DeviceCall{Coll: call.Coll, Send: bufs[0].Addr(), Recv: bufs[1].Addr(), Count: call.Count, Type: call.Type, Op: call.Op, Root: call.Root}
	if err := c.RunScheduleDevice(ctx, plans, dc, s); err != nil {
		return err
	}
	if err := c.Wait(ctx, s); err != nil {
		return err
	}
	return bufs[1].Slice(0, len(call.Recv)).CopyTo(call.Recv)
}
