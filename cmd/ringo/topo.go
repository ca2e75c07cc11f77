package main

import (
	"encoding/json"
	"flag"
	"fmt"
	"io"
	"os"

	"github.com/ringo-ccl/ringo/topo"
)

// topoMain prints this machine's topology — GPUs, their links, NICs — like
// `nvidia-smi topo -m`, or as JSON with -json, and the ring order chosen
// from it. Without GPUs it prints the NICs and says why there are none.
func topoMain(args []string) error {
	fs := flag.NewFlagSet("topo", flag.ContinueOnError)
	asJSON := fs.Bool("json", false, "print the topology, its matrix and the ring as JSON")
	fs.SetOutput(os.Stderr)
	if err := fs.Parse(args); err != nil {
		return err
	}
	if fs.NArg() > 0 {
		return fmt.Errorf("topo: unexpected argument %q", fs.Arg(0))
	}
	t, gpuErr := topo.Discover()
	var choice *topo.Choice
	if len(t.GPUs) > 0 {
		c, err := topo.Order(t)
		if err != nil {
			return err
		}
		choice = &c
	}
	if *asJSON {
		return writeTopoJSON(os.Stdout, t, choice, gpuErr)
	}
	if gpuErr != nil {
		fmt.Printf("No GPU listed: %v\n\n", gpuErr)
	}
	if len(t.NICs) == 0 {
		fmt.Print("No NIC found.\n\n")
	}
	return topo.Render(os.Stdout, t, choice)
}

// topoJSON is what `ringo topo -json` prints.
type topoJSON struct {
	Topology *topo.Topology `json:"topology"`
	Matrix   struct {
		Devices []string   `json:"devices"`
		Cells   [][]string `json:"cells"`
	} `json:"matrix"`
	Ring  *ringJSON `json:"ring,omitempty"`
	Error string    `json:"error,omitempty"` // why no GPU is listed
}

type ringJSON struct {
	GPUs          []int   `json:"gpus"` // CUDA ordinals in ring order
	BottleneckGBs float64 `json:"bottleneck_gbs"`
	TotalGBs      float64 `json:"total_gbs"`
	Nominal       bool    `json:"nominal"`
	Exact         bool    `json:"exact"`
}

func writeTopoJSON(w io.Writer, t *topo.Topology, c *topo.Choice, gpuErr error) error {
	out := topoJSON{Topology: t}
	out.Matrix.Devices, out.Matrix.Cells = t.Matrix()
	if c != nil {
		r := &ringJSON{BottleneckGBs: c.BottleneckGBs, TotalGBs: c.TotalGBs, Nominal: c.Nominal, Exact: c.Exact}
		for _, pos := range c.Ring.Order {
			r.GPUs = append(r.GPUs, t.GPUs[pos].Index)
		}
		out.Ring = r
	}
	if gpuErr != nil {
		out.Error = gpuErr.Error()
	}
	enc := json.NewEncoder(w)
	enc.SetIndent("", "  ")
	return enc.Encode(out)
}
