package topo

import (
	"fmt"
	"io"
	"strconv"
	"strings"
	"text/tabwriter"
)

// Matrix returns the cells `nvidia-smi topo -m` shows: devices (GPU0…,
// then NIC0…) and, for each pair, X for the device itself, NV<n> for n
// NVLinks (NV? when the count was not reported), else the PCIe distance
// between them (Path; PCI when it cannot be derived).
func (t *Topology) Matrix() (names []string, cells [][]string) {
	type dev struct {
		pci PCI
		gpu int // index in GPUs; -1 for a NIC
	}
	var devs []dev
	for i, g := range t.GPUs {
		names = append(names, "GPU"+strconv.Itoa(g.Index))
		devs = append(devs, dev{g.PCI, i})
	}
	for i, n := range t.NICs {
		names = append(names, "NIC"+strconv.Itoa(i))
		devs = append(devs, dev{n.PCI, -1})
	}
	cells = make([][]string, len(devs))
	for i, a := range devs {
		cells[i] = make([]string, len(devs))
		for j, b := range devs {
			switch {
			case i == j:
				cells[i][j] = PathSelf.String()
			case a.gpu >= 0 && b.gpu >= 0 && t.Links[a.gpu][b.gpu].Kind == NVLink:
				cells[i][j] = nvLabel(t.Links[a.gpu][b.gpu])
			default:
				cells[i][j] = Path(a.pci, b.pci).String()
			}
		}
	}
	return names, cells
}

func nvLabel(l Link) string {
	if l.NVLinks == 0 {
		return "NV?"
	}
	return "NV" + strconv.Itoa(l.NVLinks)
}

const legend = `Legend:

  X    = the device itself
  NV#  = a bonded set of # NVLinks (NV? = NVLink, the number of links not reported)
  PIX  = PCIe through at most one PCIe switch
  PXB  = PCIe through several PCIe bridges, not through the host bridge
  PHB  = PCIe through a PCIe host bridge (the CPU)
  NODE = PCIe and the interconnect between host bridges within a NUMA node
  SYS  = PCIe and the SMP interconnect between NUMA nodes (UPI, xGMI)
  PCI  = PCIe, the path not known (sysfs does not show it)
`

// Render writes t as `nvidia-smi topo -m` does — the GPUs, the matrix with
// CPU and NUMA affinity, the legend, the NICs — then the GPU pairs without
// peer access, t's notes, and, when c is not nil, the ring c over t.
func Render(w io.Writer, t *Topology, c *Choice) error {
	var b strings.Builder
	for _, g := range t.GPUs {
		fmt.Fprintf(&b, "GPU%d: %s, compute capability %s, PCI %s, %s\n", g.Index, g.Name, orNA(g.CC), orNA(g.PCI.BusID), orNA(g.UUID))
	}
	if len(t.GPUs) > 0 {
		b.WriteByte('\n')
	}
	names, cells := t.Matrix()
	if len(names) > 0 {
		var m strings.Builder
		tw := tabwriter.NewWriter(&m, 0, 0, 2, ' ', 0)
		fmt.Fprintf(tw, "\t%s\tCPU Affinity\tNUMA Affinity\n", strings.Join(names, "\t"))
		for i, row := range cells {
			fmt.Fprintf(tw, "%s\t%s", names[i], strings.Join(row, "\t"))
			if i < len(t.GPUs) {
				p := t.GPUs[i].PCI
				fmt.Fprintf(tw, "\t%s\t%s", orNA(p.CPUs), numa(p.NUMA))
			}
			fmt.Fprintln(tw)
		}
		tw.Flush()
		for _, line := range strings.SplitAfter(m.String(), "\n") {
			b.WriteString(strings.TrimRight(line, " "))
		}
		b.WriteString("\n" + legend)
	}
	if len(t.NICs) > 0 {
		b.WriteString("\nNIC Legend:\n\n")
		for i, n := range t.NICs {
			fmt.Fprintf(&b, "  NIC%d: %s\n", i, describeNIC(n))
		}
	}
	if pairs := noPeerAccess(t); len(pairs) > 0 {
		fmt.Fprintf(&b, "\nNo peer access (data would go through host memory): %s\n", strings.Join(pairs, ", "))
	}
	for _, n := range t.Notes {
		fmt.Fprintf(&b, "\nNote: %s\n", n)
	}
	if c != nil {
		b.WriteString("\n" + describeRing(t, *c) + "\n")
	}
	_, err := io.WriteString(w, b.String())
	return err
}

func orNA(s string) string {
	if s == "" {
		return "N/A"
	}
	return s
}

func numa(n int) string {
	if n < 0 {
		return "N/A"
	}
	return strconv.Itoa(n)
}

func describeNIC(n NIC) string {
	var b strings.Builder
	b.WriteString(n.Name)
	if n.Kind == RDMA && n.Netdev != "" {
		fmt.Fprintf(&b, " (%s)", n.Netdev)
	}
	fmt.Fprintf(&b, ", %v, PCI %s, NUMA %s", n.Kind, orNA(n.PCI.BusID), numa(n.PCI.NUMA))
	for _, p := range n.Ports {
		fmt.Fprintf(&b, "; port %d %s", p.Port, orNA(p.State))
		if p.RateGbps > 0 {
			fmt.Fprintf(&b, " %g Gb/s", p.RateGbps)
		}
		if p.LinkLayer != "" {
			b.WriteString(" " + p.LinkLayer)
		}
	}
	return b.String()
}

// noPeerAccess lists the GPU pairs with a None link either way.
func noPeerAccess(t *Topology) []string {
	var pairs []string
	for i := range t.GPUs {
		for j := i + 1; j < len(t.GPUs); j++ {
			if t.Links[i][j].Kind == None || t.Links[j][i].Kind == None {
				pairs = append(pairs, fmt.Sprintf("GPU%d-GPU%d", t.GPUs[i].Index, t.GPUs[j].Index))
			}
		}
	}
	return pairs
}

// describeRing says which ring c is over t's GPUs and how fast its
// slowest link is.
func describeRing(t *Topology, c Choice) string {
	if len(c.Ring.Order) != len(t.GPUs) {
		return fmt.Sprintf("Ring order: %v", c.Ring.Order)
	}
	var b strings.Builder
	b.WriteString("Ring order: ")
	slow := ""
	w, _ := weights(t)
	for k, pos := range c.Ring.Order {
		fmt.Fprintf(&b, "GPU%d → ", t.GPUs[pos].Index)
		next := c.Ring.Order[(k+1)%len(c.Ring.Order)]
		if slow == "" && next != pos && !less(c.BottleneckGBs, w[pos][next]) {
			slow = linkLabel(t, pos, next)
		}
	}
	fmt.Fprintf(&b, "GPU%d", t.GPUs[c.Ring.Order[0]].Index)
	if len(t.GPUs) < 2 {
		return b.String()
	}
	fmt.Fprintf(&b, "\nSlowest link: %.1f GB/s (%s); all links: %.1f GB/s", c.BottleneckGBs, slow, c.TotalGBs)
	if c.Nominal {
		b.WriteString("\n(where a bandwidth was not reported a nominal one stood in)")
	}
	if !c.Exact {
		b.WriteString("\n(greedy order: too many GPUs to try every order)")
	}
	return b.String()
}

// linkLabel names the link between GPUs at positions i and j: NV18, PCIe
// PIX, no peer access.
func linkLabel(t *Topology, i, j int) string {
	l := t.Links[i][j]
	switch l.Kind {
	case NVLink:
		return nvLabel(l)
	case PCIe:
		return "PCIe " + Path(t.GPUs[i].PCI, t.GPUs[j].PCI).String()
	}
	return "no peer access"
}
