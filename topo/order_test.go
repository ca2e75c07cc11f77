package topo

import (
	"errors"
	"math"
	"math/rand/v2"
	"reflect"
	"strings"
	"testing"

	"github.com/ringo-ccl/ringo/internal/errs"
)

// matrix makes a topology of len(gbs) GPUs whose link i–j is NVLink when
// gbs[i][j] > 20, PCIe otherwise, at gbs[i][j] GB/s.
func matrix(gbs [][]float64) *Topology {
	n := len(gbs)
	t := &Topology{GPUs: make([]GPU, n), Links: make([][]Link, n)}
	for i := range n {
		t.GPUs[i] = GPU{Index: i}
		t.Links[i] = make([]Link, n)
		for j := range n {
			switch {
			case i == j:
				t.Links[i][j] = Link{Kind: Self}
			case gbs[i][j] > 20:
				t.Links[i][j] = Link{Kind: NVLink, NVLinks: 1, BandwidthGBs: gbs[i][j]}
			default:
				t.Links[i][j] = Link{Kind: PCIe, BandwidthGBs: gbs[i][j]}
			}
		}
	}
	return t
}

// uniform returns an n×n matrix with every link at gbs, then set.
func uniform(n int, gbs float64, set map[[2]int]float64) [][]float64 {
	m := make([][]float64, n)
	for i := range m {
		m[i] = make([]float64, n)
		for j := range m[i] {
			m[i][j] = gbs
		}
	}
	for p, v := range set {
		m[p[0]][p[1]], m[p[1]][p[0]] = v, v
	}
	return m
}

func order(t *testing.T, hosts ...*Topology) Choice {
	t.Helper()
	c, err := OrderHosts(hosts)
	if err != nil {
		t.Fatal(err)
	}
	n := 0
	for _, h := range hosts {
		n += len(h.GPUs)
	}
	if err := c.Ring.Validate(); err != nil || c.Ring.Size() != n {
		t.Fatalf("ring %v over %d GPUs: %v", c.Ring.Order, n, err)
	}
	return c
}

// TestOrderAvoidsSlowLink: the identity ring 0→1→2→3 crosses the PCIe
// links 0–1 and 2–3; 0→2→1→3 stays on NVLink.
func TestOrderAvoidsSlowLink(t *testing.T) {
	tp := matrix(uniform(4, 100, map[[2]int]float64{{0, 1}: 12, {2, 3}: 12}))
	c := order(t, tp)
	if want := []int{0, 2, 1, 3}; !reflect.DeepEqual(c.Ring.Order, want) {
		t.Errorf("order %v, want %v", c.Ring.Order, want)
	}
	if c.BottleneckGBs != 100 || c.TotalGBs != 400 || c.NetHops != 0 || c.Nominal || !c.Exact {
		t.Errorf("choice %+v", c)
	}
}

// TestOrderKeepsIdentityOnTies: when no order is better the identity
// stays, as package ringo would order ranks anyway.
func TestOrderKeepsIdentityOnTies(t *testing.T) {
	for _, n := range []int{1, 2, 3, 8, 9} {
		c := order(t, matrix(uniform(n, 478.116, nil)))
		for i, r := range c.Ring.Order {
			if r != i {
				t.Errorf("%d GPUs, all NV18: order %v, want the identity", n, c.Ring.Order)
				break
			}
		}
	}
	if c := order(t, fakeH200x2()); c.BottleneckGBs != 18*26.562 || c.TotalGBs != 18*26.562 {
		t.Errorf("two H200s: %+v", c)
	}
	if c := order(t, matrix(uniform(1, 0, nil))); c.BottleneckGBs != 0 || c.TotalGBs != 0 {
		t.Errorf("one GPU: %+v", c)
	}
}

// TestOrderSumBreaksTies: every ring has a 10 GB/s link; among them the
// one with the most bandwidth in all wins.
func TestOrderSumBreaksTies(t *testing.T) {
	m := uniform(4, 10, map[[2]int]float64{{0, 2}: 50, {2, 1}: 50, {1, 3}: 40})
	c := order(t, matrix(m))
	if want := []int{0, 2, 1, 3}; !reflect.DeepEqual(c.Ring.Order, want) || c.BottleneckGBs != 10 || c.TotalGBs != 150 {
		t.Errorf("order %v (%+v), want %v with 150 GB/s in all", c.Ring.Order, c, want)
	}
}

// TestOrderUsesSlowerDirection: a link counts at its slower direction.
func TestOrderUsesSlowerDirection(t *testing.T) {
	tp := matrix(uniform(3, 100, nil))
	tp.Links[1][2].BandwidthGBs = 5
	if c := order(t, tp); c.BottleneckGBs != 5 {
		t.Errorf("bottleneck %v, want 5", c.BottleneckGBs)
	}
}

// bestScore tries every order without pruning or symmetry: the reference.
func bestScore(w [][]float64, cycle bool) score {
	n := len(w)
	best := score{min: math.Inf(-1)}
	o := make([]int, 0, n)
	used := make([]bool, n)
	var walk func()
	walk = func() {
		if len(o) == n {
			if s := scoreOf(w, o, cycle); s.better(best) {
				best = s
			}
			return
		}
		for k := range n {
			if !used[k] {
				used[k], o = true, append(o, k)
				walk()
				used[k], o = false, o[:len(o)-1]
			}
		}
	}
	walk()
	return best
}

// TestExactOrderIsOptimal checks exactOrder against trying every order,
// on random matrices with few distinct values (many ties).
func TestExactOrderIsOptimal(t *testing.T) {
	rng := rand.New(rand.NewPCG(1, 2))
	for trial := range 300 {
		n := 2 + trial%6
		m := uniform(n, 0, nil)
		for i := range n {
			for j := i + 1; j < n; j++ {
				v := float64(1 + rng.IntN(4)*25)
				m[i][j], m[j][i] = v, v
			}
		}
		for _, cycle := range []bool{true, false} {
			o := exactOrder(m, cycle)
			got, want := scoreOf(m, o, cycle), bestScore(m, cycle)
			if got.better(want) || want.better(got) || !canonical(o, cycle) {
				t.Fatalf("n=%d cycle=%v: order %v scores %+v, best is %+v\n%v", n, cycle, o, got, want, m)
			}
		}
	}
}

// TestGreedyOrder: above MaxExact GPUs the greedy order still finds a
// ring of NVLinks when the only one is 0→5→10→3→…, and stays within
// 1% of the exhaustive search's total on small random matrices.
func TestGreedyOrder(t *testing.T) {
	const n = 12
	set := map[[2]int]float64{}
	for i := range n {
		set[[2]int{i, (i + 5) % n}] = 300
	}
	c := order(t, matrix(uniform(n, 12, set)))
	if c.Exact || c.BottleneckGBs != 300 || c.Ring.Order[0] != 0 || c.Ring.Order[1] != 5 && c.Ring.Order[1] != 7 {
		t.Errorf("choice %+v, want the NVLink ring from GPU 0", c)
	}
	rng := rand.New(rand.NewPCG(3, 4))
	for range 50 {
		m := uniform(8, 0, nil)
		for i := range 8 {
			for j := i + 1; j < 8; j++ {
				v := 10 + 90*rng.Float64()
				m[i][j], m[j][i] = v, v
			}
		}
		g := greedyOrder(m, true)
		if g[0] != 0 || !canonical(g, true) {
			t.Fatalf("greedy order %v is not canonical", g)
		}
		if got, want := scoreOf(m, g, true), bestScore(m, true); got.min < want.min*0.7 {
			t.Errorf("greedy bottleneck %.1f, best %.1f", got.min, want.min)
		}
	}
}

// TestOrderHosts: across hosts each host's GPUs are consecutive, the ring
// crosses the network exactly once per host, and inside each host the
// path avoids the slow links.
func TestOrderHosts(t *testing.T) {
	a := matrix(uniform(4, 100, map[[2]int]float64{{0, 1}: 12, {2, 3}: 12, {1, 2}: 12}))
	b := matrix(uniform(3, 50, nil))
	c := fakeH200x2()
	for _, hosts := range [][]*Topology{{a, b}, {a, b, c}, {b, b}, {c, a}} {
		ch := order(t, hosts...)
		hostOf := []int{}
		for h, tp := range hosts {
			for range tp.GPUs {
				hostOf = append(hostOf, h)
			}
		}
		crossings := 0
		for i := range ch.Ring.Size() {
			if hostOf[ch.Ring.At(i, 0)] != hostOf[ch.Ring.At(i, 1)] {
				crossings++
			}
		}
		if crossings != len(hosts) || ch.NetHops != len(hosts) {
			t.Errorf("%d hosts: ring %v crosses the network %d times (NetHops %d), want %d", len(hosts), ch.Ring.Order, crossings, ch.NetHops, len(hosts))
		}
		// Host h's ranks come in the h-th block.
		pos := 0
		for h, tp := range hosts {
			for range tp.GPUs {
				if hostOf[ch.Ring.Order[pos]] != h {
					t.Errorf("ring %v: position %d holds a rank of host %d, want host %d", ch.Ring.Order, pos, hostOf[ch.Ring.Order[pos]], h)
				}
				pos++
			}
		}
	}
	// Host a's path: the slow links 0–1, 1–2 and 2–3 all avoided.
	ch := order(t, a, b)
	if want := []int{1, 3, 0, 2, 4, 5, 6}; !reflect.DeepEqual(ch.Ring.Order, want) || ch.BottleneckGBs != 50 {
		t.Errorf("two hosts: %v (%+v), want %v with 50 GB/s the slowest", ch.Ring.Order, ch, want)
	}
}

func TestOrderNominal(t *testing.T) {
	tp := matrix(uniform(3, 100, nil))
	tp.Links[0][1], tp.Links[1][0] = Link{Kind: NVLink}, Link{Kind: NVLink}
	if c := order(t, tp); !c.Nominal || c.BottleneckGBs != nominalNVLinkGBs {
		t.Errorf("%+v: want a nominal %v GB/s", c, float64(nominalNVLinkGBs))
	}
	tp.Links[0][1], tp.Links[1][0] = Link{Kind: None}, Link{Kind: None}
	if c := order(t, tp); !c.Nominal || c.BottleneckGBs != nominalNoneGBs {
		t.Errorf("%+v: want a nominal %v GB/s", c, float64(nominalNoneGBs))
	}
}

func TestOrderRejects(t *testing.T) {
	bad := matrix(uniform(2, 10, nil))
	bad.Links[0] = bad.Links[0][:1]
	diag := matrix(uniform(2, 10, nil))
	diag.Links[1][1] = Link{Kind: NVLink, NVLinks: 1}
	for name, c := range map[string]struct {
		hosts []*Topology
		want  string
	}{
		"no host":          {nil, "no host to order"},
		"nil host":         {[]*Topology{nil}, "host 0 has no GPU"},
		"no GPU":           {[]*Topology{fakeH200x2(), {}}, "host 1 has no GPU"},
		"bad links":        {[]*Topology{bad}, "row of links has 1 entries"},
		"NVLink to itself": {[]*Topology{diag}, "link GPU1 → GPU1: kind nvlink off the diagonal, or another kind on it"},
	} {
		_, err := OrderHosts(c.hosts)
		if !errors.Is(err, errs.ErrInvalidArgument) || !strings.Contains(err.Error(), c.want) {
			t.Errorf("%s: %v, want ErrInvalidArgument saying %q", name, err, c.want)
		}
	}
}
