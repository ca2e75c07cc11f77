package bench

import (
	"encoding/csv"
	"encoding/json"
	"fmt"
	"io"
	"strconv"
)

// WriteHeader prints nccl-tests' column headers.
func WriteHeader(w io.Writer) {
	fmt.Fprintf(w, "#%67s%36s\n", "out-of-place", "in-place")
	fmt.Fprintf(w, "#%13s%14s%10s%8s%8s%9s%8s%8s%8s%9s%8s%8s%8s\n",
		"size", "count", "type", "redop", "root", "time", "algbw", "busbw", "#wrong", "time", "algbw", "busbw", "#wrong")
	fmt.Fprintf(w, "#%13s%14s%10s%8s%8s%9s%8s%8s%8s%9s%8s%8s%8s\n",
		"(B)", "(elements)", "", "", "", "(us)", "(GB/s)", "(GB/s)", "", "(us)", "(GB/s)", "(GB/s)", "")
}

// WriteRow prints one row in nccl-tests' format, followed, when the row's
// errors were measured (Options.Error), by the out-of-place and in-place
// relative RMS errors. A measure not run shows N/A throughout.
func WriteRow(w io.Writer, r Row) {
	fmt.Fprintf(w, "%14d%14d%10s%8s%8d", r.Bytes, r.Count, r.Type, r.Op, r.Root)
	for _, m := range []Measure{r.OutOfPlace, r.InPlace} {
		if !m.Ran() {
			fmt.Fprintf(w, "%9s%8s%8s%8s", "N/A", "N/A", "N/A", "N/A")
			continue
		}
		fmt.Fprintf(w, "%9s%8.2f%8.2f%8s", fmtTime(m.TimeUs), m.AlgBW, m.BusBW, fmtWrong(m.Wrong))
	}
	if r.OutOfPlace.RelErr >= 0 || r.InPlace.RelErr >= 0 {
		fmt.Fprintf(w, "  %9.3g %9.3g", r.OutOfPlace.RelErr, r.InPlace.RelErr)
	}
	fmt.Fprintln(w)
}

// WriteFooter prints nccl-tests' summary lines and reports whether every
// check passed. The average bus bandwidth is over the measures run.
func WriteFooter(w io.Writer, rows []Row) bool {
	var wrong, ran int64
	var bw float64
	for _, r := range rows {
		for _, m := range []Measure{r.OutOfPlace, r.InPlace} {
			if m.Ran() {
				wrong += max(m.Wrong, 0)
				bw += m.BusBW
				ran++
			}
		}
	}
	status := "OK"
	if wrong > 0 {
		status = "FAILED"
	}
	fmt.Fprintf(w, "# Out of bounds values : %d %s\n", wrong, status)
	if ran > 0 {
		fmt.Fprintf(w, "# Avg bus bandwidth    : %g\n", bw/float64(ran))
	}
	return wrong == 0
}

func fmtTime(us float64) string {
	switch {
	case us >= 1e7:
		return fmt.Sprintf("%.0f", us)
	case us >= 1e4:
		return fmt.Sprintf("%.1f", us)
	}
	return fmt.Sprintf("%.2f", us)
}

func fmtWrong(n int64) string {
	if n < 0 {
		return "N/A"
	}
	return strconv.FormatInt(n, 10)
}

// WriteCSV writes rows as CSV with a header line.
func WriteCSV(w io.Writer, rows []Row) error {
	cw := csv.NewWriter(w)
	cw.Write([]string{"collective", "size_bytes", "count", "type", "redop", "root",
		"oop_time_us", "oop_algbw_gbs", "oop_busbw_gbs", "oop_wrong", "ip_time_us", "ip_algbw_gbs", "ip_busbw_gbs", "ip_wrong",
		"oop_rel_err", "ip_rel_err"})
	f := func(v float64) string { return strconv.FormatFloat(v, 'f', 3, 64) }
	for _, r := range rows {
		rec := []string{r.Coll, strconv.FormatInt(r.Bytes, 10), strconv.FormatInt(r.Count, 10), r.Type, r.Op, strconv.Itoa(r.Root)}
		for _, m := range []Measure{r.OutOfPlace, r.InPlace} {
			rec = append(rec, f(m.TimeUs), f(m.AlgBW), f(m.BusBW), strconv.FormatInt(m.Wrong, 10))
		}
		for _, m := range []Measure{r.OutOfPlace, r.InPlace} {
			rec = append(rec, strconv.FormatFloat(m.RelErr, 'g', 4, 64))
		}
		cw.Write(rec)
	}
	cw.Flush()
	return cw.Error()
}

// WriteJSON writes rows as a JSON array.
func WriteJSON(w io.Writer, rows []Row) error {
	enc := json.NewEncoder(w)
	enc.SetIndent("", "  ")
	if rows == nil {
		rows = []Row{}
	}
	return enc.Encode(rows)
}
