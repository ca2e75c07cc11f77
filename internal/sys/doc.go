// Package sys is ringo's one door to the operating system below the Go
// standard library: futexes on words of shared memory, POSIX shared
// memory segments in /dev/shm, services to other processes over Unix
// sockets and file descriptors lent through them (service.go), TCP
// options the net package lacks, and the core a thread runs on (CPU,
// MoveTo). It is the only importer of golang.org/x/sys/unix and, with internal/mem,
// the only user of unsafe outside the C and driver bindings. Linux only.
package sys
