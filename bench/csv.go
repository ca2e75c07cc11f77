package bench

import (
	"bufio"
	"bytes"
	"encoding/csv"
	"fmt"
	"io"
	"strconv"
	"strings"
)

// Point is one size of a bandwidth-versus-size series: the out-of-place
// measurement (or prediction) of one collective at one size, as
// `ringo bench -csv` and `ringo sim -csv` write it and `ringo plot` reads it.
type Point struct {
	Bytes  int64   // nccl-tests' size: bytes of a rank's larger buffer
	Count  int64   // elements of that buffer
	Type   string  // datatype, as nccl-tests names it
	Op     string  // reduction op, or "none"
	TimeUs float64 // µs
	AlgBW  float64 // GB/s
	BusBW  float64 // GB/s
	Label  string  // the series: what was measured or predicted
}

// WithTime returns p with its bandwidths computed from its time, for
// collective c on n ranks.
func (p Point) WithTime(c Coll, n int) Point {
	if p.TimeUs > 0 {
		p.AlgBW = float64(p.Bytes) / 1e3 / p.TimeUs
		p.BusBW = p.AlgBW * c.BusFactor(n)
	}
	return p
}

// PointColumns are the CSV columns of a Point, in the order WritePoints
// writes them.
var PointColumns = []string{"size_bytes", "count", "type", "op", "time_us", "algbw_gbs", "busbw_gbs", "label"}

// Points returns the out-of-place measures of rows as points of series
// label.
func Points(rows []Row, label string) []Point {
	pts := make([]Point, 0, len(rows))
	for _, r := range rows {
		m := r.OutOfPlace
		pts = append(pts, Point{Bytes: r.Bytes, Count: r.Count, Type: r.Type, Op: r.Op,
			TimeUs: m.TimeUs, AlgBW: m.AlgBW, BusBW: m.BusBW, Label: label})
	}
	return pts
}

// WritePoints writes points as CSV with a header line (PointColumns).
func WritePoints(w io.Writer, pts []Point) error {
	cw := csv.NewWriter(w)
	cw.Write(PointColumns)
	f := func(v float64) string { return strconv.FormatFloat(v, 'f', 3, 64) }
	for _, p := range pts {
		cw.Write([]string{strconv.FormatInt(p.Bytes, 10), strconv.FormatInt(p.Count, 10), p.Type, p.Op,
			f(p.TimeUs), f(p.AlgBW), f(p.BusBW), p.Label})
	}
	cw.Flush()
	return cw.Error()
}

// ReadPoints reads CSV with a header line naming at least PointColumns, in
// any order; other columns are ignored.
func ReadPoints(r io.Reader) ([]Point, error) {
	cr := csv.NewReader(r)
	cr.FieldsPerRecord = -1
	head, err := cr.Read()
	if err != nil {
		return nil, fmt.Errorf("csv header: %w", err)
	}
	col := map[string]int{}
	for i, name := range head {
		col[strings.TrimSpace(name)] = i
	}
	for _, name := range PointColumns {
		if _, ok := col[name]; !ok {
			return nil, fmt.Errorf("csv header %q has no column %q (want %s)", strings.Join(head, ","), name, strings.Join(PointColumns, ","))
		}
	}
	var pts []Point
	for line := 2; ; line++ {
		rec, err := cr.Read()
		if err == io.EOF {
			return pts, nil
		}
		if err != nil {
			return nil, err
		}
		if len(rec) < len(head) {
			return nil, fmt.Errorf("csv line %d has %d fields, the header %d", line, len(rec), len(head))
		}
		p := Point{Type: rec[col["type"]], Op: rec[col["op"]], Label: rec[col["label"]]}
		ints := []struct {
			name string
			v    *int64
		}{{"size_bytes", &p.Bytes}, {"count", &p.Count}}
		for _, c := range ints {
			if *c.v, err = strconv.ParseInt(strings.TrimSpace(rec[col[c.name]]), 10, 64); err != nil {
				return nil, fmt.Errorf("csv line %d column %s: %w", line, c.name, err)
			}
		}
		floats := []struct {
			name string
			v    *float64
		}{{"time_us", &p.TimeUs}, {"algbw_gbs", &p.AlgBW}, {"busbw_gbs", &p.BusBW}}
		for _, c := range floats {
			if *c.v, err = strconv.ParseFloat(strings.TrimSpace(rec[col[c.name]]), 64); err != nil {
				return nil, fmt.Errorf("csv line %d column %s: %w", line, c.name, err)
			}
		}
		pts = append(pts, p)
	}
}

// ReadSeries reads points from either format ringo writes: CSV as
// WritePoints writes it (recognized by its header), or an nccl-tests table
// (ParseTable), whose points are labelled label.
func ReadSeries(r io.Reader, label string) ([]Point, error) {
	br := bufio.NewReader(r)
	for {
		b, err := br.Peek(1)
		if err != nil || !bytes.ContainsAny(b, " \t\r\n") {
			break
		}
		br.ReadByte()
	}
	first, _ := br.Peek(len(PointColumns[0]))
	if string(first) == PointColumns[0] {
		return ReadPoints(br)
	}
	rows, err := ParseTable(br)
	if err != nil {
		return nil, err
	}
	return Points(rows, label), nil
}
