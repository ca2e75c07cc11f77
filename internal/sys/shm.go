package sys

import (
	"errors"
	"fmt"
	"os"
	"strings"

	"golang.org/x/sys/unix"
)

// ShmDir is where POSIX shared memory segments live.
const ShmDir = "/dev/shm"

// Segment is a shared memory segment mapped into this process.
type Segment struct {
	Name string // file name under ShmDir
	Mem  []byte
}

// CreateSegment creates /dev/shm/name (mode 0600, failing if it exists),
// sizes it to size zeroed bytes and maps it. The caller unlinks it once
// every peer has mapped it.
func CreateSegment(name string, size int) (*Segment, error) {
	if err := checkName(name); err != nil {
		return nil, err
	}
	path := ShmDir + "/" + name
	fd, err := unix.Open(path, unix.O_RDWR|unix.O_CREAT|unix.O_EXCL|unix.O_CLOEXEC, 0o600)
	if err != nil {
		return nil, fmt.Errorf("create shared memory %s: %w", path, err)
	}
	defer unix.Close(fd)
	if err := reserve(fd, path, size); err != nil {
		unix.Unlink(path)
		return nil, err
	}
	mem, err := unix.Mmap(fd, 0, size, unix.PROT_READ|unix.PROT_WRITE, unix.MAP_SHARED)
	if err != nil {
		unix.Unlink(path)
		return nil, fmt.Errorf("map shared memory %s: %w", path, err)
	}
	return &Segment{Name: name, Mem: mem}, nil
}

// reserve sizes the segment file fd (at path) to size zeroed bytes, with
// its pages reserved now. Only sized (ftruncate), a segment larger than
// what /dev/shm has left maps fine, and the first touch of a page past the
// end of the space kills the process with SIGBUS, mid-collective — as a
// container's 64-MiB /dev/shm does to many ranks. Reserved, it fails here,
// with the numbers and what to change. Where the filesystem cannot
// reserve, it is only sized.
func reserve(fd int, path string, size int) error {
	err := unix.Fallocate(fd, 0, 0, int64(size))
	switch {
	case err == nil:
		return nil
	case errors.Is(err, unix.ENOSPC):
		free := "less"
		var st unix.Statfs_t
		if unix.Fstatfs(fd, &st) == nil {
			free = fmt.Sprintf("%d bytes free of %d", uint64(st.Bavail)*uint64(st.Bsize), uint64(st.Blocks)*uint64(st.Bsize))
		}
		return fmt.Errorf("shared memory %s: %d bytes do not fit in %s (%s): enlarge it (a container's --shm-size), make the FIFOs smaller (NCCL_BUFFSIZE, NCCL_LL_BUFFSIZE), or connect through sockets (NCCL_SHM_DISABLE=1): %w",
			path, size, ShmDir, free, err)
	case errors.Is(err, unix.EOPNOTSUPP):
		if err := unix.Ftruncate(fd, int64(size)); err != nil {
			return fmt.Errorf("size shared memory %s to %d bytes: %w", path, size, err)
		}
		return nil
	}
	return fmt.Errorf("size shared memory %s to %d bytes: %w", path, size, err)
}

// OpenSegment maps the existing segment /dev/shm/name, which must hold
// exactly size bytes.
func OpenSegment(name string, size int) (*Segment, error) {
	if err := checkName(name); err != nil {
		return nil, err
	}
	path := ShmDir + "/" + name
	fd, err := unix.Open(path, unix.O_RDWR|unix.O_CLOEXEC, 0)
	if err != nil {
		return nil, fmt.Errorf("open shared memory %s: %w", path, err)
	}
	defer unix.Close(fd)
	var st unix.Stat_t
	if err := unix.Fstat(fd, &st); err != nil {
		return nil, fmt.Errorf("stat shared memory %s: %w", path, err)
	}
	if st.Size != int64(size) {
		return nil, fmt.Errorf("shared memory %s holds %d bytes, expected %d", path, st.Size, size)
	}
	mem, err := unix.Mmap(fd, 0, size, unix.PROT_READ|unix.PROT_WRITE, unix.MAP_SHARED)
	if err != nil {
		return nil, fmt.Errorf("map shared memory %s: %w", path, err)
	}
	return &Segment{Name: name, Mem: mem}, nil
}

// Unlink removes the segment's name; the mappings stay valid. Removing a
// name that is already gone is not an error.
func Unlink(name string) error {
	if err := checkName(name); err != nil {
		return err
	}
	if err := unix.Unlink(ShmDir + "/" + name); err != nil && !errors.Is(err, unix.ENOENT) {
		return fmt.Errorf("unlink shared memory %s: %w", name, err)
	}
	return nil
}

// Close unmaps the segment.
func (s *Segment) Close() error {
	if s.Mem == nil {
		return nil
	}
	err := unix.Munmap(s.Mem)
	s.Mem = nil
	return err
}

// ShmDevice returns the device number of /dev/shm: processes share memory
// through it only when they see the same one.
func ShmDevice() (uint64, error) {
	var st unix.Stat_t
	if err := unix.Stat(ShmDir, &st); err != nil {
		return 0, err
	}
	return st.Dev, nil
}

// ShmFree returns the bytes of /dev/shm that an unprivileged process may
// still fill (statfs: available blocks times block size), as now: what
// other processes reserve later does not count.
func ShmFree() (uint64, error) {
	var st unix.Statfs_t
	if err := unix.Statfs(ShmDir, &st); err != nil {
		return 0, fmt.Errorf("statfs %s: %w", ShmDir, err)
	}
	return uint64(st.Bavail) * uint64(st.Bsize), nil
}

// ListSegments returns the names in /dev/shm that start with prefix.
func ListSegments(prefix string) ([]string, error) {
	ents, err := os.ReadDir(ShmDir)
	if err != nil {
		return nil, err
	}
	var out []string
	for _, e := range ents {
		if strings.HasPrefix(e.Name(), prefix) {
			out = append(out, e.Name())
		}
	}
	return out, nil
}

func checkName(name string) error {
	if name == "" || strings.ContainsAny(name, "/\x00") || name == "." || name == ".." {
		return fmt.Errorf("bad shared memory name %q", name)
	}
	return nil
}

// Memfd is anonymous shared memory (memfd_create(2)): no name to leave
// behind, shared with another process by lending its descriptor (Lend).
type Memfd struct {
	FD  int
	Mem []byte
}

// NewMemfd makes size bytes of zeroed shared memory, reserved now, as
// segments are (a reservation that does not fit fails here, not with
// SIGBUS at a first touch), and maps it.
func NewMemfd(name string, size int) (*Memfd, error) {
	fd, err := unix.MemfdCreate(name, unix.MFD_CLOEXEC)
	if err != nil {
		return nil, fmt.Errorf("create shared memory %s: %w", name, err)
	}
	if err := reserve(fd, "memfd:"+name, size); err != nil {
		unix.Close(fd)
		return nil, err
	}
	mem, err := unix.Mmap(fd, 0, size, unix.PROT_READ|unix.PROT_WRITE, unix.MAP_SHARED)
	if err != nil {
		unix.Close(fd)
		return nil, fmt.Errorf("map shared memory %s: %w", name, err)
	}
	return &Memfd{FD: fd, Mem: mem}, nil
}

// Close unmaps the memory and closes the descriptor.
func (m *Memfd) Close() error {
	return errors.Join(unix.Munmap(m.Mem), unix.Close(m.FD))
}

// MapFD maps size bytes of the shared memory file fd, which must hold at
// least that many: another process's memory (Borrow), of a size it
// announced, checked here before anything is mapped.
func MapFD(fd int, size int) ([]byte, error) {
	var st unix.Stat_t
	if err := unix.Fstat(fd, &st); err != nil {
		return nil, fmt.Errorf("stat shared memory: %w", err)
	}
	if size <= 0 || st.Size < int64(size) {
		return nil, fmt.Errorf("shared memory of %d bytes, expected at least %d", st.Size, size)
	}
	mem, err := unix.Mmap(fd, 0, size, unix.PROT_READ|unix.PROT_WRITE, unix.MAP_SHARED)
	if err != nil {
		return nil, fmt.Errorf("map shared memory: %w", err)
	}
	return mem, nil
}

// Unmap unmaps what MapFD mapped.
func Unmap(mem []byte) error { return unix.Munmap(mem) }
