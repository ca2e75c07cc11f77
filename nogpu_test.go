//go:build !cuda

package ringo_test

// gpuChildMain is the GPU rank process of gpu_test.go; without the cuda tag
// there is none.
func gpuChildMain(mode string) int { return 2 }
