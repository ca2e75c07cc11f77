//go:build !amd64

package sys

func segmentCPU() int { return -1 }
