package sim

import (
	"errors"
	"fmt"

	"github.com/ringo-ccl/ringo/ring"
)

// ErrInvalidPlans is wrapped by every error that rejects the plans given to
// Predict before they run.
var ErrInvalidPlans = errors.New("invalid plans")

// ErrUnmatched is wrapped by the errors of plans whose sends and receives do
// not pair up: a receive that never gets its data, a send never received,
// or a receive expecting another size than was sent.
var ErrUnmatched = errors.New("sends and receives do not match")

// Result is the predicted cost of one collective.
type Result struct {
	Bytes     int64   // nccl-tests' size: bytes of a rank's larger buffer
	TimeUs    float64 // launch overhead plus the last channel's finish
	AlgBW     float64 // GB/s: Bytes / TimeUs
	BusBW     float64 // GB/s: AlgBW × the collective's bus factor
	Transfers int     // slices simulated, over every rank and channel
}

// Predict simulates one collective: plans[r] is rank r's plan, and the
// plans may send to any rank, not only ring neighbours. Each rank's channel
// runs its steps in order, slice by slice; the k-th slice a rank sends to
// another on a channel is the k-th that one receives from it on that
// channel. A slice starts when its channel is free, its data has arrived
// (if it receives) and the receiver has credit for it (if it sends: a
// sender runs at most ring.NSteps FIFO slots ahead of its receiver). It
// costs α plus its bytes at the channel's rate: for a slice that sends, the
// link's capacity shared evenly by the channels whose connections carry
// data over that directed link, capped by the channel's own rate. The
// collective takes the model's launch overhead plus the time the last
// slice ends.
//
// Predict reads the plans and does not keep them; it is safe for
// concurrent use. Errors wrap ErrInvalidPlans, ErrInvalidModel or
// ErrUnmatched; an unmatched send or receive is reported, never waited for.
func Predict(plans []*ring.Plan, m *Model) (Result, error) {
	if err := checkPlans(plans); err != nil {
		return Result{}, err
	}
	if m == nil {
		return Result{}, fmt.Errorf("sim: %w: nil model", ErrInvalidModel)
	}
	if err := m.Validate(); err != nil {
		return Result{}, err
	}
	par, err := m.Params(plans[0].Spec.Proto)
	if err != nil {
		return Result{}, err
	}
	e, err := newEngine(plans)
	if err != nil {
		return Result{}, err
	}
	return e.predict(plans, par)
}

// predict runs e, made of plans, with par.
func (e *engine) predict(plans []*ring.Plan, par *Params) (Result, error) {
	end, err := e.run(par)
	if err != nil {
		return Result{}, err
	}
	s := &plans[0].Spec
	launch := par.LaunchUs + par.BlockUs*float64(len(plans[0].Channels))
	res := Result{Bytes: s.SizeBytes(), TimeUs: launch + end, Transfers: e.transfers}
	if res.TimeUs > 0 {
		res.AlgBW = float64(res.Bytes) / res.TimeUs / 1e3
		res.BusBW = res.AlgBW * s.Coll.BusFactor(len(plans))
	}
	return res, nil
}

// checkPlans checks that plans are one collective's, one per rank.
func checkPlans(plans []*ring.Plan) error {
	bad := func(format string, a ...any) error {
		return fmt.Errorf("sim: %w: %s", ErrInvalidPlans, fmt.Sprintf(format, a...))
	}
	if len(plans) == 0 {
		return bad("no plans")
	}
	for r, p := range plans {
		if p == nil {
			return bad("plans[%d] is nil", r)
		}
	}
	s0 := &plans[0].Spec
	for r, p := range plans {
		s := &p.Spec
		switch {
		case s.Rank != r:
			return bad("plans[%d] is rank %d's plan", r, s.Rank)
		case s.Coll != s0.Coll || s.Count != s0.Count || s.EltSize != s0.EltSize || s.Proto != s0.Proto:
			return bad("rank %d plans %v of %d×%d bytes with %v, rank 0 %v of %d×%d bytes with %v",
				r, s.Coll, s.Count, s.EltSize, s.Proto, s0.Coll, s0.Count, s0.EltSize, s0.Proto)
		case p.SlotsPerSlice < 1 || p.SlotsPerSlice > ring.NSteps || p.SlicesPerStep < 1:
			return bad("rank %d: %d slices per step of %d FIFO slots each, need ≥ 1 of 1…%d",
				r, p.SlicesPerStep, p.SlotsPerSlice, ring.NSteps)
		case p.SlotsPerSlice != plans[0].SlotsPerSlice:
			return bad("rank %d's slices span %d FIFO slots, rank 0's %d", r, p.SlotsPerSlice, plans[0].SlotsPerSlice)
		case s.EltSize < 1:
			return bad("rank %d: element size %d", r, s.EltSize)
		}
	}
	return nil
}
