package bench

import (
	"bufio"
	"fmt"
	"io"
	"strconv"
	"strings"
)

// ParseTable reads the data rows of an nccl-tests table (as nccl-tests'
// *_perf programs and ringo bench print it): size, count, type, redop,
// root, then time, algbw, busbw and #wrong out of place and in place
// (ringo's in-place sendrecv and alltoall, not run, N/A in all four).
// Comment lines and anything that is not a data row are skipped.
func ParseTable(r io.Reader) ([]Row, error) {
	var rows []Row
	sc := bufio.NewScanner(r)
	sc.Buffer(make([]byte, 1<<16), 1<<20)
	for sc.Scan() {
		f := strings.Fields(sc.Text())
		if len(f) < 13 || strings.HasPrefix(f[0], "#") {
			continue
		}
		size, err1 := strconv.ParseInt(f[0], 10, 64)
		count, err2 := strconv.ParseInt(f[1], 10, 64)
		root, err3 := strconv.Atoi(f[4])
		if err1 != nil || err2 != nil || err3 != nil {
			continue
		}
		row := Row{Bytes: size, Count: count, Type: f[2], Op: f[3], Root: root}
		var err error
		if row.OutOfPlace, err = parseMeasure(f[5:9]); err != nil {
			return nil, fmt.Errorf("row %q: %w", sc.Text(), err)
		}
		if row.InPlace, err = parseMeasure(f[9:13]); err != nil {
			return nil, fmt.Errorf("row %q: %w", sc.Text(), err)
		}
		rows = append(rows, row)
	}
	return rows, sc.Err()
}

// parseMeasure parses time, algbw, busbw and #wrong; N/A in all four is
// a measure not run (notRun), N/A in #wrong alone one not checked.
func parseMeasure(f []string) (Measure, error) {
	if f[0] == "N/A" && f[1] == "N/A" && f[2] == "N/A" && f[3] == "N/A" {
		return notRun, nil
	}
	var m Measure
	var err error
	if m.TimeUs, err = strconv.ParseFloat(f[0], 64); err != nil {
		return m, err
	}
	if m.AlgBW, err = strconv.ParseFloat(f[1], 64); err != nil {
		return m, err
	}
	if m.BusBW, err = strconv.ParseFloat(f[2], 64); err != nil {
		return m, err
	}
	if f[3] == "N/A" {
		m.Wrong = -1
	} else if m.Wrong, err = strconv.ParseInt(f[3], 10, 64); err != nil {
		return m, err
	}
	return m, nil
}

// WriteComparison prints, for every size both tables have, the out-of-place
// bus bandwidth and time of each and the ratio b/a, and reports how many
// sizes it compared.
func WriteComparison(w io.Writer, aName, bName string, a, b []Row) int {
	fmt.Fprintf(w, "#%13s %12s %12s %8s %12s %12s %8s\n", "size", aName+" busbw", bName+" busbw", "ratio", aName+" us", bName+" us", "ratio")
	pairs := sameSizes(a, b)
	for _, p := range pairs {
		ra, rb := p[0], p[1]
		bw, tm := "-", "-"
		if ra.OutOfPlace.BusBW > 0 {
			bw = fmt.Sprintf("%.3f", rb.OutOfPlace.BusBW/ra.OutOfPlace.BusBW)
		}
		if ra.OutOfPlace.TimeUs > 0 {
			tm = fmt.Sprintf("%.3f", rb.OutOfPlace.TimeUs/ra.OutOfPlace.TimeUs)
		}
		fmt.Fprintf(w, "%14d %12.2f %12.2f %8s %12.2f %12.2f %8s\n", rb.Bytes, ra.OutOfPlace.BusBW, rb.OutOfPlace.BusBW, bw,
			ra.OutOfPlace.TimeUs, rb.OutOfPlace.TimeUs, tm)
	}
	return len(pairs)
}

// sameSizes pairs every row of b with a's row of the same size, in b's
// order, leaving out the sizes a lacks.
func sameSizes(a, b []Row) [][2]Row {
	bySize := map[int64]Row{}
	for _, r := range a {
		bySize[r.Bytes] = r
	}
	var out [][2]Row
	for _, rb := range b {
		if ra, ok := bySize[rb.Bytes]; ok {
			out = append(out, [2]Row{ra, rb})
		}
	}
	return out
}

// WriteTimeComparison writes, for every size of b that a also has, both
// tables' times out of place and in place and their out-of-place algorithm
// bandwidths (N/A where not run): the comparison for a communicator of one
// rank, whose bus bandwidth is zero by definition. It returns the number of
// sizes.
func WriteTimeComparison(w io.Writer, aName, bName string, a, b []Row) int {
	fmt.Fprintf(w, "#%13s %14s %14s %14s %14s %12s %12s\n", "size", aName+" oop us", bName+" oop us",
		aName+" ip us", bName+" ip us", aName+" algbw", bName+" algbw")
	us := func(m Measure) string { return fmtRan(m, m.TimeUs) }
	bw := func(m Measure) string { return fmtRan(m, m.AlgBW) }
	pairs := sameSizes(a, b)
	for _, p := range pairs {
		ra, rb := p[0], p[1]
		fmt.Fprintf(w, "%14d %14s %14s %14s %14s %12s %12s\n", rb.Bytes, us(ra.OutOfPlace), us(rb.OutOfPlace),
			us(ra.InPlace), us(rb.InPlace), bw(ra.OutOfPlace), bw(rb.OutOfPlace))
	}
	return len(pairs)
}

// fmtRan formats v, a figure of m, with two decimals; N/A when m was not
// run.
func fmtRan(m Measure, v float64) string {
	if !m.Ran() {
		return "N/A"
	}
	return fmt.Sprintf("%.2f", v)
}
