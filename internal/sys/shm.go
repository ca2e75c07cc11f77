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
	if err := unix.Ftruncate(fd, int64(size)); err != nil {
		unix.Unlink(path)
		return nil, fmt.Errorf("size shared memory %s to %d bytes: %w", path, size, err)
	}
	mem, err := unix.Mmap(fd, 0, size, unix.PROT_READ|unix.PROT_WRITE, unix.MAP_SHARED)
	if err != nil {
		unix.Unlink(path)
		return nil, fmt.Errorf("map shared memory %s: %w", path, err)
	}
	return &Segment{Name: name, Mem: mem}, nil
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
