package bench

import (
	"bytes"
	"strings"
	"testing"
)

// A real nccl-tests table (reference/nccl-api-surface.md §1.5), trimmed.
const ncclTable = `# nccl-tests version 2.19.6 nccl-headers=22707 nccl-library=22809
#       size         count      type   redop    root     time   algbw   busbw  #wrong     time   algbw   busbw  #wrong
#        (B)    (elements)                               (us)  (GB/s)  (GB/s)             (us)  (GB/s)  (GB/s)
           8             2     float     sum      -1    21.08    0.00    0.00       0    21.77    0.00    0.00       0
     2097152        524288     float     sum      -1    30.15   69.56   69.56       0    29.84   70.28   70.28       0
  1073741824     268435456     float     sum      -1  3277.64  327.60  327.60     N/A  3248.62  330.52  330.52       0
# Out of bounds values : 0 OK
`

func TestParseTableRoundTrip(t *testing.T) {
	rows, err := ParseTable(strings.NewReader(ncclTable))
	if err != nil || len(rows) != 3 {
		t.Fatalf("%d rows, %v", len(rows), err)
	}
	if r := rows[2]; r.Bytes != 1<<30 || r.OutOfPlace.BusBW != 327.60 || r.OutOfPlace.Wrong != -1 || r.InPlace.TimeUs != 3248.62 {
		t.Fatalf("parsed %+v", r)
	}
	var buf bytes.Buffer
	WriteHeader(&buf)
	for _, r := range rows {
		WriteRow(&buf, r)
	}
	again, err := ParseTable(&buf)
	if err != nil || len(again) != 3 || again[1] != rows[1] {
		t.Fatalf("our table does not parse back: %+v %v", again, err)
	}
	var cmp bytes.Buffer
	b := append([]Row(nil), rows...)
	b[1].OutOfPlace.BusBW *= 2
	if n := WriteComparison(&cmp, "nccl", "ringo", rows, b); n != 3 || !strings.Contains(cmp.String(), "2.000") {
		t.Fatalf("comparison of %d sizes:\n%s", n, cmp.String())
	}
}

// TestWriteTimeComparison: the one-rank comparison shows both tables'
// times, out of place and in place, and algorithm bandwidths per size.
func TestWriteTimeComparison(t *testing.T) {
	rows, err := ParseTable(strings.NewReader(ncclTable))
	if err != nil {
		t.Fatal(err)
	}
	b := append([]Row(nil), rows[1:]...)
	b[0].InPlace.TimeUs = 0.42
	var cmp bytes.Buffer
	if n := WriteTimeComparison(&cmp, "nccl", "ringo", rows, b); n != 2 {
		t.Fatalf("%d sizes:\n%s", n, cmp.String())
	}
	want := "       2097152          30.15          30.15          29.84           0.42        69.56        69.56\n"
	if !strings.Contains(cmp.String(), want) {
		t.Fatalf("comparison:\n%s\nwant a line\n%s", cmp.String(), want)
	}
}
