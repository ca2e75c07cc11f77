// Command ringo is ringo's command line: benchmarks and tools.
//
//	ringo bench [flags]         sweep a collective over sizes and print nccl-tests' table
//	ringo soak [flags]          random collectives checked bit-exactly; heap, goroutines, fds flat
//	ringo compare A.txt B.txt   two such tables side by side, with ratios
//	ringo tune [-o model.json]  measure the GPU cost model (RINGO_TUNE_FILE uses it)
//	ringo plan [--show] [-json] a collective's plan, or its schedule document
//	ringo sim [flags]           predict a sweep with the cost model (package sim)
//	ringo plot -o out.svg IN... busbw-versus-size chart of CSV files and tables
//	ringo topo [-json]          the GPUs, their links and NICs, and the ring order
//
// Run "ringo bench -h" for the flags.
package main

import (
	"fmt"
	"os"
)

func main() {
	if len(os.Args) < 2 {
		usage()
		os.Exit(2)
	}
	var err error
	switch os.Args[1] {
	case "bench":
		err = benchMain(os.Args[2:])
	case "soak":
		err = soakMain(os.Args[2:])
	case "compare":
		err = compareMain(os.Args[2:])
	case "tune":
		err = tuneMain(os.Args[2:])
	case "plan":
		err = planMain(os.Args[2:])
	case "tcp":
		err = tcpMain(os.Args[2:])
	case "sim":
		err = simMain(os.Args[2:])
	case "plot":
		err = plotMain(os.Args[2:])
	case "topo":
		err = topoMain(os.Args[2:])
	case "help", "-h", "--help":
		usage()
		return
	default:
		fmt.Fprintf(os.Stderr, "ringo: unknown command %q\n", os.Args[1])
		usage()
		os.Exit(2)
	}
	if err != nil {
		fmt.Fprintln(os.Stderr, "ringo:", err)
		os.Exit(1)
	}
}

func usage() {
	fmt.Fprintln(os.Stderr, `usage: ringo <command> [flags]

commands:
  bench     sweep collectives over message sizes; prints nccl-tests' table
  soak      random collectives, each checked bit-exactly, with heap, goroutines and fds judged flat
  compare   two nccl-tests tables side by side, with ratios
  tune      measure the GPU cost model (protocols × channels) and write it as JSON
  plan      show a collective's plan — every rank's steps per channel — or its schedule document (-json)
  tcp       raw TCP throughput over loopback, both ways at once: the socket transport's anchor
  sim       predict a sweep with the cost model (alpha-beta per slice); -compare sets a measured table beside it
  plot      busbw-versus-size chart (SVG) of CSV files and nccl-tests tables
  topo      GPUs, their links and NICs like nvidia-smi topo -m (-json), and the ring order from them`)
}
