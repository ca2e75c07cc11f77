package ring

// SizeBytes returns the collective's size as nccl-tests' tables count it:
// the bytes of the larger of a rank's two buffers.
func (s *Spec) SizeBytes() int64 {
	return max(s.InputLen(), s.OutputLen()) * int64(s.EltSize)
}

// BusFactor returns nccl-tests' bus bandwidth factor of collective c on n
// ranks: bus bandwidth is algorithm bandwidth (SizeBytes / time) times this,
// so that a ring collective's bus bandwidth is what its busiest link
// carries: 2(n−1)/n for AllReduce, (n−1)/n for ReduceScatter and AllGather,
// 1 for Broadcast and Reduce.
func (c Collective) BusFactor(n int) float64 {
	switch c {
	case AllReduce:
		return 2 * float64(n-1) / float64(n)
	case ReduceScatter, AllGather:
		return float64(n-1) / float64(n)
	}
	return 1
}
