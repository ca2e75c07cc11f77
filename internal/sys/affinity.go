package sys

import "golang.org/x/sys/unix"

// Affinity returns the CPUs this thread may run on (a process's threads
// share its main thread's unless one was set apart), ascending.
func Affinity() ([]int, error) {
	var set unix.CPUSet
	if err := unix.SchedGetaffinity(0, &set); err != nil {
		return nil, err
	}
	var cpus []int
	for c := range len(set) * 64 {
		if set.IsSet(c) {
			cpus = append(cpus, c)
		}
	}
	return cpus, nil
}
