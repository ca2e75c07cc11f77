package kernels

import (
	"bytes"
	"encoding/binary"
	"os"
	"testing"

	"github.com/ringo-ccl/ringo/reduce"
	"github.com/ringo-ccl/ringo/ring"
)

// TestFatbinHasEveryKernel: every kernel the Go side may ask for is in the
// module (the names are in the fatbin's symbol tables).
func TestFatbinHasEveryKernel(t *testing.T) {
	names := Collectives()
	if len(names) != 1+12*5+6+3 {
		t.Fatalf("%d kernel names", len(names))
	}
	if len(Fatbin) < 1<<16 {
		t.Fatalf("fatbin of %d bytes", len(Fatbin))
	}
	// The fatbin is compressed, so the names cannot be searched in it; the
	// sources must declare them instead (and TestGPUKernels looks every one
	// up in the loaded module on a GPU).
	src, err := os.ReadFile("src/ring.cu")
	if err != nil {
		t.Fatal(err)
	}
	for tn := range typeNames {
		name := typeNames[tn]
		macro := "RINGO_KERNELS_FOR(" + name + ","
		if !tn.IsFloat() {
			macro = "RINGO_KERNELS_FOR_INT(" + name + ","
		}
		if !bytes.Contains(src, []byte(macro)) {
			t.Errorf("ring.cu does not instantiate %s", macro)
		}
	}
	for _, on := range opNames {
		if !bytes.Contains(src, []byte("##_"+on+",")) {
			t.Errorf("ring.cu has no %s kernels", on)
		}
	}
	for _, k := range wireKernels {
		if !bytes.Contains(src, []byte("RINGO_WIRE_KERNEL("+k.name+",")) {
			t.Errorf("ring.cu does not instantiate %s", k.name)
		}
	}
	if n, err := WireName(reduce.Float32, 2); n != "ringo_float_sum_wbfloat16" || err != nil {
		t.Fatalf("wire kernel %q, %v", n, err)
	}
	if _, err := WireName(reduce.Float32, 4); err == nil {
		t.Fatal("a float kernel over a float wire was named")
	}
	if _, err := Name(reduce.Float32, reduce.DevSumPostDiv, true); err == nil {
		t.Fatal("a float sum-then-divide kernel was named")
	}
	if n, _ := Name(reduce.Half, reduce.DevMax, true); n != "ringo_half_max" {
		t.Fatalf("name %q", n)
	}
}

// TestScaleKernels: onerank.cu instantiates a scaling kernel for every
// datatype, and Names lists them beside the collectives'.
func TestScaleKernels(t *testing.T) {
	src, err := os.ReadFile("src/onerank.cu")
	if err != nil {
		t.Fatal(err)
	}
	if got, want := len(Names()), len(Collectives())+int(reduce.NumTypes); got != want {
		t.Fatalf("%d kernel names, want %d", got, want)
	}
	for dt := range reduce.NumTypes {
		name, err := ScaleName(dt)
		if err != nil || !bytes.Contains(src, []byte("RINGO_SCALE_KERNEL("+typeNames[dt]+",")) {
			t.Errorf("no scaling kernel for %v in onerank.cu (%q, %v)", dt, name, err)
		}
	}
}

func TestEncodePlan(t *testing.T) {
	p, err := ring.New(ring.Spec{Coll: ring.AllReduce, Ring: ring.Identity(3), Rank: 1, Count: 1000, EltSize: 4,
		Channels: 2, Proto: ring.Simple, BuffSize: 8 * 1024})
	if err != nil {
		t.Fatal(err)
	}
	b, err := EncodePlan(nil, p)
	if err != nil {
		t.Fatal(err)
	}
	total := len(p.Channels[0].Steps) + len(p.Channels[1].Steps)
	if len(b) != PlanBytes(total) {
		t.Fatalf("%d bytes for %d steps", len(b), total)
	}
	first1 := binary.LittleEndian.Uint32(b[8:])
	if n := binary.LittleEndian.Uint32(b[12:]); int(n) != len(p.Channels[1].Steps) || int(first1) != len(p.Channels[0].Steps) {
		t.Fatalf("channel 1 header: first %d count %d", first1, n)
	}
	st := p.Channels[1].Steps[2]
	e := b[planHeaderBytes+(int(first1)+2)*StepBytes:]
	if binary.LittleEndian.Uint32(e) != uint32(st.Prim) || int64(binary.LittleEndian.Uint64(e[8:])) != st.InOff*4 ||
		int64(binary.LittleEndian.Uint64(e[24:])) != st.Count*4 || int64(binary.LittleEndian.Uint64(e[32:])) != st.SliceLen*4 {
		t.Fatalf("step encoding % x for %+v", e[:40], st)
	}
	big := *p
	big.Channels = make([]ring.Channel, MaxChannels+1)
	if _, err := EncodePlan(nil, &big); err == nil {
		t.Fatal("65 channels encoded")
	}
}

func TestGeomAndConns(t *testing.T) {
	p := &ring.Plan{SlotBytes: 524288, SlotsPerSlice: 2, SlicesPerStep: 2, Spec: ring.Spec{Proto: ring.Simple}}
	g := Geom(p)
	if uint32(g) != 524288 || byte(g>>32) != 2 || byte(g>>40) != 2 || byte(g>>48) != byte(ring.Simple) {
		t.Fatalf("geom %#x", g)
	}
	b := EncodeConns(nil, []Conn{{RecvBuf: 1, SendHead: 6, SendLL: 9, SendLL128: 11}, {State: 7, Trace: 13}})
	if binary.LittleEndian.Uint64(b[ConnBytes+ConnTraceOffset:]) != 13 {
		t.Fatal("trace pointer not at ConnTraceOffset")
	}
	if len(b) != 2*ConnBytes || binary.LittleEndian.Uint64(b[40:]) != 6 || binary.LittleEndian.Uint64(b[64:]) != 9 ||
		binary.LittleEndian.Uint64(b[88:]) != 11 ||
		binary.LittleEndian.Uint64(b[ConnBytes+48:]) != 7 || !bytes.Equal(b[96:ConnBytes], make([]byte, ConnBytes-96)) {
		t.Fatalf("conn encoding % x", b)
	}
}
