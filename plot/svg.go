package plot

import (
	"bufio"
	"encoding/xml"
	"fmt"
	"io"
	"math"
	"sort"
	"strings"
)

// Series is one line of a chart: Y against X, X > 0 (bytes).
type Series struct {
	Label string
	X, Y  []float64
}

// Chart is a line chart with a log2 X axis of sizes and a linear Y axis.
type Chart struct {
	Title  string
	XLabel string // default "message size"
	YLabel string // default "bus bandwidth (GB/s)"
	Width  int    // pixels; default 900
	Height int    // pixels; default 560
	Series []Series
}

// palette is Tableau's ten colours, which stay apart on screen and in print.
var palette = []string{"#4e79a7", "#f28e2b", "#e15759", "#76b7b2", "#59a14f",
	"#edc948", "#b07aa1", "#ff9da7", "#9c755f", "#bab0ac"}

// Chart margins, pixels.
const (
	marginLeft   = 70
	marginRight  = 20
	marginTop    = 40
	marginBottom = 55
)

// WriteSVG renders the chart. Every series needs at least one point with
// X > 0, and X and Y of the same length; points with X ≤ 0 cannot sit on a
// log axis and are left out.
func (c *Chart) WriteSVG(w io.Writer) error {
	if len(c.Series) == 0 {
		return fmt.Errorf("plot: chart %q has no series", c.Title)
	}
	width, height := c.Width, c.Height
	if width <= 0 {
		width = 900
	}
	if height <= 0 {
		height = 560
	}
	xLabel, yLabel := c.XLabel, c.YLabel
	if xLabel == "" {
		xLabel = "message size"
	}
	if yLabel == "" {
		yLabel = "bus bandwidth (GB/s)"
	}
	lines := make([][][2]float64, len(c.Series))
	xlo, xhi, yhi := math.Inf(1), math.Inf(-1), 0.0
	for i, s := range c.Series {
		if len(s.X) != len(s.Y) {
			return fmt.Errorf("plot: series %q has %d sizes and %d values", s.Label, len(s.X), len(s.Y))
		}
		for j, x := range s.X {
			y := s.Y[j]
			if !(x > 0) || math.IsInf(x, 0) || math.IsNaN(y) || math.IsInf(y, 0) {
				continue
			}
			lines[i] = append(lines[i], [2]float64{x, y})
			xlo, xhi, yhi = min(xlo, x), max(xhi, x), max(yhi, y)
		}
		if len(lines[i]) == 0 {
			return fmt.Errorf("plot: series %q has no point with a size above 0", s.Label)
		}
		sort.SliceStable(lines[i], func(a, b int) bool { return lines[i][a][0] < lines[i][b][0] })
	}
	xticks, x0, x1 := log2Ticks(xlo, xhi, 14)
	yticks, ytop := linearTicks(yhi)
	pw, ph := float64(width-marginLeft-marginRight), float64(height-marginTop-marginBottom)
	px := func(x float64) float64 {
		return marginLeft + pw*(math.Log2(x)-math.Log2(x0))/(math.Log2(x1)-math.Log2(x0))
	}
	py := func(y float64) float64 { return marginTop + ph*(1-y/ytop) }

	b := bufio.NewWriter(w)
	p := func(format string, a ...any) { fmt.Fprintf(b, format, a...) }
	p(`<?xml version="1.0" encoding="UTF-8"?>` + "\n")
	p(`<svg xmlns="http://www.w3.org/2000/svg" width="%d" height="%d" viewBox="0 0 %d %d" font-family="sans-serif" font-size="12">`+"\n",
		width, height, width, height)
	p(`<rect width="%d" height="%d" fill="white"/>`+"\n", width, height)
	if c.Title != "" {
		p(`<text x="%.1f" y="24" text-anchor="middle" font-size="16">%s</text>`+"\n", float64(width)/2, esc(c.Title))
	}
	// Grid and ticks.
	p(`<g stroke="#e0e0e0" stroke-width="1">` + "\n")
	for _, t := range xticks {
		p(`<line x1="%.1f" y1="%d" x2="%.1f" y2="%.1f"/>`+"\n", px(t), marginTop, px(t), marginTop+ph)
	}
	for _, t := range yticks {
		p(`<line x1="%d" y1="%.1f" x2="%.1f" y2="%.1f"/>`+"\n", marginLeft, py(t), marginLeft+pw, py(t))
	}
	p("</g>\n")
	p(`<g stroke="black" stroke-width="1"><line x1="%d" y1="%.1f" x2="%.1f" y2="%.1f"/><line x1="%d" y1="%d" x2="%d" y2="%.1f"/></g>`+"\n",
		marginLeft, marginTop+ph, marginLeft+pw, marginTop+ph, marginLeft, marginTop, marginLeft, marginTop+ph)
	p(`<g text-anchor="middle">` + "\n")
	for _, t := range xticks {
		p(`<text x="%.1f" y="%.1f">%s</text>`+"\n", px(t), marginTop+ph+18, esc(SizeLabel(t)))
	}
	p(`<text x="%.1f" y="%d">%s</text>`+"\n", marginLeft+pw/2, height-12, esc(xLabel))
	p("</g>\n")
	p(`<g text-anchor="end">` + "\n")
	for _, t := range yticks {
		p(`<text x="%d" y="%.1f">%s</text>`+"\n", marginLeft-6, py(t)+4, esc(valueLabel(t)))
	}
	p("</g>\n")
	p(`<text transform="translate(16 %.1f) rotate(-90)" text-anchor="middle">%s</text>`+"\n", marginTop+ph/2, esc(yLabel))
	// Series.
	for i, pts := range lines {
		color := palette[i%len(palette)]
		var coords []string
		for _, pt := range pts {
			coords = append(coords, fmt.Sprintf("%.1f,%.1f", px(pt[0]), py(pt[1])))
		}
		p(`<polyline fill="none" stroke="%s" stroke-width="2" points="%s"/>`+"\n", color, strings.Join(coords, " "))
		p(`<g fill="%s">`, color)
		for _, pt := range pts {
			p(`<circle cx="%.1f" cy="%.1f" r="3"/>`, px(pt[0]), py(pt[1]))
		}
		p("</g>\n")
	}
	// Legend, top left inside the plot, where bandwidth curves start low.
	lx, ly := float64(marginLeft+12), float64(marginTop+12)
	longest := 0
	for _, s := range c.Series {
		longest = max(longest, len([]rune(s.Label)))
	}
	p(`<rect x="%.1f" y="%.1f" width="%d" height="%d" fill="white" fill-opacity="0.85" stroke="#999"/>`+"\n",
		lx-6, ly-6, 40+7*longest, 18*len(c.Series)+6)
	for i, s := range c.Series {
		color, y := palette[i%len(palette)], ly+float64(18*i)+6
		p(`<line x1="%.1f" y1="%.1f" x2="%.1f" y2="%.1f" stroke="%s" stroke-width="2"/><circle cx="%.1f" cy="%.1f" r="3" fill="%s"/>`,
			lx, y, lx+24, y, color, lx+12, y, color)
		p(`<text x="%.1f" y="%.1f">%s</text>`+"\n", lx+30, y+4, esc(s.Label))
	}
	p("</svg>\n")
	return b.Flush()
}

// esc escapes text for XML character data.
func esc(s string) string {
	var b strings.Builder
	xml.EscapeText(&b, []byte(s))
	return b.String()
}
