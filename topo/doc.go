// Package topo describes a host's GPUs and NICs and how they are connected —
// what `nvidia-smi topo -m` shows — and chooses the ring order from it.
//
// A Topology is a plain value: GPUs (name, UUID, PCI address and path,
// NUMA node, local CPUs), a GPU×GPU matrix of Links (NVLink with its link
// count, PCIe peer access, or no peer access at all, with a bandwidth where
// one is known) and NICs (RDMA devices and physical network interfaces).
// Discover fills one on this machine: GPUs and their links through package
// internal/cuda (build tag cuda; NVLink counts through NVML when
// libnvidia-ml.so.1 loads), PCI paths, NUMA nodes and NICs from sysfs
// (RDMA devices as package rdma lists them). Without the cuda tag Discover
// still lists NICs and returns an error wrapping cuda.ErrNoCUDA.
//
// Everything else is pure and runs on any machine: Render prints the
// topology like `nvidia-smi topo -m` (PCIe distances X/PIX/PXB/PHB/NODE/SYS
// derived from the devices' sysfs PCI paths), JSON encodes it, and Order /
// OrderHosts choose a ring that keeps fast links in it: the ring whose
// slowest link is fastest, then whose links add up to most — by brute force
// up to MaxExact GPUs, greedily above — and, across hosts, each host's GPUs
// consecutively so the ring crosses the network once per host, as
// package ringo's multi-process rings do.
//
// Bandwidths are per direction, in GB/s (10^9 bytes/s), as the hardware
// reports or specifies them — link rates, not measured throughput.
// Discover probes once per call; a Topology is not modified after it is
// returned and may be shared between goroutines.
package topo
