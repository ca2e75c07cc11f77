package network

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"strings"

	"github.com/ringo-ccl/ringo/internal/env"
	"github.com/ringo-ccl/ringo/internal/errs"
	"github.com/ringo-ccl/ringo/rdma"
	"github.com/ringo-ccl/ringo/transport"
)

// envNet is NCCL_NET: "Socket" or "IB" forces the net transport's wire.
var envNet = env.Var{Name: "NET", NCCL: true}

// Wire returns NCCL_NET in lower case: "socket", "ib", or "" when unset.
// Another name is an error, as in NCCL (no net plugin has it), wrapping
// errs.ErrInvalidArgument.
func Wire() (string, error) {
	v, name, ok := envNet.Lookup()
	force := strings.ToLower(strings.TrimSpace(v))
	if ok && force != "socket" && force != "ib" {
		return "", env.Invalid(name, v, "names no transport ringo has (want Socket or IB)")
	}
	return force, nil
}

// The RDMA hardware and its ports; tests put the fake fabric here.
var (
	hardware    = rdma.Hardware
	selectPorts = rdma.SelectPorts
)

// offer is what a rank can put on its net connections.
type offer struct {
	IB    bool   `json:"ib"`              // an RDMA port is usable here
	Why   string `json:"why,omitempty"`   // why not
	Force string `json:"force,omitempty"` // NCCL_NET, lower case
}

// wire is what carries a communicator's net connections, the same on every
// rank: sockets, or RDMA over this rank's port of prov.
type wire struct {
	ib   bool
	prov rdma.Provider
	port rdma.Port
}

// name is the wire's name in NCCL_DEBUG's channel lines, after "NET/".
func (w wire) name() string {
	if w.ib {
		return fmt.Sprintf("IB/%s:%d", w.port.Device, w.port.Port)
	}
	return "Socket"
}

// choose decides, the same on every rank (it exchanges each rank's offer
// through ex), what carries the net connections: RDMA when every rank has
// a usable port (and NCCL_NET does not say Socket), else sockets.
// NCCL_NET=IB without RDMA everywhere is an error naming a rank that lacks
// it.
func choose(ctx context.Context, ex transport.Exchanger) (w wire, err error) {
	force, err := Wire()
	if err != nil {
		return w, err
	}
	me := offer{Force: force}
	if force != "socket" {
		if w.prov, err = hardware(); err != nil {
			me.Why = err.Error()
		} else if ports, err := selectPorts(); err != nil {
			me.Why = err.Error()
			if errors.Is(err, errs.ErrInvalidArgument) && force == "" {
				// As NCCL: no IB device matches, so sockets carry the data.
				env.Warnf("%v; using sockets", err)
			}
		} else {
			me.IB, w.port = true, ports[ex.Rank()%len(ports)]
		}
	}
	blob, _ := json.Marshal(me)
	blobs, err := ex.AllGather(ctx, blob)
	if err != nil {
		return w, fmt.Errorf("exchanging net capabilities: %w", err)
	}
	w.ib = true
	for r, b := range blobs {
		if b == nil {
			continue // a rank not taking part (transport.Subset)
		}
		var o offer
		if err := json.Unmarshal(b, &o); err != nil {
			return w, fmt.Errorf("rank %d sent malformed net capabilities: %v", r, err)
		}
		if o.Force != force {
			return w, fmt.Errorf("%w: rank %d has NCCL_NET=%q, rank %d %q: set it alike everywhere", errs.ErrInvalidArgument, r, o.Force, ex.Rank(), force)
		}
		if !o.IB {
			if force == "ib" {
				return w, fmt.Errorf("%w: NCCL_NET=IB, but rank %d has no RDMA: %s", errs.ErrNotSupported, r, o.Why)
			}
			w.ib = false
		}
	}
	if !w.ib {
		w.prov, w.port = nil, rdma.Port{}
	}
	return w, nil
}
