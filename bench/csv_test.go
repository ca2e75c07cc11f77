package bench

import (
	"bytes"
	"strings"
	"testing"
)

func TestPointsRoundTrip(t *testing.T) {
	rows, err := ParseTable(strings.NewReader(ncclTable))
	if err != nil {
		t.Fatal(err)
	}
	pts := Points(rows, `nccl, "default"`)
	var buf bytes.Buffer
	if err := WritePoints(&buf, pts); err != nil {
		t.Fatal(err)
	}
	if !strings.HasPrefix(buf.String(), "size_bytes,count,type,op,time_us,algbw_gbs,busbw_gbs,label\n") {
		t.Fatalf("header:\n%s", buf.String())
	}
	back, err := ReadSeries(strings.NewReader("\n  "+buf.String()), "ignored")
	if err != nil || len(back) != 3 {
		t.Fatalf("%d points, %v", len(back), err)
	}
	want := Point{Bytes: 1 << 30, Count: 268435456, Type: "float", Op: "sum", TimeUs: 3277.64, AlgBW: 327.6, BusBW: 327.6, Label: `nccl, "default"`}
	if back[2] != want {
		t.Fatalf("got %+v\nwant %+v", back[2], want)
	}
	// A table reads as points of the label given.
	tab, err := ReadSeries(strings.NewReader(ncclTable), "nccl")
	if err != nil || len(tab) != 3 || tab[1].Label != "nccl" || tab[1].BusBW != 69.56 || tab[1].TimeUs != 30.15 {
		t.Fatalf("table: %+v %v", tab, err)
	}
}

func TestReadPointsErrors(t *testing.T) {
	for _, c := range []struct{ in, want string }{
		{"size_bytes,count,type,op,time_us,algbw_gbs,label\n", `no column "busbw_gbs"`},
		{"size_bytes,count,type,op,time_us,algbw_gbs,busbw_gbs,label\n8,2,float,sum,1.0,x,0,a\n", "line 2 column algbw_gbs"},
		{"size_bytes,count,type,op,time_us,algbw_gbs,busbw_gbs,label\n8,2,float\n", "line 2 has 3 fields"},
		{"", "csv header"},
	} {
		_, err := ReadPoints(strings.NewReader(c.in))
		if err == nil || !strings.Contains(err.Error(), c.want) {
			t.Errorf("%q: %v, want an error with %q", c.in, err, c.want)
		}
	}
	// Extra columns, in another order, are fine.
	pts, err := ReadPoints(strings.NewReader("label,note,busbw_gbs,algbw_gbs,time_us,op,type,count,size_bytes\nx,hi,2,1,3,sum,float,4,16\n"))
	if err != nil || len(pts) != 1 || pts[0] != (Point{Bytes: 16, Count: 4, Type: "float", Op: "sum", TimeUs: 3, AlgBW: 1, BusBW: 2, Label: "x"}) {
		t.Fatalf("%+v %v", pts, err)
	}
}
