package kernels

import (
	"bytes"
	"encoding/binary"
	"fmt"
	"math/bits"
	"os"
	"path/filepath"
	"regexp"
	"slices"
	"strconv"
	"strings"
	"testing"

	"github.com/ringo-ccl/ringo/reduce"
	"github.com/ringo-ccl/ringo/ring"
	"github.com/ringo-ccl/ringo/ring/ringtest"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// TestFatbinHasEveryKernel: every kernel the Go side may ask for is in
// exactly one module, and every module is a compile unit. The fatbins are
// compressed, so the names cannot be searched in them; the units' sources
// must instantiate them instead (TestFatbinLock ties the modules to these
// sources, and TestGPUKernels looks every name up in the loaded modules on
// a GPU).
func TestFatbinHasEveryKernel(t *testing.T) {
	names := Collectives()
	if len(names) != 2+12*5+6+3 { // copy, p2p; type × op; sum-then-divide of the integers; wire
		t.Fatalf("%d kernel names", len(names))
	}
	units, err := filepath.Glob("src/*.cu")
	if err != nil || len(units) < 2 {
		t.Fatalf("compile units %v, %v", units, err)
	}
	var modules []string
	for _, m := range Modules() {
		if len(m.Fatbin) < 1<<11 { // upload.cu's one small kernel: ~3 KiB
			t.Errorf("module %s: fatbin of %d bytes", m.Name, len(m.Fatbin))
		}
		modules = append(modules, "src/"+m.Name+".cu")
	}
	if !slices.Equal(modules, units) {
		t.Fatalf("modules %v, compile units %v: run make kernels", modules, units)
	}
	in := map[string][]string{} // kernel name -> the units instantiating it
	for _, u := range units {
		src, err := os.ReadFile(u)
		if err != nil {
			t.Fatal(err)
		}
		for _, n := range instantiated(string(src), readLists(t)) {
			in[n] = append(in[n], u)
		}
	}
	for _, n := range names {
		if len(in[n]) != 1 {
			t.Errorf("kernel %s is instantiated in %v, want one compile unit", n, in[n])
		}
		delete(in, n)
	}
	for n, u := range in {
		t.Errorf("%v instantiates %s, a kernel package kernels does not name", u, n)
	}
	l := readLists(t)
	var on []string
	for _, n := range opNames {
		on = append(on, n)
	}
	assert.ElementsMatch(t, on, l.intOps, "reduce.cuh's operators, package kernels' opNames")
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
	require.NoError(t, err)
	if got, want := len(Names()), len(Collectives())+2+int(reduce.NumTypes)+3*(12*5+6); got != want { // + the upload and the direct all-gather, + direct in one and two shots and reduce-scatters: type × op, sum-then-divide
		t.Fatalf("%d kernel names, want %d", got, want)
	}
	for _, inst := range []string{"RINGO_FOR_TYPES(RINGO_SCALE_KERNEL, RINGO_SCALE_KERNEL)", "RINGO_FOR_FP8_TYPES(RINGO_SCALE_KERNEL)"} {
		assert.Contains(t, string(src), "\n"+inst+"\n", "onerank.cu instantiates every type's scaling kernel")
	}
	l := readLists(t)
	var listed []string
	for _, tn := range slices.Concat(l.intTypes, l.types, l.fp8) {
		listed = append(listed, "ringo_"+tn+"_scale")
	}
	var want []string
	for dt := range reduce.NumTypes {
		name, err := ScaleName(dt)
		require.NoError(t, err)
		want = append(want, name)
	}
	assert.ElementsMatch(t, want, listed, "reduce.cuh's types, package kernels' typeNames")
}

// TestDirectKernels: direct.cu instantiates a one-shot and a two-shot
// all-reduce and a reduce-scatter for every type and op Names lists, and
// one all-gather, in no other unit, and its limits and layout are package
// kernels' constants.
func TestDirectKernels(t *testing.T) {
	src, err := os.ReadFile("src/direct.cu")
	require.NoError(t, err)
	for _, inst := range []string{"RINGO_FOR_TYPES(RINGO_DIRECT_KERNELS_FOR, RINGO_DIRECT_KERNELS_FOR_INT)", "RINGO_FOR_FP8_TYPES(RINGO_DIRECT_KERNELS_FOR)"} {
		assert.Contains(t, string(src), "\n"+inst+"\n", "direct.cu instantiates every type")
	}
	l := readLists(t)
	made := map[string]bool{}
	for _, tn := range slices.Concat(l.intTypes, l.types, l.fp8) {
		ops := l.ops
		if slices.Contains(l.intTypes, tn) {
			ops = l.intOps
		}
		for _, op := range ops {
			made["ringo_"+tn+"_"+op+"_direct"] = true
			made["ringo_"+tn+"_"+op+"_twoshot"] = true
			made["ringo_"+tn+"_"+op+"_directrs"] = true
		}
	}
	made[DirectAllGatherName] = true
	assert.Contains(t, string(src), "ringo_directag(", "direct.cu defines the all-gather")
	want := map[string]bool{}
	for _, n := range Names() {
		if strings.HasSuffix(n, "_direct") || strings.HasSuffix(n, "_twoshot") || strings.HasSuffix(n, "_directrs") || n == DirectAllGatherName {
			want[n] = true
		}
	}
	assert.Equal(t, want, made)
	n, err := DirectName(reduce.BF16, reduce.DevPreMulSum, OneShot)
	require.NoError(t, err)
	assert.Equal(t, "ringo_bfloat16_premulsum_direct", n)
	n, err = DirectName(reduce.Int8, reduce.DevMax, TwoShot)
	require.NoError(t, err)
	assert.Equal(t, "ringo_int8_max_twoshot", n)
	n, err = DirectName(reduce.Int32, reduce.DevSumPostDiv, DirectReduceScatter)
	require.NoError(t, err)
	assert.Equal(t, "ringo_int32_sumpostdiv_directrs", n)
	n, err = DirectName(reduce.Float64, reduce.DevSumPostDiv, DirectAllGather)
	require.NoError(t, err)
	assert.Equal(t, DirectAllGatherName, n, "an all-gather has no type or op")
	_, err = DirectName(reduce.Float64, reduce.DevSumPostDiv, OneShot)
	assert.Error(t, err, "a float sum-then-divide")
	_, err = DirectName(reduce.Float32, reduce.DevSum, NotDirect)
	assert.ErrorContains(t, err, "no direct kernel of kind 0")
	assert.Equal(t, "direct reduce-scatter", DirectReduceScatter.String())
	assert.Equal(t, "direct kind 9", DirectKind(9).String())

	defines := map[string]int{}
	for _, m := range regexp.MustCompile(`(?m)^#define RINGO_DIRECT_([A-Z]+) (\d+)$`).FindAllStringSubmatch(string(src), -1) {
		defines[m[1]], _ = strconv.Atoi(m[2])
	}
	assert.Equal(t, map[string]int{"MAXRANKS": DirectMaxRanks, "MAXBLOCKS": DirectMaxBlocks, "THREADS": DirectThreads, "PACKS": directPacks,
		"MAXWINDOWS": DirectMaxWindows, "SLOT": DirectSlotWords, "RAW": DirectRaw, "STAGED": DirectStaged, "WINDOW": DirectWindow}, defines)
	assert.Contains(t, string(src), "sizeof(RingoDirect) == "+strconv.Itoa(DirectBytes))
	assert.Equal(t, 1<<20, DirectMaxBytes)

	for _, tc := range []struct {
		bytes int64
		grid  int
	}{{1, 1}, {8192, 1}, {8193, 2}, {256 << 10, 32}, {DirectMaxBytes, 32}} {
		assert.Equal(t, tc.grid, DirectGrid(tc.bytes), "%d bytes", tc.bytes)
	}

	b, err := EncodeDirect([]uint64{0x100, 0x200, 0x300}, 1, []int{2, 0, 1}, 0x4000)
	require.NoError(t, err)
	require.Len(t, b, DirectBytes)
	assert.Equal(t, []byte{2, 0, 1, 0, 0, 0, 0, 0}, b[8*DirectMaxRanks+8:8*DirectMaxRanks+16], "order")
	assert.Equal(t, uint64(0x4000), binary.LittleEndian.Uint64(b[8*DirectMaxRanks+16:]), "windows")
	assert.Equal(t, uint64(0x300), binary.LittleEndian.Uint64(b[16:]))
	assert.Equal(t, uint64(0), binary.LittleEndian.Uint64(b[24:]), "unused areas")
	assert.Equal(t, uint32(1), binary.LittleEndian.Uint32(b[8*DirectMaxRanks:]), "rank")
	assert.Equal(t, uint32(3), binary.LittleEndian.Uint32(b[8*DirectMaxRanks+4:]), "ranks")
	_, err = EncodeDirect(make([]uint64, DirectMaxRanks+1), 0, ring.Identity(DirectMaxRanks+1).Order, 0)
	assert.ErrorContains(t, err, "at most 8")
	_, err = EncodeDirect(make([]uint64, 2), 2, []int{0, 1}, 0)
	assert.Error(t, err)
	_, err = EncodeDirect(make([]uint64, 2), 0, []int{1, 1}, 0)
	assert.ErrorContains(t, err, "ring holds rank 1 twice")
	_, err = EncodeDirect(make([]uint64, 2), 0, []int{0}, 0)
	assert.ErrorContains(t, err, "order of 1 ranks for 2")
}

// ringTable is the connection table of rank me of rg with nch channels:
// entry c holds channel c's ends, from its predecessor and to its successor.
func ringTable(t *testing.T, rg ring.Ring, me, nch int) *Table {
	tab := new(Table)
	for c := range nch {
		prev, next := ring.Neighbours(rg, ring.RingVariant, c, me)
		require.NoError(t, tab.Add(Entry{Ch: c, Recv: prev, Send: next}))
	}
	return tab
}

func TestEncodePlan(t *testing.T) {
	p, err := ring.New(ring.Spec{Coll: ring.AllReduce, Ring: ring.Identity(3), Rank: 1, Count: 1000, EltSize: 4,
		Channels: 2, Proto: ring.Simple, BuffSize: 8 * 1024})
	require.NoError(t, err)
	b, err := EncodePlan(nil, p, ringTable(t, ring.Identity(3), 1, 2))
	require.NoError(t, err)
	total := len(p.Channels[0].Steps) + len(p.Channels[1].Steps)
	require.Len(t, b, PlanBytes(total))
	first1 := binary.LittleEndian.Uint32(b[8:])
	require.EqualValues(t, len(p.Channels[1].Steps), binary.LittleEndian.Uint32(b[12:]), "channel 1's step count")
	require.EqualValues(t, len(p.Channels[0].Steps), first1, "channel 1's first step")
	st := p.Channels[1].Steps[2]
	e := b[planHeaderBytes+(int(first1)+2)*StepBytes:]
	assert.Equal(t, uint32(st.Prim), binary.LittleEndian.Uint32(e))
	assert.Equal(t, st.InOff*4, int64(binary.LittleEndian.Uint64(e[8:])))
	assert.Equal(t, st.Count*4, int64(binary.LittleEndian.Uint64(e[24:])))
	assert.Equal(t, st.SliceLen*4, int64(binary.LittleEndian.Uint64(e[32:])))
	assert.Equal(t, [2]uint16{1, 1}, [2]uint16{binary.LittleEndian.Uint16(e[4:]), binary.LittleEndian.Uint16(e[6:])},
		"channel 1's step names its channel's entry of a ring's table")
	big := *p
	big.Channels = make([]ring.Channel, MaxChannels+1)
	_, err = EncodePlan(nil, &big, ringTable(t, ring.Identity(3), 1, 2))
	require.ErrorContains(t, err, "65 channels")
}

// TestEncodePlanAnyPeer: a step that talks to a peer off the ring names the
// entry holding that connection's end, wherever the table put it; a step
// whose connection the table lacks is refused, naming the peer.
func TestEncodePlanAnyPeer(t *testing.T) {
	rg := ring.Identity(4)
	plans, err := ringtest.DirectAllGather(ring.Spec{Coll: ring.AllGather, Ring: rg, Count: 64, EltSize: 4,
		Channels: 1, Proto: ring.Simple, BuffSize: 8 * 1024})
	require.NoError(t, err)
	p := plans[1] // sends to and receives from every other rank, on channel 0
	tab := ringTable(t, rg, 1, 1)
	_, err = EncodePlan(nil, p, tab)
	require.ErrorContains(t, err, "rank 3", "the connection to rank 3 is not in a ring table")
	require.NoError(t, tab.Add(Entry{Ch: 0, Recv: 3, Send: 3}))
	require.NoError(t, tab.Add(Entry{Ch: 0, Recv: 2, Send: 0}))
	require.Error(t, tab.Add(Entry{Ch: 0, Recv: 3, Send: -1}), "a second receive end from rank 3 on channel 0")
	b, err := EncodePlan(nil, p, tab)
	require.NoError(t, err)
	for i, st := range p.Channels[0].Steps {
		e := b[planHeaderBytes+i*StepBytes:]
		recv, send := int(binary.LittleEndian.Uint16(e[4:])), int(binary.LittleEndian.Uint16(e[6:]))
		if st.Prim.Recvs() {
			assert.Equal(t, int(st.RecvPeer), tab.Entries[recv].Recv, "step %d's receive entry", i)
		}
		if st.Prim.Sends() {
			assert.Equal(t, int(st.SendPeer), tab.Entries[send].Send, "step %d's send entry", i)
		}
	}
}

func TestGeomAndConns(t *testing.T) {
	p := &ring.Plan{SlotBytes: 524288, SlotsPerSlice: 2, SlicesPerStep: 2, Spec: ring.Spec{Proto: ring.Simple}}
	g := Geom(p)
	if uint32(g) != 524288 || byte(g>>32) != 2 || byte(g>>40) != 2 || byte(g>>48) != byte(ring.Simple) {
		t.Fatalf("geom %#x", g)
	}
	b := EncodeConns(nil, []Conn{{RecvBuf: 1, SendHead: 6, SendLL: 9, SendLL128: 11, SendPtrs: 15, RecvPtrs: 17}, {State: 7, Trace: 13}})
	if binary.LittleEndian.Uint64(b[ConnBytes+ConnTraceOffset:]) != 13 {
		t.Fatal("trace pointer not at ConnTraceOffset")
	}
	if len(b) != 2*ConnBytes || binary.LittleEndian.Uint64(b[40:]) != 6 || binary.LittleEndian.Uint64(b[64:]) != 9 ||
		binary.LittleEndian.Uint64(b[88:]) != 11 || binary.LittleEndian.Uint64(b[104:]) != 15 || binary.LittleEndian.Uint64(b[112:]) != 17 ||
		binary.LittleEndian.Uint64(b[ConnBytes+48:]) != 7 || !bytes.Equal(b[120:ConnBytes], make([]byte, ConnBytes-120)) {
		t.Fatalf("conn encoding % x", b)
	}
}

// The instantiations of ring.cuh's macros in a compile unit, and the
// kernels each makes.
var (
	forTypeRE = regexp.MustCompile(`(?m)^RINGO_KERNELS_FOR(_INT)?\((\w+),`)
	wireRE    = regexp.MustCompile(`(?m)^RINGO_WIRE_KERNEL\((\w+),`)
	plainRE   = regexp.MustCompile(`(?m)^extern "C" __global__ void __launch_bounds__\(RINGO_NTHREADS\) (\w+) RINGO_PARAMS`)
)

// lists are reduce.cuh's instantiation lists: the operators of every type
// (and of the integers), the types by kind.
type lists struct {
	ops, intOps          []string
	intTypes, types, fp8 []string
}

// readLists reads reduce.cuh's RINGO_FOR_* macros.
func readLists(t testing.TB) lists {
	src, err := os.ReadFile("src/reduce.cuh")
	require.NoError(t, err)
	body := func(name string) string { // the macro's text, its continued lines joined
		i := strings.Index(string(src), "#define "+name+"(")
		require.GreaterOrEqual(t, i, 0, "reduce.cuh defines %s", name)
		var b strings.Builder
		for _, line := range strings.Split(string(src[i:]), "\n") {
			b.WriteString(line)
			if !strings.HasSuffix(line, "\\") {
				break
			}
		}
		return b.String()
	}
	all := func(re, text string) []string {
		var out []string
		for _, m := range regexp.MustCompile(re).FindAllStringSubmatch(text, -1) {
			out = append(out, m[1])
		}
		return out
	}
	l := lists{ops: all(`K\(tname, (\w+), T, RINGO_OP_\w+\)`, body("RINGO_FOR_OPS"))}
	l.intOps = append(slices.Clone(l.ops), all(`K\(tname, (\w+), T, RINGO_OP_\w+\)`, body("RINGO_FOR_INT_OPS"))...)
	types := body("RINGO_FOR_TYPES")
	l.intTypes, l.types = all(`KINT\((\w+),`, types), all(`[^T]K\((\w+),`, types)
	l.fp8 = all(`K\((\w+),`, body("RINGO_FOR_FP8_TYPES"))
	require.NotEmpty(t, l.ops)
	require.NotEmpty(t, l.intTypes)
	require.NotEmpty(t, l.types)
	require.NotEmpty(t, l.fp8)
	return l
}

// instantiated returns the kernels the compile unit src instantiates,
// with reduce.cuh's operator lists.
func instantiated(src string, l lists) []string {
	var names []string
	for _, m := range forTypeRE.FindAllStringSubmatch(src, -1) {
		ops := l.ops
		if m[1] != "" {
			ops = l.intOps
		}
		for _, op := range ops {
			names = append(names, "ringo_"+m[2]+"_"+op)
		}
	}
	for _, re := range []*regexp.Regexp{wireRE, plainRE} {
		for _, m := range re.FindAllStringSubmatch(src, -1) {
			names = append(names, m[1])
		}
	}
	return names
}

// TestPrimCodes: common.cuh's RingoPrim codes are ring.Prim's values, name
// for name (PrimX for ring's "x"), and NumPrims counts them.
func TestPrimCodes(t *testing.T) {
	src, err := os.ReadFile(filepath.Join("src", "common.cuh"))
	require.NoError(t, err)
	codes := map[string]int{}
	for _, m := range regexp.MustCompile(`(?m)^\s+(Prim\w+|NumPrims) = (\d+),`).FindAllStringSubmatch(string(src), -1) {
		v, _ := strconv.Atoi(m[2])
		codes[m[1]] = v
	}
	n := 0
	for p := ring.Prim(0); p.Valid(); p++ {
		name := p.String()
		code, ok := codes["Prim"+strings.ToUpper(name[:1])+name[1:]]
		assert.True(t, ok && code == int(p), "ring.%s = %d: common.cuh has %d (%v)", name, p, code, ok)
		n++
	}
	assert.Equal(t, n, codes["NumPrims"], "NumPrims")
	assert.Len(t, codes, n+1, "common.cuh has primitives ring does not: %v", codes)
}

// TestProtoCodes: common.cuh's RINGO_PROTO_ codes are ring.Protocol's
// values, and its DIRECT code ProtoDirect.
func TestProtoCodes(t *testing.T) {
	src, err := os.ReadFile(filepath.Join("src", "common.cuh"))
	require.NoError(t, err)
	codes := map[string]uint32{}
	for _, m := range regexp.MustCompile(`(?m)^#define RINGO_PROTO_(\w+) (\d+)`).FindAllStringSubmatch(string(src), -1) {
		v, _ := strconv.Atoi(m[2])
		codes[m[1]] = uint32(v)
	}
	assert.Equal(t, map[string]uint32{"LL": uint32(ring.LL), "LL128": uint32(ring.LL128), "SIMPLE": uint32(ring.Simple), "DIRECT": ProtoDirect}, codes)
}

// TestEncodeSendRecv: a SendRecv step carries its slice and received bytes
// as two 32-bit numbers beside its sent bytes, and its halves' protocols
// beside its primitive (here a Simple send and an LL receive); one whose
// numbers do not fit is refused.
func TestEncodeSendRecv(t *testing.T) {
	p, err := ring.NewP2P(ring.P2PSpec{Rank: 0, Size: 2, EltSize: 2, Channels: 1, Proto: ring.Simple, BuffSize: 8 * 4096,
		LLMax: 100, LLBuffSize: 8 * 1024, Sends: []ring.Xfer{{Peer: 1, Count: 300}}, Recvs: []ring.Xfer{{Peer: 1, Off: 0, Count: 100}}})
	require.NoError(t, err)
	assert.Equal(t, uint64(1024), P2PArg(p), "an LL slot's bytes")
	tab := new(Table)
	require.NoError(t, tab.Add(Entry{Ch: 0, Recv: 1, Send: 1}))
	b, err := EncodePlan(nil, p, tab)
	require.NoError(t, err)
	found := false
	for i, st := range p.Channels[0].Steps {
		if st.Prim != ring.SendRecv {
			continue
		}
		e := b[planHeaderBytes+i*StepBytes:]
		assert.Equal(t, uint64(st.Count*2), binary.LittleEndian.Uint64(e[24:]), "sent bytes")
		assert.Equal(t, uint32(st.SliceLen*2), binary.LittleEndian.Uint32(e[32:]), "slice bytes")
		assert.Equal(t, uint32(st.RecvCount*2), binary.LittleEndian.Uint32(e[36:]), "received bytes")
		assert.Equal(t, uint32(ring.SendRecv)|uint32(ring.Simple)<<8|uint32(ring.LL)<<16, binary.LittleEndian.Uint32(e[0:]), "prim word")
		found = true
		st.RecvCount = 1 << 30 // 2 GiB of 2-byte elements
		p.Channels[0].Steps[i] = st
	}
	require.True(t, found, "no SendRecv step in %+v", p.Channels[0].Steps)
	_, err = EncodePlan(nil, p, tab)
	require.ErrorContains(t, err, "receiving 2147483648 bytes, over the 2³¹−1 bytes")
}

// TestEncodeTiles: a step in tiles (a direct send or copy of a striped
// plan) carries PrimTiles in its prim word and its stripe word — the
// tile's bytes, the tiles between its own — where a slice's bytes go
// (RINGO_PRIM_TILES in common.cuh); a SendRecv's received bytes stay
// beside it. Tiles the word cannot hold are refused.
func TestEncodeTiles(t *testing.T) {
	src, err := os.ReadFile(filepath.Join("src", "common.cuh"))
	require.NoError(t, err)
	assert.Contains(t, string(src), fmt.Sprintf("#define RINGO_PRIM_TILES (1u << %d)", bits.TrailingZeros32(PrimTiles)))
	const count = 1 << 20
	p, err := ring.NewP2P(ring.P2PSpec{Rank: 0, Size: 2, EltSize: 2, Channels: 4, Proto: ring.Simple, BuffSize: 8 * 4096,
		Direct: true, Stripe: 64 << 10, Sends: []ring.Xfer{{Peer: 1, Count: count}, {Peer: 0, Count: count}},
		Recvs: []ring.Xfer{{Peer: 1, Count: count}, {Peer: 0, Off: count, Count: count}}})
	require.NoError(t, err)
	tab := new(Table)
	for c := range 4 {
		require.NoError(t, tab.Add(Entry{Ch: c, Recv: 1, Send: 1}))
	}
	b, err := EncodePlan(nil, p, tab)
	require.NoError(t, err)
	seen := map[ring.Prim]int{}
	i := 0
	for _, ch := range p.Channels {
		for _, st := range ch.Steps {
			e := b[planHeaderBytes+i*StepBytes:]
			i++
			require.Equal(t, int64(16<<10), st.Tile, "%v: 64K elements over 4 parts", st.Prim)
			seen[st.Prim]++
			assert.Equal(t, uint32(PrimTiles), binary.LittleEndian.Uint32(e[0:])&PrimTiles, "%v's prim word", st.Prim)
			assert.Equal(t, uint32(32<<10)|4<<24, binary.LittleEndian.Uint32(e[32:]), "%v's stripe word: 32-KiB tiles, 4 apart", st.Prim)
			if st.Prim == ring.SendRecv {
				assert.Equal(t, uint32(st.RecvCount*2), binary.LittleEndian.Uint32(e[36:]), "received bytes")
			}
		}
	}
	assert.Equal(t, map[ring.Prim]int{ring.Copy: 4, ring.SendRecv: 4}, seen)
	p.Channels[0].Steps[0].Tile, p.Channels[0].Steps[0].Stride = 8<<20, 32<<20
	_, err = EncodePlan(nil, p, tab)
	require.ErrorContains(t, err, "channel 0's step 0: tiles of 16777216 bytes 4 tiles apart: the encoding holds tiles under 16 MiB, 2 to 255 apart")
}

// TestGrid: a launch has a block per channel up to the last with steps: a
// small point-to-point message, on channel 0 of 32, needs one; a
// collective's plan, every channel busy, needs them all; an empty plan one.
func TestGrid(t *testing.T) {
	small, err := ring.NewP2P(ring.P2PSpec{Rank: 0, Size: 2, EltSize: 1, Channels: 32, Proto: ring.Simple, BuffSize: 1 << 22,
		Sends: []ring.Xfer{{Peer: 1, Count: 8}}, Recvs: []ring.Xfer{{Peer: 1, Count: 8}}})
	require.NoError(t, err)
	require.Len(t, small.Channels, 32)
	assert.Equal(t, 1, Grid(small))
	big, err := ring.NewP2P(ring.P2PSpec{Rank: 0, Size: 2, EltSize: 1, Channels: 32, Proto: ring.Simple, BuffSize: 1 << 22,
		Sends: []ring.Xfer{{Peer: 1, Count: 1 << 26}}, Recvs: []ring.Xfer{{Peer: 1, Count: 1 << 26}}})
	require.NoError(t, err)
	assert.Equal(t, 32, Grid(big))
	coll, err := ring.New(ring.Spec{Coll: ring.AllReduce, Ring: ring.Identity(2), Count: 1 << 20, EltSize: 4, Channels: 4, Proto: ring.Simple, BuffSize: 1 << 22})
	require.NoError(t, err)
	assert.Equal(t, 4, Grid(coll))
	none, err := ring.NewP2P(ring.P2PSpec{Rank: 0, Size: 2, EltSize: 1, Channels: 8, Proto: ring.Simple, BuffSize: 1 << 22})
	require.NoError(t, err)
	assert.Equal(t, 1, Grid(none))
}

// TestDirectSyncStalled: a sync area's words decode at the kernel's
// offsets (direct.cu), and Stalled names the blocks that started and did
// not end and the ranks each waits for, at the stage it waits in.
func TestDirectSyncStalled(t *testing.T) {
	b := make([]byte, DirectSyncBytes)
	put := func(word int, v uint64) { binary.LittleEndian.PutUint64(b[8*word:], v) }
	const start = DirectMaxBlocks
	const mid = start + DirectMaxBlocks*DirectMaxRanks*DirectSlotWords
	const end = mid + DirectMaxBlocks*DirectMaxRanks
	slot := func(k, q int) int { return start + (k*DirectMaxRanks+q)*DirectSlotWords }
	// Rank 0 of 3. Block 0 finished epoch 4 (all flags 4): not stalled.
	// Block 1 (3 done) started epoch 4, rank 2 has not. Block 2 (3 done)
	// passed its start, waits for rank 1's end.
	put(0, 4)
	for q := range 3 {
		put(slot(0, q), 4)
		put(end+q, 4)
	}
	put(1, 3)
	put(slot(1, 0), 4)
	put(slot(1, 1), 4)
	put(slot(1, 2), 3)
	put(2, 3)
	for q := range 3 {
		put(slot(2, q), 4)
	}
	put(end+2*DirectMaxRanks+0, 4)
	put(end+2*DirectMaxRanks+1, 3)
	put(end+2*DirectMaxRanks+2, 4)
	d, err := DecodeDirectSync(b)
	require.NoError(t, err)
	assert.Equal(t, uint64(4), d.Start[1][1])
	assert.Equal(t, uint64(3), d.End[2][1])
	assert.Equal(t, "block 1 at epoch 4 waits for the start of rank 2 (at 3); block 2 at epoch 4 waits for the end of rank 1 (at 3)", d.Stalled(0, 3))
	_, err = DecodeDirectSync(b[:8])
	assert.Error(t, err)
}
