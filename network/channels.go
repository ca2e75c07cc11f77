package network

// GPUChannels is the channels of a GPU ring over the net transport unless
// configured: 64 would be 256 sockets and as many polling proxies, and 4
// already carry 12–14 GB/s over loopback on 2×H200 (BENCHMARKS.md).
const GPUChannels = 4

// HostChannels is the channels of a host ring with net links unless
// configured, for ranks whose hosts have at least cpus cores each: every
// channel's executor and proxies keep a core or two busy, so half the
// cores, from 4 to 16 (measured, 2 ranks over loopback TCP, 64 MiB–1 GiB
// all-reduce: on 2 cores 0.63 GB/s with 1 channel, 1.2–1.5 with 2 and 4; on
// 32 cores 5.7–6.2 with 4, 6.5–8.2 with 8, 8.3–10.1 with 16).
func HostChannels(cpus int) int { return min(max(cpus/2, 4), 16) }
