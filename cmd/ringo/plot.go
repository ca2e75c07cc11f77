package main

import (
	"flag"
	"fmt"
	"os"
	"path/filepath"
	"strings"

	"github.com/ringo-ccl/ringo/plot"
)

// plotMain is "ringo plot -o out.svg [-title T] [-metric busbw] INPUT...":
// one chart of every input's series against size. An input is a CSV file
// (ringo bench -csv, ringo sim -csv: a series per label) or an nccl-tests
// table (one series, named after the file); label=path names every series
// of that file.
func plotMain(args []string) error {
	fs := flag.NewFlagSet("plot", flag.ContinueOnError)
	out := fs.String("o", "", "write the SVG here (required)")
	title := fs.String("title", "", "chart title")
	metric := fs.String("metric", "busbw", "what to plot: busbw, algbw or time")
	fs.SetOutput(os.Stderr)
	if err := fs.Parse(args); err != nil {
		return err
	}
	if *out == "" || fs.NArg() == 0 {
		return fmt.Errorf("usage: ringo plot -o out.svg [-title T] [-metric busbw|algbw|time] [label=]INPUT...")
	}
	c := &plot.Chart{Title: *title}
	switch *metric {
	case "busbw":
	case "algbw":
		c.YLabel = "algorithm bandwidth (GB/s)"
	case "time":
		c.YLabel = "time (µs)"
	default:
		return fmt.Errorf("-metric %q: want busbw, algbw or time", *metric)
	}
	for _, arg := range fs.Args() {
		series, err := readPlotInput(arg, *metric)
		if err != nil {
			return err
		}
		c.Series = append(c.Series, series...)
	}
	f, err := os.Create(*out)
	if err != nil {
		return err
	}
	if err := c.WriteSVG(f); err != nil {
		f.Close()
		os.Remove(*out)
		return err
	}
	return f.Close()
}

// readPlotInput reads "[label=]path" into series of metric, one per label
// in the order they first appear.
func readPlotInput(arg, metric string) ([]plot.Series, error) {
	label, path, named := strings.Cut(arg, "=")
	if !named {
		label, path = strings.TrimSuffix(filepath.Base(arg), filepath.Ext(arg)), arg
	}
	pts, err := readPointsFile(path, label)
	if err != nil {
		return nil, err
	}
	var series []plot.Series
	index := map[string]int{}
	for _, p := range pts {
		name := p.Label
		if named || name == "" {
			name = label
		}
		i, ok := index[name]
		if !ok {
			i = len(series)
			index[name] = i
			series = append(series, plot.Series{Label: name})
		}
		y := p.BusBW
		switch metric {
		case "algbw":
			y = p.AlgBW
		case "time":
			y = p.TimeUs
		}
		series[i].X = append(series[i].X, float64(p.Bytes))
		series[i].Y = append(series[i].Y, y)
	}
	return series, nil
}
