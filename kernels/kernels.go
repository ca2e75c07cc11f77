// Package kernels holds ringo's CUDA kernels: the sources in src/ (one
// concept per file: common.cuh the layouts shared with Go, reduce.cuh the
// element operations and the lists of types and operators every unit
// instantiates, moves.cuh what each primitive reads and writes, copy.cuh
// the vectorized reduce-copy, prims_simple.cuh the Simple protocol,
// prims_ll.cuh and prims_ll128.cuh the lines of the two flag protocols and
// prims_flagged.cuh their step loop, ring.cuh the entry points, and the
// compile units ring_*.cu that instantiate them; onerank.cu a one-rank
// communicator's scaling kernels; direct.cu the direct all-reduce; upload.cu
// the copy of a new plan to the GPU), the
// modules nvcc makes of them (fatbin/UNIT.fatbin, one per compile unit,
// committed with fatbin.lock, the hashes of their sources; `make kernels`
// regenerates both, TestFatbinLock checks the lock without nvcc and
// `make check-kernels` rebuilds and compares), and the Go twins of the
// structures the kernels read: plan steps, connections, launch geometry.
//
// The package has no cgo and no build tag: package internal/cuda loads the
// modules, package device fills these structures.
package kernels

import (
	"embed"
	"fmt"
	"path"
	"strings"

	"github.com/ringo-ccl/ringo/reduce"
)

// Module is the kernels of one compile unit: SASS for sm_80 and sm_90 and
// PTX for compute_90, built by nvcc from src/Name.cu.
type Module struct {
	Name   string // the unit, e.g. "ring_f32"
	Fatbin []byte
}

//go:embed fatbin/*.fatbin
var fatbins embed.FS

var modules = embeddedModules()

// Modules returns ringo's kernels, one module per compile unit, in the
// order of their names. Every kernel is in exactly one of them; a device
// loads them all and finds a kernel by its name. The caller must not
// modify them.
func Modules() []Module { return modules }

func embeddedModules() []Module {
	entries, err := fatbins.ReadDir("fatbin")
	if err != nil {
		panic(err) // the embedded directory is always there
	}
	var mods []Module
	for _, e := range entries {
		b, err := fatbins.ReadFile(path.Join("fatbin", e.Name()))
		if err != nil {
			panic(err)
		}
		mods = append(mods, Module{Name: strings.TrimSuffix(e.Name(), ".fatbin"), Fatbin: b})
	}
	return mods
}

// Threads is the block size of every kernel (RINGO_NTHREADS): 512 threads
// that move data and a warp that publishes.
const Threads = 544

// MaxChannels is the most channels (blocks) a launch has (RINGO_MAXCHANNELS).
const MaxChannels = 64

// Op is an operator as the device runs it, after package reduce has lowered
// Avg to PreMulSum (floats) or SumPostDiv (integers).
type Op = reduce.DeviceOp

// P2PName is the kernel of point-to-point plans (ring.NewP2P): bytes
// only, the one kernel with SendRecv steps.
const P2PName = "ringo_p2p"

// Name returns the kernel running op on elements of type t, or the copy
// kernel when reduces is false (all-gather, broadcast).
func Name(t reduce.DataType, op Op, reduces bool) (string, error) {
	if !reduces {
		return "ringo_copy", nil
	}
	tn, ok := typeNames[t]
	if !ok {
		return "", fmt.Errorf("kernels: no kernels for datatype %v", t)
	}
	on, ok := opNames[op]
	if !ok {
		return "", fmt.Errorf("kernels: no kernel for operator %d", op)
	}
	if op == reduce.DevSumPostDiv && t.IsFloat() {
		return "", fmt.Errorf("kernels: sum-then-divide is for integers, not %v", t)
	}
	return "ringo_" + tn + "_" + on, nil
}

// WireName returns the kernel of a precision variant's sum: buffers of type
// t whose FIFOs carry wireSize-byte floats (kernels/src/wire.cuh).
func WireName(t reduce.DataType, wireSize int) (string, error) {
	for _, k := range wireKernels {
		if k.t == t && k.wire == wireSize {
			return k.name, nil
		}
	}
	return "", fmt.Errorf("kernels: no kernel sums %v over a %d-byte wire", t, wireSize)
}

var wireKernels = []struct {
	t    reduce.DataType
	wire int
	name string
}{
	{reduce.Float32, 2, "ringo_float_sum_wbfloat16"},
	{reduce.Half, 4, "ringo_half_sum_wfloat"},
	{reduce.BF16, 4, "ringo_bfloat16_sum_wfloat"},
}

var typeNames = map[reduce.DataType]string{
	reduce.Int8: "int8", reduce.Uint8: "uint8", reduce.Int32: "int32", reduce.Uint32: "uint32",
	reduce.Int64: "int64", reduce.Uint64: "uint64", reduce.Half: "half", reduce.Float32: "float",
	reduce.Float64: "double", reduce.BF16: "bfloat16", reduce.F8E4M3: "f8e4m3", reduce.F8E5M2: "f8e5m2",
}

var opNames = map[Op]string{
	reduce.DevSum: "sum", reduce.DevProd: "prod", reduce.DevMax: "max", reduce.DevMin: "min",
	reduce.DevPreMulSum: "premulsum", reduce.DevSumPostDiv: "sumpostdiv",
}

// ScaleThreads is the block size of the one-rank scaling kernels
// (kernels/src/onerank.cu).
const ScaleThreads = 512

// ScaleName returns the kernel that multiplies elements of type t by a
// PreMulSum scalar: a one-rank communicator's PreMulSum reduction.
func ScaleName(t reduce.DataType) (string, error) {
	tn, ok := typeNames[t]
	if !ok {
		return "", fmt.Errorf("kernels: no kernels for datatype %v", t)
	}
	return "ringo_" + tn + "_scale", nil
}

// UploadName is the kernel that copies a plan from pinned host memory
// into device memory (kernels/src/upload.cu): arguments the source (as the
// GPU reaches it), the destination, and the count of 16-byte packs. One
// block of UploadThreads threads.
const UploadName = "ringo_upload"

// UploadThreads is ringo_upload's block size.
const UploadThreads = 256

// Names returns every kernel the modules must contain: the collectives',
// the scaling kernels, the direct collectives and the plans' upload.
func Names() []string {
	names := append(Collectives(), UploadName, DirectAllGatherName)
	for t := range reduce.NumTypes {
		n, _ := ScaleName(t)
		names = append(names, n)
		for op := reduce.DevSum; op <= reduce.DevSumPostDiv; op++ {
			for _, k := range []DirectKind{OneShot, TwoShot, DirectReduceScatter} {
				if n, err := DirectName(t, op, k); err == nil {
					names = append(names, n)
				}
			}
		}
	}
	return names
}

// Collectives returns the kernels that run a plan: persistent, one block of
// Threads threads per channel, each waiting for its ring neighbours'.
func Collectives() []string {
	names := []string{"ringo_copy", P2PName}
	for t := range reduce.NumTypes {
		for op := reduce.DevSum; op <= reduce.DevSumPostDiv; op++ {
			if n, err := Name(t, op, true); err == nil {
				names = append(names, n)
			}
		}
	}
	for _, k := range wireKernels {
		names = append(names, k.name)
	}
	return names
}

// The direct collectives (kernels/src/direct.cu): for ranks that reach
// each other's memory, no FIFO. In one shot every rank reads every input
// and reduces its share; in two, every rank reduces its segment of the
// inputs, then reads the others' reduced segments; a reduce-scatter is two
// shots' first half, an all-gather their second. Their limits are the
// kernels'.
const (
	DirectThreads   = 512 // RINGO_DIRECT_THREADS: a block
	DirectMaxRanks  = 8   // RINGO_DIRECT_MAXRANKS
	DirectMaxBlocks = 32  // RINGO_DIRECT_MAXBLOCKS
	directPacks     = 4   // RINGO_DIRECT_PACKS: 16-byte packs a thread holds
	// DirectMaxBytes is the largest buffer a direct all-reduce takes: its
	// blocks hold their share in registers until every rank has read.
	DirectMaxBytes = DirectMaxBlocks * DirectThreads * 16 * directPacks
	// TwoShotMaxBytes is the largest buffer a two-shot all-reduce takes,
	// and the largest whole buffer (every rank's part) of a direct
	// reduce-scatter or all-gather: ranks in separate processes stage their
	// inputs (and reduced segments) in a buffer of RINGO_TWOSHOT_MAX bytes
	// of device memory.
	TwoShotMaxBytes = 16 << 20
	// directBlockBytes is what one block takes while blocks are left: a
	// pack per thread.
	directBlockBytes = DirectThreads * 16
)

// DirectKind is what a direct kernel does.
type DirectKind int

// The direct kernels; NotDirect: the call runs a plan on the ring.
const (
	NotDirect           DirectKind = iota
	OneShot                        // an all-reduce: every rank reads every input
	TwoShot                        // an all-reduce: reduce-scatter, then all-gather, by direct reads
	DirectReduceScatter            // every rank reduces its segment of every input
	DirectAllGather                // every rank copies every input
)

func (k DirectKind) String() string {
	names := [...]string{"ring", "one-shot all-reduce", "two-shot all-reduce", "direct reduce-scatter", "direct all-gather"}
	if k < 0 || int(k) >= len(names) {
		return fmt.Sprintf("direct kind %d", int(k))
	}
	return names[k]
}

// DirectAllGatherName is the direct all-gather's kernel: a copy, of any type.
const DirectAllGatherName = "ringo_directag"

// DirectName returns the direct kernel of kind k for type t and op (an
// all-gather's takes neither).
func DirectName(t reduce.DataType, op Op, k DirectKind) (string, error) {
	if k == DirectAllGather {
		return DirectAllGatherName, nil
	}
	n, err := Name(t, op, true)
	if err != nil {
		return "", err
	}
	switch k {
	case OneShot:
		return n + "_direct", nil
	case TwoShot:
		return n + "_twoshot", nil
	case DirectReduceScatter:
		return n + "_directrs", nil
	}
	return "", fmt.Errorf("kernels: no direct kernel of kind %d", int(k))
}

// DirectGrid returns the blocks of a direct collective of bytes (per rank,
// as its kind counts them: LaunchDirect's): one per
// 8 KiB, up to DirectMaxBlocks. Every rank of a
// call launches the same grid, which the blocks' epochs rely on.
func DirectGrid(bytes int64) int {
	return int(max(1, min((bytes+directBlockBytes-1)/directBlockBytes, DirectMaxBlocks)))
}
