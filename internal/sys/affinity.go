package sys

import (
	"fmt"

	"golang.org/x/sys/unix"
)

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

// MoveTo moves the calling thread to cpu and leaves it free to run where
// it could before: it binds the thread to cpu alone, which the kernel
// does at once, then gives it back its mask. An error where cpu is not in
// the thread's mask or a call fails (the mask is restored first).
func MoveTo(cpu int) error {
	var was, only unix.CPUSet
	if err := unix.SchedGetaffinity(0, &was); err != nil {
		return err
	}
	if cpu < 0 || cpu >= len(was)*64 || !was.IsSet(cpu) {
		return fmt.Errorf("sys: cpu %d is not in this thread's affinity", cpu)
	}
	only.Set(cpu)
	err := unix.SchedSetaffinity(0, &only)
	if back := unix.SchedSetaffinity(0, &was); err == nil {
		err = back
	}
	return err
}
