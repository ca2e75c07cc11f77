package peers

import (
	"context"
	"encoding/json"
	"fmt"
	"os"
	"runtime"
	"slices"

	"github.com/ringo-ccl/ringo/internal/env"
	"github.com/ringo-ccl/ringo/internal/errs"
	"github.com/ringo-ccl/ringo/internal/sys"
	"github.com/ringo-ccl/ringo/ring"
	"github.com/ringo-ccl/ringo/transport"
)

// Info is what ranks tell each other before connecting.
type Info struct {
	Host   string `json:"host"`
	Pid    int    `json:"pid"`
	ShmDev uint64 `json:"shm_dev"`
	ShmOff bool   `json:"shm_off"` // NCCL_SHM_DISABLE=1
	CPUs   int    `json:"cpus"`    // for the channels of a ring with net links
	// Affinity is the CPUs it may run on (sched_getaffinity; nil where it
	// could not tell), for whether a host's ranks outnumber the cores
	// they run on (HostCPUs).
	Affinity []int  `json:"affinity,omitempty"`
	Settings string `json:"settings"`
	// ShmFree is the bytes its /dev/shm had free when it joined (ShmFree;
	// 0 where it could not tell): host ranks in separate processes take
	// larger Simple FIFOs only where every rank of a host saw room
	// (config.Settings.FitShm).
	ShmFree  uint64 `json:"shm_free"`
	GPU      string `json:"gpu,omitempty"`      // a GPU rank's device: its UUID
	Resident int    `json:"resident,omitempty"` // a GPU rank's device: blocks of ringo's kernels it holds at once
}

// HostCPUs returns how many CPUs the ranks ps, all of one host, run on
// together: the union of their affinities — two ranks bound to a core
// each have two, ranks that all may run anywhere have the host's — or,
// where some rank could not tell its affinity, the fewest CPUs any may
// run on. Every rank that holds the same ps computes the same.
func HostCPUs(ps []Info) int {
	union := map[int]bool{}
	for _, p := range ps {
		if p.Affinity == nil {
			least := ps[0].CPUs
			for _, q := range ps {
				least = min(least, q.CPUs)
			}
			return least
		}
		for _, c := range p.Affinity {
			union[c] = true
		}
	}
	return len(union)
}

// CoreShare returns the ranks each core should hold where the ranks ps, all
// of one host, outnumber their cores and the kernel may move any of them
// to any of those cores — every rank's affinity known and the same: their
// count divided by the cores'. Else 0. Every rank that holds the same ps
// computes the same.
func CoreShare(ps []Info) int {
	for _, p := range ps {
		if p.Affinity == nil || !slices.Equal(p.Affinity, ps[0].Affinity) {
			return 0
		}
	}
	return len(ps) / len(ps[0].Affinity)
}

// SameHost reports whether two ranks can share memory.
func (p Info) SameHost(q Info) bool { return p.Host == q.Host && p.ShmDev == q.ShmDev }

// Local is what this rank tells the others beside what Exchange finds out
// itself (host, process, /dev/shm, CPUs).
type Local struct {
	Settings string // the fingerprint of its settings: every rank's must be equal
	ShmOff   bool   // NCCL_SHM_DISABLE=1
	GPU      string // a GPU rank's device: its UUID; "" for a host rank
	Resident int    // a GPU rank's device: blocks of ringo's kernels it holds at once
}

// ShmFree measures the bytes this process's /dev/shm has free
// (sys.ShmFree). Tests replace it to play a host whose /dev/shm is short;
// nothing else may.
var ShmFree = sys.ShmFree

// Exchange tells every rank about every other — host, /dev/shm device and
// its free bytes, GPU — and checks that they agree on their settings.
// Every rank calls it at once; it returns every rank's Info, by rank.
func Exchange(ctx context.Context, ex transport.Exchanger, l Local) ([]Info, error) {
	dev, err := sys.ShmDevice()
	if err != nil {
		dev = 0 // no /dev/shm: this rank shares memory with nobody
	}
	var free uint64
	if dev != 0 {
		if free, err = ShmFree(); err != nil {
			env.Info(env.SubInit|env.SubShm, "%v: counting /dev/shm as full", err)
			free = 0 // its host's ranks keep the smaller FIFOs
		}
	}
	me := Info{Host: HostID(), Pid: os.Getpid(), ShmDev: dev, ShmOff: l.ShmOff || dev == 0, CPUs: runtime.NumCPU(),
		Settings: l.Settings, ShmFree: free, GPU: l.GPU, Resident: l.Resident}
	if me.Affinity, err = sys.Affinity(); err != nil {
		me.Affinity = nil // HostCPUs counts its CPUs instead
	}
	blob, _ := json.Marshal(me)
	blobs, err := ex.AllGather(ctx, blob)
	if err != nil {
		return nil, fmt.Errorf("exchanging peer information: %w", err)
	}
	peers := make([]Info, len(blobs))
	for r, b := range blobs {
		p := &peers[r]
		if err := json.Unmarshal(b, p); err != nil {
			return nil, fmt.Errorf("rank %d sent malformed peer information: %v", r, err)
		}
		switch {
		case p.Settings != me.Settings:
			return nil, fmt.Errorf("%w: rank %d resolved its settings to %s, rank %d to %s", errs.ErrInvalidArgument, r, p.Settings, ex.Rank(), me.Settings)
		case p.ShmOff != me.ShmOff:
			return nil, fmt.Errorf("%w: rank %d has shared memory off (NCCL_SHM_DISABLE or no /dev/shm), rank %d on: set NCCL_SHM_DISABLE alike everywhere", errs.ErrInvalidArgument, r, ex.Rank())
		}
	}
	return peers, nil
}

var envHostID = env.Var{Name: "HOSTID", NCCL: true}

// HostID names the host this process runs on, for deciding which ranks can
// share memory: NCCL_HOSTID (RINGO_HOSTID) when set, as NCCL, else the
// host name.
func HostID() string {
	if v, _, ok := envHostID.Lookup(); ok && v != "" {
		return v
	}
	h, _ := os.Hostname()
	return h
}

// Ring orders the ranks host by host — hosts in the order of their lowest
// rank, ranks ascending within each — so each host's ranks are contiguous
// and a ring over h hosts crosses the network h times (once per host
// boundary: the fewest a ring can).
func Ring(peers []Info) ring.Ring {
	var hosts []Info // one representative per host, in order of first rank
	byHost := map[int][]int{}
	for r, p := range peers {
		h := -1
		for i, q := range hosts {
			if p.SameHost(q) {
				h = i
				break
			}
		}
		if h < 0 {
			h = len(hosts)
			hosts = append(hosts, p)
		}
		byHost[h] = append(byHost[h], r)
	}
	order := make([]int, 0, len(peers))
	for h := range hosts {
		order = append(order, byHost[h]...)
	}
	return ring.Ring{Order: order}
}
